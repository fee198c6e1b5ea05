/**
 * Whether a change set triggers a connected workspace (HCP Terraform docs, workspace VCS settings "Automatic Run
 * Triggering": "Only trigger runs when files in specified paths change", with glob patterns or path prefixes).
 * Patterns are globs rooted at the repository's root (`*` within a segment, `**` across them, hidden files matched);
 * prefixes add directories to the working directory, which alone is the trigger when no prefix is set (an empty one:
 * the whole repository). An unknown change set triggers every workspace.
 */
import picomatch from "picomatch/posix";

export interface FileFilter {
  fileTriggersEnabled: boolean;
  triggerPrefixes: string[];
  triggerPatterns: string[];
  workingDirectory: string | null;
}

const trimSlashes = (p: string) => p.replace(/^\/+/, "").replace(/\/+$/, "");

export function triggers(f: FileFilter, paths: string[] | null): boolean {
  if (!f.fileTriggersEnabled || paths === null) return true;
  const files = paths.map(trimSlashes);
  if (f.triggerPatterns.length > 0) {
    const match = picomatch(f.triggerPatterns.map(trimSlashes), { dot: true });
    return files.some((p) => match(p));
  }
  const dirs = [f.workingDirectory ?? "", ...f.triggerPrefixes].map(trimSlashes);
  if (dirs.includes("")) return files.length > 0;
  return files.some((p) => dirs.some((d) => p === d || p.startsWith(`${d}/`)));
}
