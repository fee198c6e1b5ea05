/**
 * Unpacks a configuration version (a gzipped tar, as go-slug packs it) into a directory. An archive with an entry
 * or a link that would land outside that directory is refused whole, as go-slug's own unpacker refuses it; device
 * files and FIFOs are skipped.
 */
import { writeFile } from "node:fs/promises";
import { posix } from "node:path";
import { type ReadEntry, x as extract } from "tar";

export class UnsafeArchiveError extends Error {
  constructor(entry: string, why: string) {
    super(`refusing to unpack the configuration: ${JSON.stringify(entry)} ${why}`);
    this.name = "UnsafeArchiveError";
  }
}

const KEPT = new Set(["File", "OldFile", "ContiguousFile", "Directory", "SymbolicLink", "Link"]);

/** Whether a slash path, taken relative to the destination, leaves it. */
export function escapes(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return true;
  const norm = posix.normalize(p);
  return norm === ".." || norm.startsWith("../");
}

/** Why an entry is refused, or null when it is safe. */
export function unsafeEntry(path: string, type: string, linkpath: string | undefined): string | null {
  if (escapes(path)) return "is outside the configuration directory";
  if (type === "SymbolicLink") {
    const target = linkpath ?? "";
    if (target.startsWith("/") || escapes(posix.join(posix.dirname(path.replace(/\\/g, "/")), target.replace(/\\/g, "/")))) {
      return `links to ${JSON.stringify(target)}, outside the configuration directory`;
    }
  }
  if (type === "Link" && escapes(linkpath ?? "")) return `links to ${JSON.stringify(linkpath)}, outside the configuration directory`;
  return null;
}

/**
 * Unpacks `archive` (tar.gz bytes) into `dest`, an existing empty directory. `scratch` is a file path outside
 * `dest` the archive is written to first. Throws UnsafeArchiveError when an entry would escape `dest`.
 */
export async function unpackConfiguration(archive: Uint8Array, dest: string, scratch: string): Promise<void> {
  await writeFile(scratch, archive);
  let refused: UnsafeArchiveError | null = null;
  await extract({
    file: scratch,
    cwd: dest,
    // As root, tar would otherwise give files the archive's owners.
    preserveOwner: false,
    strict: true,
    filter: (path, entry) => {
      const e = entry as ReadEntry;
      if (!KEPT.has(e.type)) return false;
      const why = unsafeEntry(path, e.type, e.linkpath);
      if (why) {
        refused ??= new UnsafeArchiveError(path, why);
        return false;
      }
      return !refused;
    },
  });
  if (refused) throw refused;
}
