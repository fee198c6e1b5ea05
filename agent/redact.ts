/**
 * What a job must never let out: its run token and the values of its sensitive variables, in every form Terraform
 * may print them. The log is masked on its way to the service (`Redactor`), and the redacted JSON plan, which any
 * reader of the run may read, carries none of them (`redactedPlan`).
 *
 * Terraform knows nothing of a workspace variable's `sensitive` flag: a configuration that outputs such a variable
 * without `sensitive = true` prints it, and a sensitive HCL map is printed part by part. So each value is taken
 * apart (an HCL or JSON map or list into its strings and numbers, a multi-line string into its lines) and each part
 * is masked in every encoding Terraform writes:
 * - as is (a heredoc's lines, `terraform output -raw`, a provisioner's output);
 * - quoted as Go's `%q`/`strconv.Quote` do (the plan's and `Outputs:` strings: internal/command/jsonformat and
 *   internal/repl/format.go in hashicorp/terraform);
 * - escaped as a variable file holds it (`$${`, `%%{`, quotes, backslashes, newlines: the diagnostics' snippets);
 * - JSON-escaped as Go's encoding/json writes it (`-json` logs: `\u003c`, `\u003e`, `\u0026`, `\u2028`), as
 *   JSON.stringify does, and with every non-ASCII character as `\uXXXX`;
 * - and each of those once more inside a JSON string (`jsonencode` of a value, a message inside a `-json` line).
 * A map's or list's whole JSON form (`{"a":"…"}`, as a `-json` log prints an output's value) is masked as `"***"`, so
 * the line stays valid JSON for the `cloud` block's renderer.
 *
 * Short or trivial values are not masked: fewer than 4 characters once trimmed, or `true`, `false` and `null` in any
 * case. Masking every "1" or "true" of a log would make it unreadable and hides nothing worth hiding; CI services draw
 * the same line (CircleCI leaves values under 4 characters and true/false unmasked; GitLab refuses to mask under 8).
 * The keys of a sensitive map are not masked either: they name its parts, as attribute names do, and masking "name"
 * or "password" everywhere would wreck the log; a key is hidden only where it equals one of the masked values.
 */
import { createHmac, randomBytes } from "node:crypto";
import { type HclValue, hclStrings, parseHclValue } from "./hcl-value.ts";
import type { Job } from "./protocol.ts";
import { hclString } from "./workdir.ts";

/** A string to mask and what replaces it in the log. */
export interface Pattern {
  text: string;
  mask: string;
}

export const MASK = "***";
/** For a map's or list's JSON form, which a `-json` log line holds as a value rather than inside a string. */
const JSON_MASK = '"***"';
const MIN_CHARS = 4;
const TRIVIAL = new Set(["true", "false", "null"]);

/** Whether a value is worth masking: see the module's comment. */
export function worthMasking(value: string): boolean {
  const t = value.trim();
  return [...t].length >= MIN_CHARS && !TRIVIAL.has(t.toLowerCase());
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

const GO_QUOTE_SHORT: Record<string, string> = { "\x07": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v" };
// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** The inside of Go's `strconv.Quote(s)` (`%q`). */
export function goQuoted(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (cp < 0x80) out += cp >= 0x20 && cp < 0x7f ? ch : (GO_QUOTE_SHORT[ch] ?? `\\x${hex(cp, 2)}`);
    else if (cp >= 0xd800 && cp <= 0xdfff) out += "\\ufffd";
    else if (GO_PRINTABLE.test(ch)) out += ch;
    else out += cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
  }
  return out;
}

const JSON_SHORT: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The inside of a JSON string as Go's encoding/json writes it (HTML-safe: `<`, `>`, `&` escaped). */
export function goJsonEscaped(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (JSON_SHORT[ch]) out += JSON_SHORT[ch];
    else if (cp < 0x20 || ch === "<" || ch === ">" || ch === "&" || cp === 0x2028 || cp === 0x2029) out += `\\u${hex(cp, 4)}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += "\\ufffd";
    else out += ch;
  }
  return out;
}

/** Go's escaping with every non-ASCII character as `\uXXXX` (UTF-16 units), as ASCII-only encoders write it. */
function asciiJsonEscaped(s: string): string {
  return goJsonEscaped(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}

const ENCODERS: ((s: string) => string)[] = [
  goQuoted,
  (s) => hclString(s).slice(1, -1),
  goJsonEscaped,
  (s) => JSON.stringify(s).slice(1, -1),
  asciiJsonEscaped,
];

/** `s` and every form Terraform may print it in: each encoding, and each encoding of an encoding. */
export function encodings(s: string): Set<string> {
  const once = new Set([s, ...ENCODERS.map((e) => e(s))]);
  const twice = new Set(once);
  for (const x of once) for (const e of ENCODERS) twice.add(e(x));
  return twice;
}

/**
 * A JSON value as Go's encoding/json writes a cty value: compact, object keys sorted, HTML-safe. `scalarsAsStrings`:
 * numbers and bools as strings, as a value of a `map(string)` or `list(string)` variable becomes.
 */
export function goJson(v: HclValue, scalarsAsStrings = false): string {
  if (typeof v === "string") return `"${goJsonEscaped(v)}"`;
  if (Array.isArray(v)) return `[${v.map((x) => goJson(x, scalarsAsStrings)).join(",")}]`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `"${goJsonEscaped(k)}":${goJson(v[k]!, scalarsAsStrings)}`).join(",")}}`;
  }
  return scalarsAsStrings && v !== null ? `"${String(v)}"` : JSON.stringify(v);
}

/** The parts of a sensitive value that are printed on their own, and the JSON forms of its maps and lists. */
class Parts {
  readonly values = new Set<string>();
  readonly structures = new Set<string>();

  string(s: string, depth = 0): void {
    this.values.add(s);
    this.values.add(s.trim());
    // A multi-line string is printed as a heredoc, line by line.
    if (s.includes("\n")) for (const line of s.split("\n")) this.values.add(line.trim());
    // A string holding JSON is printed as `jsonencode(…)` of its parts.
    const t = s.trim();
    if (depth < 4 && (t.startsWith("{") || t.startsWith("["))) {
      try {
        this.value(JSON.parse(t) as HclValue, depth + 1);
      } catch {
        // Not JSON: printed as a string.
      }
    }
  }

  value(v: HclValue, depth = 0): void {
    if (typeof v === "string") this.string(v, depth);
    else if (typeof v === "number") this.values.add(String(v));
    else if (v && typeof v === "object") {
      this.structures.add(goJson(v));
      this.structures.add(goJson(v, true));
      for (const item of Array.isArray(v) ? v : Object.values(v)) this.value(item, depth);
    }
  }
}

/** The patterns to mask for a job: its run token and its sensitive variables' values, in every form. */
export function jobPatterns(job: Pick<Job, "token" | "variables">): Pattern[] {
  const parts = new Parts();
  parts.values.add(job.token);
  for (const v of job.variables) {
    if (!v.sensitive || v.value === "") continue;
    // As written, too: a diagnostic quotes the variable file's line.
    parts.values.add(v.value);
    if (v.category !== "terraform" || !v.hcl) {
      parts.string(v.value);
      continue;
    }
    const parsed = parseHclValue(v.value);
    if (parsed !== undefined) parts.value(parsed);
    else for (const s of hclStrings(v.value)) parts.string(s);
  }
  const out = new Map<string, string>();
  for (const value of parts.values) if (worthMasking(value)) for (const e of encodings(value)) out.set(e, MASK);
  for (const json of parts.structures) {
    for (const e of encodings(json)) if (!out.has(e)) out.set(e, MASK);
    out.set(json, JSON_MASK);
  }
  return [...out].map(([text, mask]) => ({ text, mask }));
}

/**
 * Masks patterns in a byte stream, the leftmost first and the longest of those starting there. A pattern may
 * straddle two writes, so the shortest tail that could begin one is held back until the next write (or `end`).
 */
export class Redactor {
  private readonly patterns: { text: Buffer; mask: Buffer }[];
  private held: Buffer = Buffer.alloc(0);
  private readonly out: (chunk: Buffer) => void;

  constructor(patterns: Iterable<Pattern | string>, out: (chunk: Buffer) => void) {
    const unique = new Map<string, string>();
    for (const p of patterns) {
      const { text, mask } = typeof p === "string" ? { text: p, mask: MASK } : p;
      if (text !== "") unique.set(text, mask);
    }
    this.patterns = [...unique].map(([text, mask]) => ({ text: Buffer.from(text, "utf8"), mask: Buffer.from(mask, "utf8") }));
    this.out = out;
  }

  write(chunk: Uint8Array): void {
    if (this.patterns.length === 0) {
      if (chunk.length > 0) this.out(Buffer.from(chunk));
      return;
    }
    const data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : Buffer.from(chunk);
    const parts: Buffer[] = [];
    // Each pattern's next occurrence at or after `pos`, looked up again only once `pos` has passed it.
    const next = this.patterns.map((p) => data.indexOf(p.text));
    let pos = 0;
    for (;;) {
      let best = -1;
      for (let k = 0; k < next.length; k++) {
        if (next[k]! !== -1 && next[k]! < pos) next[k] = data.indexOf(this.patterns[k]!.text, pos);
        const i = next[k]!;
        if (i === -1) continue;
        if (best === -1 || i < next[best]! || (i === next[best]! && this.patterns[k]!.text.length > this.patterns[best]!.text.length)) best = k;
      }
      if (best === -1) break;
      const at = next[best]!;
      parts.push(data.subarray(pos, at), this.patterns[best]!.mask);
      pos = at + this.patterns[best]!.text.length;
    }
    const rest = data.subarray(pos);
    const hold = this.partialTail(rest);
    parts.push(rest.subarray(0, rest.length - hold));
    this.held = Buffer.from(rest.subarray(rest.length - hold));
    const out = Buffer.concat(parts);
    if (out.length > 0) this.out(out);
  }

  /** Lets out what was held back: the stream ended (or paused where no pattern can continue, as between commands). */
  end(): void {
    if (this.held.length > 0) this.out(this.held);
    this.held = Buffer.alloc(0);
  }

  /** The length of the longest tail of `buf` that is a proper prefix of some pattern. */
  private partialTail(buf: Buffer): number {
    const n = buf.length;
    let longest = 0;
    for (const { text } of this.patterns) {
      // A tail starting at i is n - i bytes long: shorter than the pattern, longer than the best so far.
      for (let i = Math.max(0, n - text.length + 1); i < n - longest; i++) {
        if (buf[i] === text[0] && buf.subarray(i).equals(text.subarray(0, n - i))) {
          longest = n - i;
          break;
        }
      }
    }
    return longest;
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface Change {
  before?: Json;
  after?: Json;
  before_sensitive?: Json;
  after_sensitive?: Json;
  [k: string]: Json | undefined;
}

interface ResourceChange {
  address?: string;
  previous_address?: string;
  index?: unknown;
  change?: Change;
  [k: string]: unknown;
}

interface ActionInvocation {
  address?: string;
  config_values?: Json;
  config_sensitive?: Json;
  lifecycle_action_trigger?: { triggering_resource_address?: string; [k: string]: unknown };
  invoke_action_trigger?: { calling_resource_address?: string; [k: string]: unknown };
  [k: string]: unknown;
}

interface ShowPlan {
  format_version?: string;
  output_changes?: Record<string, Change>;
  resource_changes?: ResourceChange[];
  resource_drift?: ResourceChange[];
  relevant_attributes?: { resource?: string; [k: string]: unknown }[];
  deferred_changes?: { resource_change?: ResourceChange; [k: string]: unknown }[];
  action_invocations?: ActionInvocation[];
}

interface ProviderSchemas {
  format_version?: string;
  provider_schemas?: Record<string, unknown>;
}

/** Finds patterns in strings, the leftmost first and the longest of those starting there. */
class Matcher {
  private readonly texts: string[];

  constructor(patterns: Iterable<Pattern | string>) {
    this.texts = [...new Set([...patterns].map((p) => (typeof p === "string" ? p : p.text)))].filter((t) => t !== "");
  }

  get empty(): boolean {
    return this.texts.length === 0;
  }

  has(s: string): boolean {
    return this.texts.some((t) => s.includes(t));
  }

  is(s: string): boolean {
    return this.texts.includes(s);
  }

  replace(s: string, by: (text: string) => string): string {
    if (!this.has(s)) return s;
    let out = "";
    let pos = 0;
    for (;;) {
      let at = -1;
      let text = "";
      for (const t of this.texts) {
        const i = s.indexOf(t, pos);
        if (i !== -1 && (at === -1 || i < at || (i === at && t.length > text.length))) [at, text] = [i, t];
      }
      if (at === -1) return out + s.slice(pos);
      out += s.slice(pos, at) + by(text);
      pos = at + text.length;
    }
  }
}

export interface RedactOptions {
  /** The job's patterns (`jobPatterns`): hidden wherever they appear, whatever Terraform marked. */
  secrets?: Iterable<Pattern | string>;
  /** The key of the stand-ins (default: a fresh one, so nothing outside this plan can recompute them). */
  key?: Buffer;
}

/**
 * The redacted JSON plan Terraform's `cloud` block renders a remote plan from (`GET plans/:id/json-output-redacted`):
 * `terraform show -json` plus `terraform providers schema -json`, in the shape of Terraform's `jsonformat.Plan`
 * (internal/command/jsonformat/plan.go). Any reader of the run's plan may read it, so no sensitive value may stay in
 * it: every value Terraform marked sensitive, and every value holding one of the job's secrets (marked sensitive
 * here, so Terraform renders it as `(sensitive value)`), is replaced; a secret in an address's instance key, an
 * index, an import id or generated configuration is replaced where it stands. Only the fields the renderer reads are copied: the plan's `variables`,
 * `prior_state`, `planned_values` and `configuration` never reach it. Equal values get equal stand-ins within one
 * plan, so the renderer still tells a changed sensitive value from an unchanged one.
 */
export function redactedPlan(plan: ShowPlan, schemas: ProviderSchemas, options: RedactOptions = {}): Record<string, unknown> {
  const key = options.key ?? randomBytes(32);
  const secrets = new Matcher(options.secrets ?? []);
  const standIn = (v: Json): string => `(sensitive value ${createHmac("sha256", key).update(JSON.stringify(v)).digest("hex").slice(0, 12)})`;

  /**
   * The sensitivity tree with every leaf that holds a secret marked. Keys are left alone: a resource's are its
   * schema's attribute names, which the renderer looks up, and a map's name its parts (the log keeps them too).
   */
  const marked = (value: Json | undefined, sensitive: Json | undefined): Json | undefined => {
    if (secrets.empty || sensitive === true || value === null || value === undefined) return sensitive;
    if (typeof value === "string") return secrets.has(value) ? true : sensitive;
    // A number only when it is one of the values: its digits are in too many other numbers.
    if (typeof value === "number") return secrets.is(String(value)) ? true : sensitive;
    if (typeof value === "boolean") return sensitive;
    if (Array.isArray(value)) {
      const s = Array.isArray(sensitive) ? sensitive : [];
      const items = value.map((v, i) => marked(v, s[i]) ?? false);
      return items.some((x) => x !== false) ? items : sensitive;
    }
    const s = sensitive && typeof sensitive === "object" && !Array.isArray(sensitive) ? sensitive : {};
    // As Terraform writes them: only the entries that are (or hold) something sensitive.
    const entries = Object.entries(value).flatMap(([k, v]) => {
      const x = marked(v, s[k]);
      return x === undefined || x === false ? [] : [[k, x] as const];
    });
    return entries.length > 0 ? Object.fromEntries(entries) : sensitive;
  };
  const mask = (value: Json | undefined, sensitive: Json | undefined): Json | undefined => {
    if (sensitive === true) return value === null || value === undefined ? value : standIn(value);
    if (Array.isArray(value) && Array.isArray(sensitive)) return value.map((v, i) => mask(v, sensitive[i]) as Json);
    if (value && typeof value === "object" && !Array.isArray(value) && sensitive && typeof sensitive === "object" && !Array.isArray(sensitive)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, sensitive[k]) as Json]));
    }
    return value;
  };
  const values = <T extends Record<string, unknown>>(c: T, value: string, sensitive: string): T => {
    const s = marked(c[value] as Json | undefined, c[sensitive] as Json | undefined);
    if (c[value] === undefined && s === undefined) return c;
    return { ...c, [value]: mask(c[value] as Json | undefined, s), ...(s === undefined ? {} : { [sensitive]: s }) };
  };
  const change = (c: Change | undefined): Change | undefined => c && values(values(c, "before", "before_sensitive"), "after", "after_sensitive");

  // A secret in a string outside the values (an import id, generated configuration) is replaced where it stands.
  const hide = (s: string): string => secrets.replace(s, (t) => standIn(t));
  // An address holds a value only in its instance keys (`["…"]`, a for_each key, Go-quoted); the rest names the
  // resource's module and type, which the renderer reads, so a secret that is a common word cannot break it.
  const hideInAddress = <T>(a: T): T => (typeof a === "string" ? a.replace(/\["((?:[^"\\]|\\.)*)"\]/g, (_m, key: string) => `["${hide(key)}"]`) : a) as T;
  const resource = <T extends ResourceChange>(r: T): T => {
    const out: ResourceChange = { ...r, address: hideInAddress(r.address), previous_address: hideInAddress(r.previous_address) };
    if (typeof r.index === "string") out.index = hide(r.index);
    const c = change(r.change);
    if (c) {
      const importing = c.importing;
      out.change = {
        ...c,
        ...(importing && typeof importing === "object" && !Array.isArray(importing) && typeof importing.id === "string"
          ? { importing: { ...importing, id: hide(importing.id) } }
          : {}),
        ...(typeof c.generated_config === "string" ? { generated_config: hide(c.generated_config) } : {}),
      };
    }
    return out as T;
  };
  const action = (a: ActionInvocation): ActionInvocation => {
    const out = values({ ...a, address: hideInAddress(a.address) }, "config_values", "config_sensitive");
    const lifecycle = a.lifecycle_action_trigger;
    if (lifecycle) out.lifecycle_action_trigger = { ...lifecycle, triggering_resource_address: hideInAddress(lifecycle.triggering_resource_address) };
    const invoke = a.invoke_action_trigger;
    if (invoke) out.invoke_action_trigger = { ...invoke, calling_resource_address: hideInAddress(invoke.calling_resource_address) };
    return out;
  };
  return {
    plan_format_version: plan.format_version ?? "1.2",
    output_changes: Object.fromEntries(Object.entries(plan.output_changes ?? {}).map(([k, c]) => [k, change(c)])),
    resource_changes: (plan.resource_changes ?? []).map(resource),
    resource_drift: (plan.resource_drift ?? []).map(resource),
    relevant_attributes: (plan.relevant_attributes ?? []).map((r) => ({ ...r, resource: hideInAddress(r.resource) })),
    deferred_changes: (plan.deferred_changes ?? []).map((d) => (d.resource_change ? { ...d, resource_change: resource(d.resource_change) } : d)),
    action_invocations: (plan.action_invocations ?? []).map(action),
    provider_format_version: schemas.format_version ?? "1.0",
    // The providers' own schemas hold no value of the job's.
    provider_schemas: schemas.provider_schemas ?? {},
  };
}
