/**
 * What the registry shows of a module version, read from its Terraform files: the inputs (variable blocks), outputs,
 * resources and provider requirements of the root module, of each `modules/<name>/` and `examples/<name>/`, and their
 * READMEs, in the shape of the module registry's module details (a version's `root`, `submodules` and `examples`).
 * A small scanner of HCL's native syntax finds top-level blocks and their attributes (strings, templates, heredocs and
 * comments skipped correctly) without evaluating anything; `.tf.json` files are read as JSON. The HCL parsers on npm
 * are the Go parser compiled to WebAssembly, megabytes for reading a few block headers.
 */

export interface ModuleInput {
  name: string;
  type: string;
  description: string;
  default: string;
  required: boolean;
  sensitive: boolean;
}
export interface ModuleOutput {
  name: string;
  description: string;
}
export interface ModulePart {
  path: string;
  name: string;
  readme: string;
  empty: boolean;
  inputs: ModuleInput[];
  outputs: ModuleOutput[];
  dependencies: Array<{ name: string; source: string; version: string }>;
  provider_dependencies: Array<{ name: string; namespace: string; source: string; version: string }>;
  resources: Array<{ name: string; type: string }>;
}
export interface ModuleDetails {
  root: ModulePart;
  submodules: ModulePart[];
  examples: ModulePart[];
}

interface Item {
  kind: "attribute" | "block";
  name: string;
  labels: string[];
  /** An attribute's expression text, or a block's body. */
  text: string;
}

/** Skips a quoted template from `i` (at its opening quote); returns the index after the closing quote. */
function skipString(s: string, i: number): number {
  i++;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else if ((c === "$" || c === "%") && s[i + 1] === "{") i = skipNested(s, i + 2, "}");
    else if (c === "\n") return i;
    else i++;
  }
  return i;
}

/** Skips a heredoc from `i` (at `<<`); returns the index after its closing marker line, or -1 if `i` starts none. */
function skipHeredoc(s: string, i: number): number {
  const m = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/.exec(s.slice(i, i + 200));
  if (!m) return -1;
  const close = new RegExp(`\\n[ \\t]*${m[1]}[ \\t]*(?=\\r?\\n|$)`, "g");
  close.lastIndex = i + m[0].length - 1;
  const found = close.exec(s);
  return found ? found.index + found[0].length : s.length;
}

/** Skips a comment at `i` if one starts there; returns the index after it, or -1. */
function skipComment(s: string, i: number): number {
  if (s[i] === "#" || (s[i] === "/" && s[i + 1] === "/")) {
    const nl = s.indexOf("\n", i);
    return nl < 0 ? s.length : nl;
  }
  if (s[i] === "/" && s[i + 1] === "*") {
    const end = s.indexOf("*/", i + 2);
    return end < 0 ? s.length : end + 2;
  }
  return -1;
}

/** Skips to the `close` that matches at depth 0 (strings, heredocs, comments and nested brackets skipped). */
function skipNested(s: string, i: number, close: string): number {
  const stack: string[] = [close];
  while (i < s.length && stack.length > 0) {
    const c = s[i];
    const comment = skipComment(s, i);
    if (comment >= 0) i = comment;
    else if (c === '"') i = skipString(s, i);
    else if (c === "<" && s[i + 1] === "<" && skipHeredoc(s, i) >= 0) i = skipHeredoc(s, i);
    else if (c === "{" || c === "[" || c === "(") {
      stack.push(c === "{" ? "}" : c === "[" ? "]" : ")");
      i++;
    } else if (c === stack.at(-1)) {
      stack.pop();
      i++;
    } else i++;
  }
  return i;
}

/** An expression from `i` to the end of its line at depth 0. */
function skipExpression(s: string, i: number): number {
  while (i < s.length && s[i] !== "\n") {
    const c = s[i];
    const comment = skipComment(s, i);
    if (comment >= 0) {
      if (s[i] === "/" && s[i + 1] === "*") i = comment;
      else return i;
    } else if (c === '"') i = skipString(s, i);
    else if (c === "<" && s[i + 1] === "<" && skipHeredoc(s, i) >= 0) return skipHeredoc(s, i);
    else if (c === "{") i = skipNested(s, i + 1, "}");
    else if (c === "[") i = skipNested(s, i + 1, "]");
    else if (c === "(") i = skipNested(s, i + 1, ")");
    else i++;
  }
  return i;
}

/** The attributes and blocks of a body (a file, or a block's inside), in order. */
export function scanItems(s: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  while (i < s.length) {
    const comment = skipComment(s, i);
    if (comment >= 0) {
      i = comment;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(s.slice(i, i + 256));
    if (!id) {
      i++;
      continue;
    }
    const name = id[0];
    i += name.length;
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === "=" && s[i + 1] !== "=") {
      const start = i + 1;
      i = skipExpression(s, start);
      items.push({ kind: "attribute", name, labels: [], text: s.slice(start, i).trim() });
      continue;
    }
    const labels: string[] = [];
    for (;;) {
      while (s[i] === " " || s[i] === "\t") i++;
      if (s[i] === '"') {
        const end = skipString(s, i);
        labels.push(unquote(s.slice(i, end)));
        i = end;
      } else {
        const label = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(s.slice(i, i + 256));
        if (!label) break;
        labels.push(label[0]);
        i += label[0].length;
      }
    }
    if (s[i] === "{") {
      const end = skipNested(s, i + 1, "}");
      items.push({ kind: "block", name, labels, text: s.slice(i + 1, Math.max(i + 1, end - 1)) });
      i = end;
    }
  }
  return items;
}

/** A quoted string literal's value (escapes resolved; templates left as written), or the text as it is. */
export function unquote(text: string): string {
  const t = text.trim();
  if (!t.startsWith('"')) {
    const heredoc = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n([\s\S]*?)\n[ \t]*\1[ \t]*$/.exec(t);
    return heredoc ? heredoc[2] : t;
  }
  const body = t.endsWith('"') && t.length >= 2 ? t.slice(1, -1) : t.slice(1);
  return body.replace(/\\(["\\nrt])/g, (_, c: string) => ({ n: "\n", r: "\r", t: "\t" })[c as "n"] ?? c);
}

const attribute = (items: Item[], name: string) => items.find((x) => x.kind === "attribute" && x.name === name)?.text;

function fromHcl(text: string, into: ModulePart): void {
  for (const item of scanItems(text)) {
    if (item.kind !== "block") continue;
    const body = () => scanItems(item.text);
    if (item.name === "variable" && item.labels[0]) {
      const b = body();
      const def = attribute(b, "default");
      into.inputs.push({
        name: item.labels[0],
        type: attribute(b, "type") ?? "",
        description: unquote(attribute(b, "description") ?? ""),
        default: def ?? "",
        required: def === undefined,
        sensitive: attribute(b, "sensitive") === "true",
      });
    } else if (item.name === "output" && item.labels[0]) {
      into.outputs.push({ name: item.labels[0], description: unquote(attribute(body(), "description") ?? "") });
    } else if ((item.name === "resource" || item.name === "data") && item.labels.length >= 2) {
      into.resources.push({ name: item.labels[1], type: item.name === "data" ? `data.${item.labels[0]}` : item.labels[0] });
    } else if (item.name === "module" && item.labels[0]) {
      const b = body();
      into.dependencies.push({ name: item.labels[0], source: unquote(attribute(b, "source") ?? ""), version: unquote(attribute(b, "version") ?? "") });
    } else if (item.name === "terraform") {
      for (const inner of body()) {
        if (inner.kind !== "block" || inner.name !== "required_providers") continue;
        for (const req of scanItems(inner.text)) {
          if (req.kind !== "attribute") continue;
          const fields = req.text.startsWith("{") ? scanItems(req.text.slice(1, -1)) : [];
          const source = unquote(attribute(fields, "source") ?? "");
          const version = req.text.startsWith("{") ? unquote(attribute(fields, "version") ?? "") : unquote(req.text);
          const parts = source.split("/");
          into.provider_dependencies.push({ name: req.name, namespace: parts.length >= 2 ? (parts.at(-2) ?? "") : "hashicorp", source, version });
        }
      }
    }
  }
}

function fromJson(text: string, into: ModulePart): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return;
  }
  if (!doc || typeof doc !== "object") return;
  const d = doc as Record<string, unknown>;
  const entries = (v: unknown) => (v && typeof v === "object" ? Object.entries(v as Record<string, Record<string, unknown>>) : []);
  for (const [name, v] of entries(d.variable)) {
    const has = v && typeof v === "object" && "default" in v;
    into.inputs.push({
      name,
      type: typeof v?.type === "string" ? v.type : "",
      description: typeof v?.description === "string" ? v.description : "",
      default: has ? JSON.stringify(v.default) : "",
      required: !has,
      sensitive: v?.sensitive === true,
    });
  }
  for (const [name, v] of entries(d.output)) into.outputs.push({ name, description: typeof v?.description === "string" ? v.description : "" });
  for (const [type, byName] of entries(d.resource)) for (const [name] of entries(byName)) into.resources.push({ name, type });
}

function emptyPart(path: string): ModulePart {
  return {
    path,
    name: path.split("/").at(-1) ?? "",
    readme: "",
    empty: true,
    inputs: [],
    outputs: [],
    dependencies: [],
    provider_dependencies: [],
    resources: [],
  };
}

/** The module details of an archive's kept files (see `keptPath` in module-archive.parse.ts). */
export function moduleDetails(files: Map<string, string>, rootName: string): ModuleDetails {
  const parts = new Map<string, ModulePart>();
  const part = (dir: string) => {
    let p = parts.get(dir);
    if (!p) {
      p = emptyPart(dir);
      if (dir === "") p.name = rootName;
      parts.set(dir, p);
    }
    return p;
  };
  part("");
  for (const [path, text] of [...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    const file = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
    const p = part(dir);
    if (file === "readme.md") p.readme = text;
    else {
      p.empty = false;
      if (file.endsWith(".tf.json")) fromJson(text, p);
      else fromHcl(text, p);
    }
  }
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const p of parts.values()) {
    p.inputs.sort(byName);
    p.outputs.sort(byName);
  }
  const under = (prefix: string) => [...parts.values()].filter((p) => p.path.startsWith(prefix)).sort(byName);
  return { root: parts.get("")!, submodules: under("modules/"), examples: under("examples/") };
}
