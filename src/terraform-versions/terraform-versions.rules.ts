/**
 * Pure rules of Terraform versions: parsing versions and constraints as Terraform's own version library
 * (hashicorp/go-version) reads them, ordering, resolving a workspace's setting (an exact version, a constraint or
 * `latest`) to one listed version, and reading a releases index (HashiCorp's `index.json` shape) and its SHA256SUMS.
 */

/**
 * A parsed version: three numeric segments (missing ones are 0; bigints, as go-tfe's tests list versions such as
 * `1.0.5577006791947779410`), the pre-release, and how many segments were written.
 */
export interface Version {
  segments: [bigint, bigint, bigint];
  prerelease: string;
  specified: number;
}

const VERSION = /^v?(\d{1,20})(?:\.(\d{1,20}))?(?:\.(\d{1,20}))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

export function parseVersion(text: string): Version | null {
  const m = VERSION.exec(text.trim());
  if (!m) return null;
  return {
    segments: [BigInt(m[1]), BigInt(m[2] ?? 0), BigInt(m[3] ?? 0)],
    prerelease: m[4] ?? "",
    specified: m[3] !== undefined ? 3 : m[2] !== undefined ? 2 : 1,
  };
}

/** A version an admin may list: `N.N.N` or `N.N.N-name` (the admin API's documented shape). */
export const LISTABLE_VERSION = /^\d{1,20}\.\d{1,20}\.\d{1,20}(-[0-9A-Za-z.-]{1,64})?$/;

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (!a) return 1; // a release is newer than any of its pre-releases
  if (!b) return -1;
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === undefined) return -1;
    if (pb[i] === undefined) return 1;
    const na = /^\d{1,20}$/.test(pa[i]) ? BigInt(pa[i]) : null;
    const nb = /^\d{1,20}$/.test(pb[i]) ? BigInt(pb[i]) : null;
    if (na !== null && nb !== null) {
      if (na !== nb) return na < nb ? -1 : 1;
    } else if (na !== null) return -1;
    else if (nb !== null) return 1;
    else if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.segments[i] !== b.segments[i]) return a.segments[i] < b.segments[i] ? -1 : 1;
  return comparePrerelease(a.prerelease, b.prerelease);
}

/**
 * A text that sorts as the version does, for SQL's ORDER BY: zero-padded segments, then `~` for a release (after
 * `-` and every pre-release) or `-` and the pre-release with its digit runs padded (beta10 after beta2).
 */
export function sortKey(text: string): string {
  const v = parseVersion(text);
  if (!v) return "";
  const pad = (n: bigint) => String(n).padStart(20, "0");
  const pre = v.prerelease.replace(/\d+/g, (d) => d.padStart(20, "0"));
  return `${v.segments.map(pad).join(".")}${v.prerelease ? `-${pre}` : "~"}`;
}

type Operator = "=" | "!=" | ">" | "<" | ">=" | "<=" | "~>";
interface Term {
  op: Operator;
  version: Version;
}

const TERM = /^\s*(~>|>=|<=|!=|=|>|<)?\s*(\S+)\s*$/;

/** A constraint (`~> 1.5.0`, `>= 1.2, < 2.0`, `1.5.7`): its terms, or null when any term does not parse. */
export function parseConstraint(text: string): Term[] | null {
  const parts = text.split(",");
  const terms: Term[] = [];
  for (const part of parts) {
    const m = TERM.exec(part);
    const version = m ? parseVersion(m[2]) : null;
    if (!m || !version) return null;
    terms.push({ op: (m[1] as Operator | undefined) ?? "=", version });
  }
  return terms.length ? terms : null;
}

/** go-version's rule: a pre-release matches only a constraint naming a pre-release of the same base version. */
function prereleaseAllowed(v: Version, c: Version): boolean {
  if (v.prerelease && c.prerelease) return v.segments.every((s, i) => s === c.segments[i]);
  if (v.prerelease && !c.prerelease) return false;
  return true;
}

function termHolds(v: Version, t: Term): boolean {
  if (!prereleaseAllowed(v, t.version)) return false;
  const cmp = compareVersions(v, t.version);
  switch (t.op) {
    case "=":
      return cmp === 0;
    case "!=":
      return cmp !== 0;
    case ">":
      return cmp > 0;
    case "<":
      return cmp < 0;
    case ">=":
      return cmp >= 0;
    case "<=":
      return cmp <= 0;
    case "~>": {
      // Pessimistic: at least the version, with every written segment but the last unchanged.
      if (Boolean(t.version.prerelease) !== Boolean(v.prerelease) || cmp < 0) return false;
      for (let i = 0; i < t.version.specified - 1; i++) if (v.segments[i] !== t.version.segments[i]) return false;
      return true;
    }
  }
}

export function satisfies(v: Version, terms: Term[]): boolean {
  return terms.every((t) => termHolds(v, t));
}

/** What a workspace's setting is: `latest`, one exact version, or a constraint. */
export type Wanted = { kind: "latest" } | { kind: "exact"; version: string } | { kind: "constraint"; terms: Term[] };

export function wantedOf(setting: string): Wanted | null {
  const text = setting.trim();
  if (text === "latest") return { kind: "latest" };
  if (parseVersion(text)) return { kind: "exact", version: text.replace(/^v/, "") };
  const terms = parseConstraint(text);
  return terms ? { kind: "constraint", terms } : null;
}

/** One listed version as resolution sees it. */
export interface Candidate {
  version: string;
  enabled: boolean;
  official: boolean;
  beta: boolean;
}

const newestFirst = (list: Candidate[]) =>
  list
    .map((c) => ({ c, v: parseVersion(c.version) }))
    .filter((x): x is { c: Candidate; v: Version } => x.v !== null)
    .sort((a, b) => compareVersions(b.v, a.v));

/** The newest enabled official release (no beta, no pre-release): a new workspace's default and what `latest` runs. */
export function newestOfficial(list: Candidate[]): string | null {
  return newestFirst(list).find(({ c, v }) => c.enabled && c.official && !c.beta && !v.prerelease)?.c.version ?? null;
}

/**
 * The listed version a setting runs: `latest` → the newest official release; an exact version → itself when listed
 * and enabled (`anyExact`: listed, even disabled: a run of a workspace already on a version an admin disabled
 * since); a constraint → the newest enabled version satisfying it. Null when none.
 */
export function resolve(wanted: Wanted, list: Candidate[], opts: { anyExact?: boolean } = {}): string | null {
  if (wanted.kind === "latest") return newestOfficial(list);
  if (wanted.kind === "exact") {
    const v = parseVersion(wanted.version);
    const hit = newestFirst(list).find((x) => (x.c.enabled || opts.anyExact) && v && compareVersions(x.v, v) === 0);
    return hit?.c.version ?? null;
  }
  return newestFirst(list).find(({ c, v }) => c.enabled && satisfies(v, wanted.terms))?.c.version ?? null;
}

/** Why a setting cannot be used, or null when it can. Texts are the API's (the exact-version one is the real service's). */
export function refusal(setting: string, wanted: Wanted, list: Candidate[]): string | null {
  if (resolve(wanted, list)) return null;
  if (wanted.kind === "exact") return `Terraform version "${wanted.version}" is not a valid version (it is not one of the enabled versions this service lists)`;
  if (wanted.kind === "latest") return `Terraform version "latest" is not available: no official release is listed and enabled`;
  return `Terraform version constraint "${setting.trim()}" is not satisfied by any enabled version this service lists`;
}

// ---- releases indexes ----

/** A linux build of a release, as the admin API's `archs` show it. */
export interface Arch {
  url: string;
  sha: string;
  os: string;
  arch: string;
}

/** A release read from the index, before its SHA256SUMS is: where each linux build and its checksums are. */
export interface IndexedRelease {
  version: string;
  prerelease: boolean;
  builds: Array<{ os: string; arch: string; filename: string; url: string }>;
  shasumsUrl: string | null;
  shasumsSignatureUrl: string | null;
}

/** The architectures agents run on (the admin API accepts these for linux). */
export const ARCHES = ["amd64", "arm64", "s390x"] as const;

/**
 * The releases of an index in HashiCorp's shape (`{versions: {"1.5.7": {version, shasums, shasums_signature(s),
 * builds: [{os, arch, filename, url}]}}}`), each with its linux builds, newest first. Relative names resolve
 * against the version's folder beside the index (`<index folder>/<version>/`), as on releases.hashicorp.com.
 */
export function readIndex(indexUrl: string, body: unknown): IndexedRelease[] {
  const versions = (body as { versions?: unknown } | null)?.versions;
  if (!versions || typeof versions !== "object") return [];
  const out: IndexedRelease[] = [];
  for (const [key, raw] of Object.entries(versions as Record<string, unknown>)) {
    const r = raw as { version?: unknown; shasums?: unknown; shasums_signature?: unknown; shasums_signatures?: unknown; builds?: unknown } | null;
    const version = typeof r?.version === "string" ? r.version : key;
    if (!LISTABLE_VERSION.test(version)) continue;
    const folder = new URL(`${encodeURIComponent(version)}/`, indexUrl);
    const at = (name: unknown): string | null => {
      if (typeof name !== "string" || !name) return null;
      try {
        return new URL(name, folder).toString();
      } catch {
        return null;
      }
    };
    const builds: IndexedRelease["builds"] = [];
    for (const b of Array.isArray(r?.builds) ? r.builds : []) {
      const build = b as { os?: unknown; arch?: unknown; filename?: unknown; url?: unknown };
      if (build.os !== "linux" || !ARCHES.includes(build.arch as (typeof ARCHES)[number]) || typeof build.filename !== "string") continue;
      const url = at(typeof build.url === "string" ? build.url : build.filename);
      if (url && /^https?:/.test(url)) builds.push({ os: "linux", arch: build.arch as string, filename: build.filename, url });
    }
    if (builds.length === 0) continue;
    // The signature under the plain name (`…_SHA256SUMS.sig`), else the first of the key-named ones.
    const signatures = Array.isArray(r?.shasums_signatures) ? r.shasums_signatures : [];
    out.push({
      version,
      prerelease: Boolean(parseVersion(version)?.prerelease),
      builds,
      shasumsUrl: at(r?.shasums),
      shasumsSignatureUrl: at(r?.shasums_signature) ?? at(signatures[0]),
    });
  }
  return out.sort((a, b) => compareVersions(parseVersion(b.version)!, parseVersion(a.version)!));
}

/** `<sha256>  <filename>` lines → filename → sha (lower case); other lines are ignored. */
export function readShasums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([0-9a-fA-F]{64})\s+\*?(\S+)\s*$/.exec(line);
    if (m) sums.set(m[2], m[1].toLowerCase());
  }
  return sums;
}

/** A release's builds with their checksums, when SHA256SUMS names each (null otherwise: the release is not listed). */
export function archsOf(release: IndexedRelease, sums: Map<string, string>): Arch[] | null {
  const archs: Arch[] = [];
  for (const b of release.builds) {
    const sha = sums.get(b.filename);
    if (!sha) return null;
    archs.push({ url: b.url, sha, os: b.os, arch: b.arch });
  }
  return archs;
}
