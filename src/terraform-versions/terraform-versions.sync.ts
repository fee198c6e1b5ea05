/**
 * Seeding the list of Terraform versions from a releases index (TERRAFORM_RELEASES_URL: HashiCorp's
 * `https://releases.hashicorp.com/terraform/index.json` in production; "" seeds nothing). No request waits for it: a
 * read of the list that finds it stale (never synced, or last synced over SYNC_EVERY_MS ago) starts a sync in the
 * background (`waitUntil`) under a lease in D1, so concurrent readers start one. A sync adds the releases it has not
 * added before, each with the SHA-256 of its linux builds from the release's SHA256SUMS; it reads at most
 * SHASUMS_PER_SYNC of those files (a Worker's subrequests are bounded), newest first, and leaves the rest pending
 * for the next sync, which then comes after PENDING_EVERY_MS. It never changes or removes a listed version, and a
 * version an admin deleted is not added again.
 */
import type { Bindings } from "../env";
import type { Db } from "../caller";
import { newId, nowIso } from "../ids";
import { OutboundError, outboundGet } from "../platform/outbound";
import { addSynced, candidates, claimSync, endSync, seenVersions, type SyncState, type TerraformVersion } from "./terraform-versions.d1";
import { archsOf, readIndex, readShasums, sortKey } from "./terraform-versions.rules";

export const SYNC_EVERY_MS = 60 * 60_000;
export const PENDING_EVERY_MS = 60_000;
export const SHASUMS_PER_SYNC = 40;
const INDEX_MAX_BYTES = 64 * 1024 * 1024;
const SHASUMS_MAX_BYTES = 256 * 1024;
const TIMEOUT_MS = 20_000;

type SyncEnv = Pick<Bindings, "TERRAFORM_RELEASES_URL" | "OUTBOUND_ALLOW_PRIVATE">;

/** Whether the list should be read from the source again now. */
export function syncDue(env: SyncEnv, state: SyncState | null, nowMs: number): boolean {
  const source = env.TERRAFORM_RELEASES_URL ?? "";
  if (!source) return false;
  if (!state || state.source !== source) return true;
  return Date.parse(state.startedAt) < nowMs - (state.pending > 0 ? PENDING_EVERY_MS : SYNC_EVERY_MS);
}

export interface SyncOutcome {
  ran: boolean;
  added: string[];
  pending: number;
  error: string | null;
}

/**
 * One sync, when its lease can be taken (`force`: whatever the time of the last one). `self`: the service's own
 * origin, which is never requested.
 */
export async function syncReleases(env: SyncEnv, db: Db, opts: { self: string | null; force?: boolean; now?: number }): Promise<SyncOutcome> {
  const source = env.TERRAFORM_RELEASES_URL ?? "";
  if (!source) return { ran: false, added: [], pending: 0, error: null };
  const now = opts.now ?? Date.now();
  const staleBefore = new Date(opts.force ? now + 1 : now - PENDING_EVERY_MS).toISOString();
  if (!(await claimSync(db, source, new Date(now).toISOString(), staleBefore))) return { ran: false, added: [], pending: 0, error: null };
  const get = (url: string, maxBytes: number) => outboundGet(env, url, { self: opts.self, timeoutMs: TIMEOUT_MS, maxBytes });
  try {
    let index: unknown;
    try {
      index = JSON.parse(new TextDecoder().decode(await get(source, INDEX_MAX_BYTES)));
    } catch (err) {
      throw err instanceof OutboundError ? err : new OutboundError(`${source} is not a JSON releases index`);
    }
    const releases = readIndex(source, index);
    if (releases.length === 0) throw new OutboundError(`${source} lists no release with a linux build`);
    const [seen, listed] = await Promise.all([seenVersions(db), candidates(db)]);
    const known = new Set([...seen, ...listed.map((c) => c.version)]);
    const todo = releases.filter((r) => !known.has(r.version) && r.shasumsUrl);
    const added: TerraformVersion[] = [];
    let failed = 0;
    for (const release of todo.slice(0, SHASUMS_PER_SYNC)) {
      let sums: Map<string, string>;
      try {
        sums = readShasums(new TextDecoder().decode(await get(release.shasumsUrl as string, SHASUMS_MAX_BYTES)));
      } catch {
        failed++;
        continue;
      }
      const archs = archsOf(release, sums);
      if (!archs) {
        failed++;
        continue;
      }
      const amd64 = archs.find((a) => a.arch === "amd64");
      added.push({
        id: newId("tool"),
        version: release.version,
        sortKey: sortKey(release.version),
        prerelease: release.prerelease,
        url: amd64?.url ?? "",
        sha: amd64?.sha ?? "",
        archs,
        official: true,
        enabled: true,
        beta: release.prerelease,
        deprecated: false,
        deprecatedReason: null,
        shasumsUrl: release.shasumsUrl,
        shasumsSignatureUrl: release.shasumsSignatureUrl,
        createdAt: nowIso(),
      });
    }
    await addSynced(db, added);
    const pending = todo.length - added.length;
    const error = failed > 0 ? `${failed} release(s) without a readable SHA256SUMS naming their linux builds; retried later` : null;
    await endSync(db, { at: nowIso(), read: true, error, pending });
    return { ran: true, added: added.map((v) => v.version), pending, error };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    await endSync(db, { at: nowIso(), read: false, error, pending: 0 }).catch(() => undefined);
    return { ran: true, added: [], pending: 0, error };
  }
}
