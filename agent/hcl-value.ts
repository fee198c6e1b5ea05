/**
 * Reads an HCL value as a workspace variable holds it when `hcl` is on (`{ a = "x", b = [1, 2] }`, a heredoc, a
 * quoted string), so the redactor knows the strings Terraform will print of it: Terraform never prints the text as
 * written, but each part on its own line of a plan or as a JSON value. Only what a variable file may hold is read:
 * literals, tuples and objects (HCL's native syntax spec, hashicorp/hcl `hclsyntax/spec.md`); an interpolation stays
 * as written. Pure.
 *
 * A parser of our own rather than a library: the npm ports of HCL compile Go's to WebAssembly (tens of megabytes for
 * the agent to load per job) or are unmaintained, and a variable's value is a small subset of the language.
 */

export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue };

/** The value `text` holds; undefined when it is not a literal value this reader understands. */
export function parseHclValue(text: string): HclValue | undefined {
  const p = new Reader(text);
  try {
    p.space();
    const v = p.value();
    p.space();
    return p.done() ? v : undefined;
  } catch (err) {
    if (err instanceof NotHcl) return undefined;
    throw err;
  }
}

/** Every quoted string and heredoc in `text`, decoded, whatever surrounds them: for a value `parseHclValue` refuses. */
export function hclStrings(text: string): string[] {
  const p = new Reader(text);
  const out: string[] = [];
  while (!p.done()) {
    try {
      if (p.peek() === '"') out.push(p.quoted());
      else if (p.startsWith("<<")) out.push(p.heredoc());
      else if (!p.comment()) p.skip();
    } catch (err) {
      if (!(err instanceof NotHcl)) throw err;
      p.skip();
    }
  }
  return out;
}

class NotHcl extends Error {}

const IDENT_START = /[\p{L}_]/u;
const IDENT = /[\p{L}\p{N}_-]/u;
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;

class Reader {
  private i = 0;
  private readonly s: string;

  constructor(s: string) {
    this.s = s;
  }

  done(): boolean {
    return this.i >= this.s.length;
  }

  peek(): string {
    return this.s[this.i] ?? "";
  }

  startsWith(t: string): boolean {
    return this.s.startsWith(t, this.i);
  }

  skip(): void {
    this.i++;
  }

  private expect(t: string): void {
    if (!this.startsWith(t)) throw new NotHcl();
    this.i += t.length;
  }

  /** Skips one comment; false when there is none here. */
  comment(): boolean {
    if (this.peek() === "#" || this.startsWith("//")) {
      const nl = this.s.indexOf("\n", this.i);
      this.i = nl === -1 ? this.s.length : nl + 1;
      return true;
    }
    if (this.startsWith("/*")) {
      const end = this.s.indexOf("*/", this.i + 2);
      this.i = end === -1 ? this.s.length : end + 2;
      return true;
    }
    return false;
  }

  /** Whitespace, newlines and comments. */
  space(): void {
    for (;;) {
      while (/\s/.test(this.peek()) && !this.done()) this.i++;
      if (!this.comment()) return;
    }
  }

  value(): HclValue {
    const c = this.peek();
    if (c === '"') return this.quoted();
    if (this.startsWith("<<")) return this.heredoc();
    if (c === "[") return this.tuple();
    if (c === "{") return this.object();
    const n = NUMBER.exec(this.s.slice(this.i, this.i + 64));
    if (n) {
      this.i += n[0].length;
      return Number(n[0]);
    }
    const word = this.identifier();
    if (word === "true") return true;
    if (word === "false") return false;
    if (word === "null") return null;
    throw new NotHcl();
  }

  private identifier(): string {
    if (!IDENT_START.test(this.peek())) throw new NotHcl();
    const start = this.i;
    while (!this.done() && IDENT.test(this.peek())) this.i++;
    return this.s.slice(start, this.i);
  }

  private tuple(): HclValue[] {
    this.expect("[");
    const out: HclValue[] = [];
    for (;;) {
      this.space();
      if (this.peek() === "]") break;
      out.push(this.value());
      this.space();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== "]") throw new NotHcl();
    }
    this.i++;
    return out;
  }

  private object(): { [key: string]: HclValue } {
    this.expect("{");
    const out: { [key: string]: HclValue } = {};
    for (;;) {
      this.space();
      if (this.peek() === "}") break;
      let key: string;
      if (this.peek() === '"') key = this.quoted();
      else if (this.peek() === "(") {
        // A key in parentheses is an expression; one that is a literal string is all a variable file can hold.
        this.i++;
        this.space();
        key = String(this.value());
        this.space();
        this.expect(")");
      } else key = this.identifier();
      this.space();
      if (this.peek() !== "=" && this.peek() !== ":") throw new NotHcl();
      this.i++;
      this.space();
      out[key] = this.value();
      // Items are separated by a comma or a newline.
      this.space();
      if (this.peek() === ",") this.i++;
    }
    this.i++;
    return out;
  }

  /** A quoted template: escapes decoded, `$${`/`%%{` unescaped, interpolations and directives kept as written. */
  quoted(): string {
    this.expect('"');
    let out = "";
    for (;;) {
      if (this.done()) throw new NotHcl();
      const c = this.s[this.i];
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === "\n") throw new NotHcl();
      if (c === "\\") {
        const e = this.s[this.i + 1];
        const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };
        if (e !== undefined && e in simple) {
          out += simple[e];
          this.i += 2;
        } else if (e === "u" || e === "U") {
          const len = e === "u" ? 4 : 8;
          const hex = this.s.slice(this.i + 2, this.i + 2 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw new NotHcl();
          out += String.fromCodePoint(Number.parseInt(hex, 16));
          this.i += 2 + len;
        } else throw new NotHcl();
      } else if ((c === "$" || c === "%") && this.s[this.i + 1] === c && this.s[this.i + 2] === "{") {
        out += `${c}{`;
        this.i += 3;
      } else if ((c === "$" || c === "%") && this.s[this.i + 1] === "{") {
        out += this.interpolation();
      } else {
        out += c;
        this.i++;
      }
    }
  }

  /** `${ … }` or `%{ … }` as written, up to its closing brace. */
  private interpolation(): string {
    const start = this.i;
    this.i += 2;
    let depth = 1;
    while (depth > 0) {
      if (this.done()) throw new NotHcl();
      const c = this.s[this.i];
      if (c === '"') {
        this.quoted();
        continue;
      }
      if (c === "{") depth++;
      else if (c === "}") depth--;
      this.i++;
    }
    return this.s.slice(start, this.i);
  }

  /** `<<EOT` … `EOT`, or `<<-EOT` with the lines' common indentation removed; the last newline is the value's. */
  heredoc(): string {
    this.expect("<<");
    const indented = this.peek() === "-";
    if (indented) this.i++;
    const marker = this.identifier();
    const nl = this.s.indexOf("\n", this.i);
    if (nl === -1 || this.s.slice(this.i, nl).trim() !== "") throw new NotHcl();
    this.i = nl + 1;
    const lines: string[] = [];
    for (;;) {
      if (this.done()) throw new NotHcl();
      const end = this.s.indexOf("\n", this.i);
      const line = this.s.slice(this.i, end === -1 ? this.s.length : end);
      this.i = end === -1 ? this.s.length : end + 1;
      if (line.trim() === marker) break;
      lines.push(line);
    }
    let body = lines;
    if (indented) {
      const widths = lines.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)![0].length);
      const cut = widths.length ? Math.min(...widths) : 0;
      body = lines.map((l) => l.slice(cut));
    }
    return body
      .map((l) => `${l}\n`)
      .join("")
      .replace(/([$%])\1\{/g, "$1{");
  }
}
