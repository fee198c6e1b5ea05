/**
 * A streaming check of a module archive (a gzip-compressed tar, as the registry's upload expects: HCP Terraform API
 * docs, "Add a Module Version"): the compressed bytes are fed as they arrive, decompressed and read entry by entry,
 * so nothing holds the whole archive. An archive is refused when it is not gzip or not tar, when an entry's path
 * leaves the module (absolute, `..`), when it holds links or device files, or when it unpacks past the limits. The
 * small files the registry shows (Terraform files and READMEs of the root module, its submodules and examples) are
 * kept. A hand-written reader: the `tar` package reads through Node streams and the file system, which a Worker
 * does not have; the POSIX ustar, pax and GNU long-name headers below are the formats archivers write.
 */

export interface ArchiveLimits {
  /** Entries (files and directories). */
  maxEntries: number;
  /** The sum of the entries' sizes. */
  maxUnpackedBytes: number;
  /** A kept file is read up to this many bytes (the rest is not kept). */
  maxKeptFileBytes: number;
  /** All kept files together. */
  maxKeptBytes: number;
}

export type ArchiveVerdict = { ok: true; files: Map<string, string>; entries: number } | { ok: false; reason: string };

const BLOCK = 512;
const decoder = new TextDecoder();

/** Whether the registry keeps a file: `.tf`, `.tf.json` and README.md of the root, `modules/<x>/` and `examples/<x>/`. */
export function keptPath(path: string): boolean {
  const parts = path.split("/");
  const file = parts.at(-1)!.toLowerCase();
  const wanted = file.endsWith(".tf") || file.endsWith(".tf.json") || file === "readme.md";
  if (!wanted) return false;
  return parts.length === 1 || (parts.length === 3 && (parts[0] === "modules" || parts[0] === "examples"));
}

/** A member's path as it unpacks (`./` and trailing slashes dropped), or the reason it would escape the module. */
export function safePath(raw: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (raw.includes("\0")) return { ok: false, reason: `Archive entry ${JSON.stringify(raw)} has a NUL byte in its path` };
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw) || raw.includes("\\")) {
    return { ok: false, reason: `Archive entry ${JSON.stringify(raw)} has an absolute or non-portable path` };
  }
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.some((p) => p === "..")) return { ok: false, reason: `Archive entry ${JSON.stringify(raw)} leaves the module directory (..)` };
  return { ok: true, path: parts.join("/") };
}

function cString(b: Uint8Array, start: number, len: number): string {
  let end = start;
  while (end < start + len && b[end] !== 0) end++;
  return decoder.decode(b.subarray(start, end));
}

/** An octal header number, or base-256 (GNU) when the high bit of its first byte is set; NaN if neither. */
function headerNumber(b: Uint8Array, start: number, len: number): number {
  if (b[start] & 0x80) {
    let n = b[start] & 0x7f;
    for (let i = start + 1; i < start + len; i++) n = n * 256 + b[i];
    return n;
  }
  const s = cString(b, start, len).trim();
  return s === "" ? 0 : /^[0-7]+$/.test(s) ? Number.parseInt(s, 8) : Number.NaN;
}

function checksumOk(h: Uint8Array): boolean {
  const stored = headerNumber(h, 148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
  return stored === sum;
}

/** The `path` record of a pax extended header ("<length> <key>=<value>\n" records), if any. */
function paxPath(data: Uint8Array): string | undefined {
  const text = decoder.decode(data);
  let i = 0;
  let path: string | undefined;
  while (i < text.length) {
    const space = text.indexOf(" ", i);
    if (space < 0) break;
    const len = Number(text.slice(i, space));
    if (!Number.isInteger(len) || len <= 0) break;
    const record = text.slice(space + 1, i + len - 1);
    const eq = record.indexOf("=");
    if (eq > 0 && record.slice(0, eq) === "path") path = record.slice(eq + 1);
    i += len;
  }
  return path;
}

/** The tar reader: fed decompressed bytes in any cuts, it reads headers and skips or keeps entry data. */
class TarReader {
  private header = new Uint8Array(BLOCK);
  private headerFill = 0;
  /** The current entry's data still to come, and its padding to the block boundary after it. */
  private remaining = 0;
  private padding = 0;
  private entry: { path: string; kind: "file" | "meta-pax" | "meta-long"; keep: boolean; chunks: Uint8Array[]; kept: number } | null = null;
  private nextPath: string | undefined;
  private zeroBlocks = 0;
  ended = false;
  entries = 0;
  unpacked = 0;
  keptBytes = 0;
  /** Whether any file, kept or not, is Terraform configuration. */
  sawConfig = false;
  readonly files = new Map<string, string>();
  failure: string | null = null;

  constructor(private readonly limits: ArchiveLimits) {}

  push(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length && !this.failure && !this.ended) {
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, bytes.length - off);
        this.data(bytes.subarray(off, off + n));
        this.remaining -= n;
        off += n;
        if (this.remaining === 0) this.endEntry();
        continue;
      }
      if (this.padding > 0) {
        const n = Math.min(this.padding, bytes.length - off);
        this.padding -= n;
        off += n;
        continue;
      }
      const n = Math.min(BLOCK - this.headerFill, bytes.length - off);
      this.header.set(bytes.subarray(off, off + n), this.headerFill);
      this.headerFill += n;
      off += n;
      if (this.headerFill === BLOCK) {
        this.headerFill = 0;
        this.readHeader(this.header);
      }
    }
  }

  /** Whether the stream stopped at a clean place (after the end-of-archive blocks, or between entries). */
  get complete(): boolean {
    return this.ended || (this.remaining === 0 && this.padding === 0 && this.headerFill === 0 && this.entry === null && this.entries > 0);
  }

  private fail(reason: string): undefined {
    this.failure ??= reason;
    return undefined;
  }

  private readHeader(h: Uint8Array): undefined {
    if (h.every((b) => b === 0)) {
      // Two zero blocks end the archive; what follows (the compressor's padding) is not read.
      if (++this.zeroBlocks === 2) this.ended = true;
      return;
    }
    this.zeroBlocks = 0;
    if (!checksumOk(h)) return this.fail("The upload is not a tar archive (a header's checksum does not match)");
    const size = headerNumber(h, 124, 12);
    if (!Number.isSafeInteger(size) || size < 0) return this.fail("The upload is not a tar archive (a header's size is unreadable)");
    const type = String.fromCharCode(h[156] || 48);
    const ustar = cString(h, 257, 6) === "ustar";
    const name = cString(h, 0, 100);
    const prefix = ustar ? cString(h, 345, 155) : "";
    const raw = this.nextPath ?? (prefix ? `${prefix}/${name}` : name);
    this.remaining = size;
    this.padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (type === "x" || type === "L") {
      if (size > 64 * 1024) return this.fail("An archive entry's extended header is too long");
      this.entry = { path: "", kind: type === "x" ? "meta-pax" : "meta-long", keep: true, chunks: [], kept: 0 };
      if (size === 0) this.endEntry();
      return;
    }
    this.nextPath = undefined;
    if (type === "g" || type === "K") {
      // A global pax header or a GNU long link name: read past it (a link it names is refused with its entry).
      this.entry = { path: "", kind: "meta-pax", keep: false, chunks: [], kept: 0 };
      if (size === 0) this.endEntry();
      return;
    }
    const checked = safePath(raw);
    if (!checked.ok) return this.fail(checked.reason);
    if (type === "2" || type === "1") {
      return this.fail(
        `Archive entry ${JSON.stringify(checked.path)} is a ${type === "2" ? "symbolic" : "hard"} link: a module archive holds files and directories only`,
      );
    }
    if (type !== "0" && type !== "5" && type !== "7") {
      return this.fail(`Archive entry ${JSON.stringify(checked.path)} is not a file or directory (tar type ${JSON.stringify(type)})`);
    }
    if (++this.entries > this.limits.maxEntries) return this.fail(`The archive has more than ${this.limits.maxEntries} entries`);
    this.unpacked += size;
    if (this.unpacked > this.limits.maxUnpackedBytes) return this.fail(`The archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes`);
    if (type !== "5" && /\.tf(\.json)?$/.test(checked.path)) this.sawConfig = true;
    const keep = type !== "5" && keptPath(checked.path);
    this.entry = { path: checked.path, kind: "file", keep, chunks: [], kept: 0 };
    if (size === 0) this.endEntry();
  }

  private data(bytes: Uint8Array): void {
    const e = this.entry;
    if (!e?.keep) return;
    const room = e.kind === "file" ? Math.min(this.limits.maxKeptFileBytes - e.kept, this.limits.maxKeptBytes - this.keptBytes) : bytes.length;
    if (room <= 0) return;
    const part = bytes.subarray(0, room);
    e.chunks.push(part.slice());
    e.kept += part.length;
    if (e.kind === "file") this.keptBytes += part.length;
  }

  private endEntry(): void {
    const e = this.entry;
    this.entry = null;
    if (!e?.keep) return;
    const all = new Uint8Array(e.kept);
    let off = 0;
    for (const c of e.chunks) {
      all.set(c, off);
      off += c.length;
    }
    if (e.kind === "meta-pax") this.nextPath = paxPath(all) ?? this.nextPath;
    else if (e.kind === "meta-long") this.nextPath = cString(all, 0, all.length);
    else if (e.path !== "") this.files.set(e.path, decoder.decode(all));
  }
}

/**
 * Reads a module archive as its compressed bytes arrive: `write` each piece (in order), then `close` for the verdict.
 * After a failure the rest is ignored (the verdict is decided).
 */
export class ModuleArchiveReader {
  private readonly tar: TarReader;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly reading: Promise<void>;
  private gzipFailed = false;

  constructor(limits: ArchiveLimits) {
    const tar = new TarReader(limits);
    this.tar = tar;
    const gunzip = new DecompressionStream("gzip");
    this.writer = gunzip.writable.getWriter();
    const reader = gunzip.readable.getReader();
    this.reading = (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          tar.push(value);
          if (tar.failure || tar.ended) {
            await reader.cancel().catch(() => undefined);
            return;
          }
        }
      } catch {
        this.gzipFailed = true;
      }
    })();
  }

  private get decided(): boolean {
    return this.gzipFailed || this.tar.failure !== null || this.tar.ended;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.decided) return;
    // The decompressor's readable side is drained concurrently, so a write waits only for room, never for the end.
    await this.writer.write(chunk).catch(() => {
      this.gzipFailed ||= !this.tar.ended && this.tar.failure === null;
    });
  }

  async close(): Promise<ArchiveVerdict> {
    if (!this.decided) await this.writer.close().catch(() => undefined);
    else await this.writer.abort().catch(() => undefined);
    await this.reading;
    if (this.tar.failure) return { ok: false, reason: this.tar.failure };
    if (this.gzipFailed && !this.tar.ended) return { ok: false, reason: "The upload is not a gzip-compressed tar archive (tar.gz)" };
    if (!this.tar.complete) return { ok: false, reason: "The upload is not a tar archive, or it is truncated" };
    if (!this.tar.sawConfig) {
      return { ok: false, reason: "The archive holds no Terraform configuration (.tf or .tf.json) files" };
    }
    return { ok: true, files: this.tar.files, entries: this.tar.entries };
  }
}
