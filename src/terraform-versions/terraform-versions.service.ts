/**
 * Terraform versions: the site-admin API (authorise, validate, write), and what the rest of the service asks of the
 * list: a new workspace's default, whether a workspace's `terraform-version` may be set, and which listed version a
 * run's job runs.
 *
 * While nothing is listed (no sync has added a version and no admin has), the list does not constrain: any valid
 * version or constraint may be set, a new workspace gets LATEST_ENGINE_VERSION, and a job runs the workspace's exact
 * version (a constraint or `latest` runs LATEST_ENGINE_VERSION when it satisfies them) with nothing to download: an
 * agent pinned to a binary of that version runs it, another fails the plan saying why (docs/terraform-versions.md).
 */
import type { JobTerraform } from "../../agent/protocol";
import { authorize } from "../auth/requirements";
import type { Caller, Db } from "../caller";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  candidates,
  deleteVersion,
  findVersion,
  findVersionByNumber,
  insertVersion,
  listVersions,
  syncState,
  type TerraformVersion,
  updateVersion,
  usageOf,
} from "./terraform-versions.d1";
import {
  ARCHES,
  type Arch,
  type Candidate,
  LISTABLE_VERSION,
  newestOfficial,
  parseVersion,
  refusal,
  resolve,
  sortKey,
  wantedOf,
} from "./terraform-versions.rules";
import type { VersionAttributes } from "./terraform-versions.schemas";
import { syncDue, syncReleases } from "./terraform-versions.sync";

/** The fallback default while nothing is listed. */
const fallbackVersion = (env: Pick<Bindings, "LATEST_ENGINE_VERSION">) => env.LATEST_ENGINE_VERSION || "1.14.0";

// ---- the list as other services read it ----

/**
 * The list, remembered by this isolate for CACHE_MS: a new workspace's default and the check of a sent version read
 * it on every create. A refusal re-reads it (a version added a moment ago elsewhere is found); what it lets through
 * may be up to CACHE_MS old, and a run's job always reads the list afresh.
 */
const CACHE_MS = 30_000;
let cached: { at: number; list: Candidate[] } | null = null;

/** Forgets the remembered list (after this isolate changed it). */
export function forgetCachedList(): void {
  cached = null;
}

async function readList(caller: Caller, fresh: boolean): Promise<Candidate[]> {
  if (!fresh && cached && Date.now() - cached.at < CACHE_MS) return cached.list;
  const [list, state] = await Promise.all([candidates(caller.db), syncState(caller.db)]);
  cached = { at: Date.now(), list };
  if (syncDue(caller.env, state, Date.now()) && caller.defer) {
    caller.defer(
      syncReleases(caller.env, caller.env.DB, { self: caller.origin ?? null })
        .then((outcome) => {
          if (outcome.added.length) forgetCachedList();
          if (outcome.error) console.log(JSON.stringify({ level: "warn", message: `Terraform versions: ${outcome.error}` }));
        })
        .catch(() => undefined),
    );
  }
  return list;
}

/** A new workspace's `terraform-version`: the newest official release listed, else LATEST_ENGINE_VERSION. */
export async function defaultEngineVersion(caller: Caller): Promise<string> {
  return newestOfficial(await readList(caller, false)) ?? fallbackVersion(caller.env);
}

/**
 * Refuses (422 at `pointer`) a `terraform-version` that no enabled listed version satisfies; while nothing is listed,
 * every valid one passes.
 */
export async function requireUsableVersion(caller: Caller, setting: string, pointer: string): Promise<void> {
  const wanted = wantedOf(setting);
  if (!wanted) throw ApiError.of("invalid_attribute", { detail: `Engine version "${setting}" is not a valid version or version constraint`, pointer });
  for (const fresh of [false, true]) {
    const list = await readList(caller, fresh);
    if (list.length === 0) return;
    const why = refusal(setting, wanted, list);
    if (!why) return;
    if (fresh) throw ApiError.of("invalid_attribute", { detail: why, pointer });
  }
}

/**
 * What a job runs for `requested` (the run's `terraform-version`, else the workspace's): the listed version it
 * resolves to with its downloads, or the reason there is none (the agent fails the plan with it before Terraform
 * starts). Read afresh: the list at the moment the run starts.
 */
export async function terraformForJob(env: Pick<Bindings, "LATEST_ENGINE_VERSION">, db: Db, requested: string): Promise<JobTerraform> {
  const wanted = wantedOf(requested);
  if (!wanted)
    return {
      version: requested,
      archs: [],
      shasumsUrl: null,
      shasumsSignatureUrl: null,
      error: `"${requested}" is not a Terraform version or version constraint`,
    };
  const list = await candidates(db);
  if (list.length === 0) {
    const fallback = fallbackVersion(env);
    const fb = parseVersion(fallback);
    const runs =
      wanted.kind === "exact"
        ? wanted.version
        : wanted.kind === "latest" || (fb && !fb.prerelease && resolve(wanted, [{ version: fallback, enabled: true, official: true, beta: false }]))
          ? fallback
          : null;
    if (!runs) {
      return {
        version: requested,
        archs: [],
        shasumsUrl: null,
        shasumsSignatureUrl: null,
        error: `no Terraform version satisfies "${requested}": the service lists none`,
      };
    }
    return { version: runs, archs: [], shasumsUrl: null, shasumsSignatureUrl: null };
  }
  const version = resolve(wanted, list, { anyExact: true });
  const row = version ? await findVersionByNumber(db, version) : null;
  if (!row) {
    return {
      version: requested,
      archs: [],
      shasumsUrl: null,
      shasumsSignatureUrl: null,
      error: refusal(requested, wanted, list) ?? `Terraform ${requested} is not listed`,
    };
  }
  return { version: row.version, archs: row.archs, shasumsUrl: row.shasumsUrl, shasumsSignatureUrl: row.shasumsSignatureUrl };
}

// ---- the site-admin API ----

const A = "/data/attributes";
const invalid = (detail: string, pointer: string) => ApiError.of("invalid_attribute", { detail, pointer });
const SHA256 = /^[0-9a-fA-F]{64}$/;

function checkUrl(url: string, pointer: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalid("url must be an http or https URL", pointer);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw invalid("url must be an http or https URL", pointer);
}

function checkArchs(archs: Arch[]): Arch[] {
  const seen = new Set<string>();
  return archs.map((a, i) => {
    const at = `${A}/archs/${i}`;
    checkUrl(a.url, `${at}/url`);
    if (!SHA256.test(a.sha)) throw invalid("sha must be a SHA-256 checksum (64 hexadecimal digits)", `${at}/sha`);
    if (a.os !== "linux") throw invalid("os must be linux", `${at}/os`);
    if (!ARCHES.includes(a.arch as (typeof ARCHES)[number])) throw invalid(`arch must be one of ${ARCHES.join(", ")}`, `${at}/arch`);
    if (seen.has(a.arch)) throw invalid(`archs lists ${a.arch} twice`, `${at}/arch`);
    seen.add(a.arch);
    return { url: a.url, sha: a.sha.toLowerCase(), os: a.os, arch: a.arch };
  });
}

/**
 * The builds a request describes: `archs` as sent, with `url` and `sha` (when sent too) naming its linux/amd64
 * entry; `url` and `sha` alone: that one build. `current`: the version's builds before an update.
 */
function buildsOf(a: VersionAttributes, current: Arch[] | null): Arch[] {
  if (a.archs) {
    const archs = checkArchs(a.archs);
    if (a.url !== undefined || a.sha !== undefined) {
      const amd64 = archs.find((x) => x.arch === "amd64");
      if (!amd64) throw invalid("url and sha describe the linux/amd64 build, which archs does not list", `${A}/archs`);
      if ((a.url !== undefined && a.url !== amd64.url) || (a.sha !== undefined && a.sha.toLowerCase() !== amd64.sha)) {
        throw invalid("url and sha must be those of the linux/amd64 entry of archs", `${A}/url`);
      }
    }
    return archs;
  }
  const amd64 = current?.find((x) => x.arch === "amd64");
  const url = a.url ?? amd64?.url;
  const sha = a.sha ?? amd64?.sha;
  if (!url) throw invalid("url is required (or archs)", `${A}/url`);
  if (!sha) throw invalid("sha is required (or archs)", `${A}/sha`);
  checkUrl(url, `${A}/url`);
  if (!SHA256.test(sha)) throw invalid("sha must be a SHA-256 checksum (64 hexadecimal digits)", `${A}/sha`);
  return [{ url, sha: sha.toLowerCase(), os: "linux", arch: "amd64" }];
}

function checkVersionNumber(version: string): void {
  if (!LISTABLE_VERSION.test(version)) {
    throw invalid('version must be a semantic version in N.N.N or N.N.N-name format (e.g. "1.5.7", "1.6.0-beta1")', `${A}/version`);
  }
}

/** A version with its builds and flags applied; `url`/`sha` follow its linux/amd64 build. */
function withBuilds(v: TerraformVersion, archs: Arch[]): TerraformVersion {
  const amd64 = archs.find((x) => x.arch === "amd64");
  return { ...v, archs, url: amd64?.url ?? "", sha: amd64?.sha ?? "" };
}

const taken = () => invalid("Version has already been taken", `${A}/version`);

async function usage(caller: Caller, versions: TerraformVersion[]): Promise<Map<string, number>> {
  return usageOf(
    caller.db,
    versions.map((v) => v.version),
  );
}

export async function listTerraformVersions(
  caller: Caller,
  q: { filter?: string; search?: string },
  page: Page,
): Promise<{ items: Array<{ version: TerraformVersion; usage: number }>; total: number }> {
  authorize(caller, "site-admin");
  // The site admin's read also starts a sync that is due.
  await readList(caller, true);
  const { versions, total } = await listVersions(caller.db, q, page);
  const counts = await usage(caller, versions);
  return { items: versions.map((version) => ({ version, usage: counts.get(version.version) ?? 0 })), total };
}

export async function showTerraformVersion(caller: Caller, id: string): Promise<{ version: TerraformVersion; usage: number }> {
  authorize(caller, "site-admin");
  const version = await findVersion(caller.db, id);
  if (!version) throw ApiError.of("not_found");
  return { version, usage: (await usage(caller, [version])).get(version.version) ?? 0 };
}

export async function createTerraformVersion(caller: Caller, a: VersionAttributes): Promise<{ version: TerraformVersion; usage: number }> {
  authorize(caller, "site-admin");
  if (!a.version) throw invalid("version is required", `${A}/version`);
  checkVersionNumber(a.version);
  const deprecated = a.deprecated ?? false;
  const v = withBuilds(
    {
      id: newId("tool"),
      version: a.version,
      sortKey: sortKey(a.version),
      prerelease: Boolean(parseVersion(a.version)?.prerelease),
      url: "",
      sha: "",
      archs: [],
      official: a.official ?? false,
      enabled: a.enabled ?? true,
      beta: a.beta ?? false,
      deprecated,
      deprecatedReason: deprecated ? (a["deprecated-reason"] ?? null) : null,
      shasumsUrl: null,
      shasumsSignatureUrl: null,
      createdAt: nowIso(),
    },
    buildsOf(a, null),
  );
  if (!(await insertVersion(caller.db, v))) throw taken();
  forgetCachedList();
  return { version: v, usage: 0 };
}

export async function updateTerraformVersion(caller: Caller, id: string, a: VersionAttributes): Promise<{ version: TerraformVersion; usage: number }> {
  authorize(caller, "site-admin");
  const current = await findVersion(caller.db, id);
  if (!current) throw ApiError.of("not_found");
  if (a.version !== undefined) checkVersionNumber(a.version);
  const version = a.version ?? current.version;
  const deprecated = a.deprecated ?? current.deprecated;
  const builds = a.archs !== undefined || a.url !== undefined || a.sha !== undefined ? buildsOf(a, current.archs) : current.archs;
  const next = withBuilds(
    {
      ...current,
      version,
      sortKey: sortKey(version),
      prerelease: Boolean(parseVersion(version)?.prerelease),
      official: a.official ?? current.official,
      enabled: a.enabled ?? current.enabled,
      beta: a.beta ?? current.beta,
      deprecated,
      deprecatedReason: deprecated ? (a["deprecated-reason"] !== undefined ? a["deprecated-reason"] : current.deprecatedReason) : null,
      // A version renamed or given other builds is no longer the release its checksums file describes.
      ...(version !== current.version || builds !== current.archs ? { shasumsUrl: null, shasumsSignatureUrl: null } : {}),
    },
    builds,
  );
  if (!(await updateVersion(caller.db, next))) {
    if (await findVersion(caller.db, id)) throw taken();
    throw ApiError.of("not_found");
  }
  forgetCachedList();
  return { version: next, usage: (await usage(caller, [next])).get(next.version) ?? 0 };
}

/** Terraform Enterprise's rule: an official version, or one a workspace uses, is not removed (422). */
export async function deleteTerraformVersion(caller: Caller, id: string): Promise<void> {
  authorize(caller, "site-admin");
  const v = await findVersion(caller.db, id);
  if (!v) throw ApiError.of("not_found");
  if (v.official) throw ApiError.of("terraform_version_in_use", { detail: `Terraform ${v.version} cannot be removed: it is an official version` });
  const used = (await usage(caller, [v])).get(v.version) ?? 0;
  if (used > 0) {
    throw ApiError.of("terraform_version_in_use", { detail: `Terraform ${v.version} cannot be removed: ${used} workspace(s) use it` });
  }
  await deleteVersion(caller.db, id);
  forgetCachedList();
}
