// The browser the UI suite and `terraform login`'s end-to-end steps drive: CHROMIUM, else Debian's `chromium` on PATH.
import { execFileSync } from "node:child_process";

export function chromiumPath() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    return "/usr/bin/chromium";
  }
}
