/**
 * A phase's log as the run page shows it: the framed stream the object stores (STX, the agent's bytes, ETX when the
 * phase is over) turned into text runs with their colours. Terraform colours its output with SGR escape sequences;
 * bold and the eight foreground colours become classes (src/ui/styles.ts), every other escape or control character is
 * dropped. The text itself is escaped by hono/jsx when rendered. Pure.
 */

export interface LogSpan {
  text: string;
  /** Space-separated classes (`a-b` bold, `a-f1`…`a-f7` foreground colours), or null: plain text. */
  cls: string | null;
}

export interface RenderedLog {
  spans: LogSpan[];
  /** ETX was seen: the phase's log is complete. */
  complete: boolean;
}

const STX = "\u0002";
const ETX = "\u0003";

// CSI sequences (ESC [ params intermediates final), OSC sequences (ESC ] … BEL or ESC \), other escapes (ESC ( B…).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the log's escape sequences are what this matches.
const ESCAPE = /\u001b\[([0-9;?]*)[ -/]*([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[ -/]*[0-~]?/g;
// Control characters other than tab and newline (a carriage return before a newline included).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

interface Style {
  bold: boolean;
  fg: number | null;
}

const classOf = (s: Style): string | null => {
  const parts: string[] = [];
  if (s.bold) parts.push("a-b");
  // Black and white would vanish on either background: they stay the page's own colour.
  if (s.fg !== null && s.fg >= 1 && s.fg <= 6) parts.push(`a-f${s.fg}`);
  return parts.length ? parts.join(" ") : null;
};

/** Applies one SGR parameter list (`1;31`) to the style. */
function applySgr(style: Style, params: string): void {
  const codes = params === "" ? [0] : params.split(";").map((p) => (p === "" ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const n = codes[i] ?? 0;
    if (n === 0) {
      style.bold = false;
      style.fg = null;
    } else if (n === 1) style.bold = true;
    else if (n === 22) style.bold = false;
    else if (n >= 30 && n <= 37) style.fg = n - 30;
    else if (n >= 90 && n <= 97) style.fg = n - 90;
    else if (n === 39) style.fg = null;
    // 256-colour and true-colour forms carry their own parameters: skip them.
    else if (n === 38 || n === 48) i += codes[i + 1] === 5 ? 2 : codes[i + 1] === 2 ? 4 : 1;
  }
}

/**
 * A workspace with structured run output gets Terraform's machine-readable UI (`-json`): one JSON object per line.
 * Each such line shows as its `@message` (a diagnostic with its detail); every other line as it is.
 */
function readableLines(body: string): string {
  return body
    .split("\n")
    .map((line) => {
      if (!line.startsWith("{")) return line;
      try {
        const o = JSON.parse(line) as { "@message"?: unknown; diagnostic?: { detail?: unknown } };
        if (typeof o["@message"] !== "string") return line;
        const detail = typeof o.diagnostic?.detail === "string" && o.diagnostic.detail ? `\n${o.diagnostic.detail}` : "";
        return `${o["@message"]}${detail}`;
      } catch {
        return line;
      }
    })
    .join("\n");
}

/** The log text (already decoded) as styled spans; adjacent text of one style is merged. */
export function renderLog(text: string): RenderedLog {
  const complete = text.includes(ETX);
  const body = readableLines(text.split(STX).join("").split(ETX).join(""));
  const spans: LogSpan[] = [];
  const style: Style = { bold: false, fg: null };
  const push = (raw: string) => {
    const clean = raw.replace(/\r\n/g, "\n").replace(CONTROL, "");
    if (!clean) return;
    const cls = classOf(style);
    const last = spans[spans.length - 1];
    if (last && last.cls === cls) last.text += clean;
    else spans.push({ text: clean, cls });
  };
  let at = 0;
  for (const m of body.matchAll(ESCAPE)) {
    push(body.slice(at, m.index));
    if (m[2] === "m") applySgr(style, m[1] ?? "");
    at = m.index + m[0].length;
  }
  push(body.slice(at));
  return { spans, complete };
}

/** A log's bytes as text (invalid UTF-8, such as a character cut at the end of a read, becomes U+FFFD). */
export const decodeLog = (bytes: Uint8Array): string => new TextDecoder("utf-8", { fatal: false, ignoreBOM: false }).decode(bytes);
