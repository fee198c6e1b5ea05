// A small ustar writer and reader on Web APIs only (CompressionStream), so the fakes run the same in workerd and Node.
// Archives carry a pax global header with the commit id first, as `git archive` writes it (and so GitHub's, GitLab's
// and Gitea's archives do): a reader that treats every entry as a file sees a stray `pax_global_header`.

export interface TarEntry {
  path: string;
  type: "file" | "directory";
  content: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** tar.gz of `files` under one top-level directory `root` (no trailing slash), with the pax comment `commit`. */
export async function tarGz(root: string, files: Record<string, string | Uint8Array>, commit?: string): Promise<Uint8Array<ArrayBuffer>> {
  const blocks: Uint8Array[] = [];
  if (commit) {
    const record = paxRecord("comment", commit);
    blocks.push(header({ name: "pax_global_header", size: record.length, type: "g" }), pad(record));
  }
  const directories = new Set<string>([`${root}/`]);
  for (const path of Object.keys(files)) {
    const parts = path.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i++) directories.add(`${root}/${parts.slice(0, i).join("/")}/`);
  }
  for (const dir of [...directories].sort()) blocks.push(header({ name: dir, size: 0, type: "5", mode: 0o755 }));
  for (const [path, content] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    blocks.push(header({ name: `${root}/${path}`, size: bytes.length, type: "0" }), pad(bytes));
  }
  blocks.push(new Uint8Array(1024));
  return gzip(concat(blocks));
}

/** Reads a tar.gz into its entries (pax headers applied, not returned). */
export async function readTarGz(archive: Uint8Array): Promise<TarEntry[]> {
  const tar = await gunzip(archive);
  const entries: TarEntry[] = [];
  let nextPath: string | undefined;
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const block = tar.subarray(offset, offset + 512);
    if (block.every((b) => b === 0)) break;
    const size = Number.parseInt(text(block, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(block[156] || 48);
    const prefix = text(block, 345, 155);
    const name = (prefix ? `${prefix}/` : "") + text(block, 0, 100);
    const content = tar.slice(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") nextPath = parsePax(content).path;
    if (type === "x" || type === "g") continue;
    const path = nextPath ?? name;
    nextPath = undefined;
    entries.push({ path, type: type === "5" ? "directory" : "file", content });
  }
  return entries;
}

/** The files of an archive as text, keyed by path with the single top-level directory stripped. */
export async function archiveFiles(archive: Uint8Array): Promise<{ root: string; files: Record<string, string> }> {
  const entries = await readTarGz(archive);
  const roots = new Set(entries.map((e) => e.path.split("/")[0]));
  if (roots.size !== 1) throw new Error(`expected one top-level directory, got ${[...roots].join(", ")}`);
  const root = [...roots][0];
  const files: Record<string, string> = {};
  for (const e of entries) if (e.type === "file") files[e.path.slice(root.length + 1)] = decoder.decode(e.content);
  return { root, files };
}

function header(o: { name: string; size: number; type: string; mode?: number }): Uint8Array {
  const block = new Uint8Array(512);
  let name = o.name;
  let prefix = "";
  if (encoder.encode(name).length > 100) {
    // ustar splits long paths at a slash into prefix (155) and name (100).
    const cut = name.lastIndexOf("/", name.length - 2);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
    if (encoder.encode(name).length > 100 || encoder.encode(prefix).length > 155) throw new Error(`path too long for ustar: ${o.name}`);
  }
  write(block, 0, 100, name);
  write(block, 100, 8, octal(o.mode ?? 0o644, 7));
  write(block, 108, 8, octal(0, 7));
  write(block, 116, 8, octal(0, 7));
  write(block, 124, 12, octal(o.size, 11));
  write(block, 136, 12, octal(0, 11));
  block.fill(32, 148, 156);
  write(block, 156, 1, o.type);
  write(block, 257, 6, "ustar");
  write(block, 263, 2, "00");
  write(block, 265, 32, "root");
  write(block, 297, 32, "root");
  write(block, 345, 155, prefix);
  const sum = block.reduce((a, b) => a + b, 0);
  write(block, 148, 8, `${octal(sum, 6)}\0 `);
  return block;
}

function paxRecord(key: string, value: string): Uint8Array {
  // "<len> key=value\n" where len counts the whole record, its own digits included.
  const body = ` ${key}=${value}\n`;
  let length = body.length + 1;
  while (`${length}${body}`.length !== length) length = `${length}${body}`.length;
  return encoder.encode(`${length}${body}`);
}

function parsePax(content: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of decoder.decode(content).split("\n")) {
    const match = /^\d+ ([^=]+)=(.*)$/.exec(line);
    if (match) out[match[1]] = match[2];
  }
  return out;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width, "0");
}

function write(block: Uint8Array, offset: number, length: number, value: string): void {
  block.set(encoder.encode(value).subarray(0, length), offset);
}

function text(block: Uint8Array, offset: number, length: number): string {
  const bytes = block.subarray(offset, offset + length);
  const end = bytes.indexOf(0);
  return decoder.decode(end === -1 ? bytes : bytes.subarray(0, end));
}

function pad(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.length / 512) * 512);
  out.set(bytes);
  return out;
}

/** The parts one after the other, in one array. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await new Response(new Response(new Uint8Array(bytes)).body!.pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Response(new Uint8Array(bytes)).body!.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
}
