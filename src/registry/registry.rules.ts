/**
 * Pure rules of the private registry: names, versions (Semantic Versioning 2.0.0 precedence), a module's status from
 * its versions' (HCP Terraform API docs: Registry Modules), and the checksum file of a provider version.
 */

export type RegistryName = "private" | "public";

/** A module's or provider's name: letters, digits, dashes and underscores, not leading or trailing (docs: at most 64). */
export const NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;
/** A module's provider: lowercase letters and digits (docs: at most 64). */
export const MODULE_PROVIDER_PATTERN = /^[a-z0-9]{1,64}$/;
/** A namespace: an organisation's name, or a public registry namespace. */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;
/** An operating system or architecture of a provider platform, as Terraform names them (`linux`, `amd64`…). */
export const PLATFORM_PART_PATTERN = /^[a-z0-9_]{1,32}$/;
/** A file name of a provider release (no directory part). */
export const FILENAME_PATTERN = /^[A-Za-z0-9._+-]{1,255}$/;

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  pre: string[];
}

/** A Semantic Versioning 2.0.0 version (at most 128 characters), or null. */
export function parseVersion(v: string): SemVer | null {
  if (v.length > 128) return null;
  const m = SEMVER.exec(v);
  if (!m) return null;
  const nums = [m[1], m[2], m[3]].map(Number);
  if (nums.some((n) => !Number.isSafeInteger(n))) return null;
  return { major: nums[0], minor: nums[1], patch: nums[2], pre: m[4] ? m[4].split(".") : [] };
}

/** Semantic Versioning precedence (build metadata ignored); unparseable versions sort first. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return x ? 1 : y ? -1 : a < b ? -1 : a > b ? 1 : 0;
  for (const k of ["major", "minor", "patch"] as const) if (x[k] !== y[k]) return x[k] - y[k];
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn && Number(p) !== Number(q)) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

export type ModuleVersionStatus = "pending" | "ok" | "reg_ingress_failed";
export type ModuleStatus = "pending" | "setup_complete" | "setup_failed";

/** A module's status from its versions': complete once one version is ok, failed when every version failed. */
export function moduleStatus(versions: Array<{ status: string }>): ModuleStatus {
  if (versions.some((v) => v.status === "ok")) return "setup_complete";
  if (versions.length > 0 && versions.every((v) => v.status === "reg_ingress_failed")) return "setup_failed";
  return "pending";
}

/**
 * The entries of a provider version's SHA256SUMS file (`<64 hex digits>  <file name>` per line, as `shasum -a 256`
 * writes it), or the reason it is not one.
 */
export function parseShasums(text: string): { ok: true; entries: Map<string, string> } | { ok: false; reason: string } {
  const entries = new Map<string, string>();
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) return { ok: false, reason: "The checksums file is empty" };
  for (const [i, line] of lines.entries()) {
    const m = /^([0-9a-fA-F]{64}) [ *]?([^\s/\\]+)\r?$/.exec(line);
    if (!m) return { ok: false, reason: `Line ${i + 1} of the checksums file is not "<sha256>  <file name>"` };
    entries.set(m[2], m[1].toLowerCase());
  }
  return { ok: true, entries };
}
