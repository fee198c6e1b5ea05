/**
 * A repository archive as a configuration version wants it. Hosts wrap the repository in one top directory
 * (GitHub `<owner>-<repo>-<sha7>`, GitLab `<repo>-<ref>-<sha>`, Gitea `<repo>`) and GitHub adds a `pax_global_header`
 * entry; the configuration must sit at the archive's root. The archive is unpacked (POSIX ustar with pax and GNU long
 * names), each entry's first path component dropped, and written again as ustar (pax records for long names). Paths
 * that climb out (`..`, absolute) and links pointing outside the archive are refused.
 */

import { readLimited } from "../platform/body";

const BLOCK = 512;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

interface Entry {
  name: string;
  type: string;
  mode: number;
  mtime: number;
  linkname: string;
  data: Uint8Array;
}

async function gunzip(tgz: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = new Error(`the repository archive unpacks to more than ${maxBytes} bytes`);
  try {
    return await readLimited(new Blob([tgz]).stream().pipeThrough(new DecompressionStream("gzip")), maxBytes, () => tooLarge);
  } catch (err) {
    if (err === tooLarge) throw err;
    throw new Error("the repository archive is not a gzip file");
  }
}

const field = (b: Uint8Array, from: number, len: number) => {
  const s = b.subarray(from, from + len);
  const end = s.indexOf(0);
  return decoder.decode(end === -1 ? s : s.subarray(0, end));
};
const octal = (b: Uint8Array, from: number, len: number) => Number.parseInt(field(b, from, len).trim() || "0", 8) || 0;

function paxRecords(data: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(32, at);
    if (space === -1) break;
    const len = Number.parseInt(decoder.decode(data.subarray(at, space)), 10);
    if (!len) break;
    const record = decoder.decode(data.subarray(space + 1, at + len - 1));
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    at += len;
  }
  return out;
}

function readTar(tar: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  let at = 0;
  let longName: string | null = null;
  let longLink: string | null = null;
  let pax: Record<string, string> = {};
  while (at + BLOCK <= tar.length) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const size = octal(h, 124, 12);
    const type = String.fromCharCode(h[156] || 48);
    const data = tar.subarray(at + BLOCK, at + BLOCK + size);
    if (data.length < size) throw new Error("the repository archive is truncated");
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "g") continue; // pax global header (GitHub's commit id)
    if (type === "x") {
      pax = paxRecords(data);
      continue;
    }
    if (type === "L") {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === "K") {
      longLink = field(data, 0, data.length);
      continue;
    }
    const prefix = decoder.decode(h.subarray(257, 263)).startsWith("ustar") ? field(h, 345, 155) : "";
    const name = pax.path ?? longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    const linkname = pax.linkpath ?? longLink ?? field(h, 157, 100);
    entries.push({ name, type, mode: octal(h, 100, 8), mtime: octal(h, 136, 12), linkname, data });
    longName = null;
    longLink = null;
    pax = {};
  }
  return entries;
}

/** `a/b/../c` → `a/c`; null when it climbs above the root or is absolute. */
function normalise(path: string): string | null {
  if (path.startsWith("/")) return null;
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(p);
  }
  return parts.join("/");
}

function header(name: string, type: string, mode: number, mtime: number, size: number, linkname = ""): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (s: string, from: number, len: number) => h.set(encoder.encode(s).subarray(0, len), from);
  const num = (n: number, from: number, len: number) => put(`${n.toString(8).padStart(len - 1, "0")}\0`, from, len);
  put(name, 0, 100);
  num(mode & 0o7777, 100, 8);
  num(0, 108, 8);
  num(0, 116, 8);
  num(size, 124, 12);
  num(mtime, 136, 12);
  h.fill(32, 148, 156);
  put(type, 156, 1);
  put(linkname, 157, 100);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return h;
}

function paxHeader(records: Record<string, string>, mtime: number): Uint8Array[] {
  let body = "";
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = encoder.encode(rest).length + 1;
    while (String(len).length + encoder.encode(rest).length !== len) len = String(len).length + encoder.encode(rest).length;
    body += `${len}${rest}`;
  }
  const data = encoder.encode(body);
  return [header("PaxHeader", "x", 0o644, mtime, data.length), data, new Uint8Array((BLOCK - (data.length % BLOCK)) % BLOCK)];
}

async function gzip(parts: Uint8Array[]): Promise<Uint8Array> {
  const stream = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The archive with its top directory stripped, as a tar.gz; throws an Error saying why it cannot be used. */
export async function repackArchive(tgz: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const entries = readTar(await gunzip(tgz, maxBytes));
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const full = normalise(e.name);
    if (full === null) throw new Error(`the repository archive has an entry outside it: ${e.name}`);
    const name = full.split("/").slice(1).join("/");
    if (name === "") continue; // the top directory itself
    if (!["0", "\0", "5", "2"].includes(e.type)) continue; // hard links, devices, FIFOs: nothing a configuration needs
    if (e.type === "2") {
      const target = e.linkname.startsWith("/") ? null : normalise(`${name.split("/").slice(0, -1).join("/")}/${e.linkname}`);
      if (target === null) throw new Error(`the repository archive links outside it: ${e.name} -> ${e.linkname}`);
    }
    const out = e.type === "5" ? `${name}/` : name;
    const long = encoder.encode(out).length > 100 || encoder.encode(e.linkname).length > 100;
    if (long) parts.push(...paxHeader({ path: out, ...(e.type === "2" ? { linkpath: e.linkname } : {}) }, e.mtime));
    const size = e.type === "0" || e.type === "\0" ? e.data.length : 0;
    parts.push(header(out, e.type === "\0" ? "0" : e.type, e.mode || (e.type === "5" ? 0o755 : 0o644), e.mtime, size, e.type === "2" ? e.linkname : ""));
    if (size > 0) parts.push(e.data, new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return gzip(parts);
}
