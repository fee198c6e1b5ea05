/**
 * The workspace object's connected repository: deliveries handed over by the ingress wait in its inbox and are worked
 * from the object's alarm, never in the request that brought them. It keeps the repository's hook registered (and
 * lets it go when the workspace disconnects), turns a push, tag or pull request into a configuration version of that
 * commit and a run, skips a commit it already ran, and posts the commit statuses its runs owe the host. Anything the
 * host fails is retried with backoff.
 */
import type { ConfigurationVersions } from "../configuration-versions/configuration-versions.object";
import { CV_PART_BYTES } from "../configuration-versions/configuration-versions.store";
import type { Bindings } from "../env";
import { ok, type Result } from "../errors";
import { newId, nowIso } from "../ids";
import { LIMITS } from "../limits";
import { findOrganization } from "../organizations/organizations.d1";
import type { Runs } from "../runs/runs.object";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, metaValue, present, setMeta, VCS_TABLES } from "../workspaces/workspace.migrations";
import { effectiveExecution, isFailure, type Defaults } from "../workspaces/workspace.rules";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { repackArchive } from "./archive";
import { triggers } from "./file-filter.rules";
import { releaseHook, syncHook } from "./vcs-hooks.service";
import { connectionOf, vcsClient, type Connected } from "./vcs.connection";
import { decide, ingressOf, statusContext, statusOf } from "./vcs.rules";
import * as store from "./vcs.store";
import type { VcsEvent } from "./vcs.types";

export interface VcsDeliveryInput {
  deliveryId: string;
  event: VcsEvent;
  /** The service's origin as the host reached it (statuses link the run page there). */
  origin: string;
  receivedAt: string;
}

export interface VcsDeps {
  env: Bindings;
  /** The execution defaults the workspace inherits (from the index); null when its organisation is gone. */
  defaults: (w: WorkspaceRecord) => Promise<Defaults | null>;
  /** Whether the index has every commit of the workspace (a hook is let go only when it sees the disconnect). */
  indexed: () => boolean;
}

const MAX_ATTEMPTS = 8;
const backoff = (attempts: number) => Date.now() + Math.min(3_600_000, 5_000 * 2 ** attempts);
const SOURCE = { github: "github", gitlab: "gitlab", gitea: "gitea" } as const;

export class Vcs {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly runs: Pick<Runs, "ofConfigurationVersion" | "any" | "action">,
    private readonly cvs: Pick<ConfigurationVersions, "create" | "appendUpload" | "completeUpload">,
    private readonly deps: VcsDeps,
  ) {}

  private get made(): boolean {
    return present(this.host.sql, VCS_TABLES);
  }

  /** A delivery's event for this workspace, queued for the alarm (a delivery already queued is not queued twice). */
  receive(input: VcsDeliveryInput): Result<{ queued: boolean }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    if (!w.settings["vcs-repo"]) return ok({ queued: false });
    return ok({ queued: store.enqueue(ensure(this.host.sql, VCS_TABLES), input, Date.now()) });
  }

  /** The origin a connecting request reached the service at: the hook delivers there unless PUBLIC_URL says otherwise. */
  noteOrigin(origin: string | undefined): void {
    if (!origin) return;
    ensure(this.host.sql, VCS_TABLES);
    setMeta(this.host.sql, "vcs_origin", origin);
  }

  private origin(): string | null {
    const configured = this.deps.env.PUBLIC_URL;
    if (configured) return configured.replace(/\/+$/, "");
    return metaValue(this.host.sql, "vcs_origin");
  }

  /** When the alarm must next work for it (epoch ms), or null. `w`: the live record, as the object read it (null: none). */
  due(w: WorkspaceRecord | null): number | null {
    const want = w ? wanted(w) : null;
    if (!this.made) return want ? Date.now() : null;
    const times: number[] = [];
    const link = store.getLink(this.host.sql);
    if (!sameLink(link, want) || (link && !link.synced)) times.push(link?.nextAt ?? 0);
    const inbox = store.earliestInbox(this.host.sql);
    if (inbox !== null) times.push(inbox);
    for (const r of store.openReports(this.host.sql)) {
      const run = this.runs.ofConfigurationVersion(r.cvId);
      if (!run) continue;
      const s = statusOf(run);
      if (r.posted !== `${s.state} ${s.description}`) times.push(r.nextAt);
    }
    return times.length ? Math.max(Date.now(), Math.min(...times)) : null;
  }

  /** The alarm's step. */
  async fire(): Promise<void> {
    const w = this.host.live();
    if (isFailure(w)) return;
    if (!this.made && !wanted(w)) return;
    ensure(this.host.sql, VCS_TABLES);
    await this.syncLink(w);
    await this.work();
    await this.report();
  }

  erase(): void {
    if (this.made) store.eraseVcs(this.host.sql);
  }

  // ---- the hook and the head commit ----

  private async syncLink(w: WorkspaceRecord): Promise<void> {
    const sql = this.host.sql;
    const want = wanted(w);
    const link = store.getLink(sql);
    if (sameLink(link, want) && link?.synced) return;
    if (link && link.nextAt > Date.now()) return;
    const origin = this.origin();
    if (link && (!want || link.tokenId !== want.tokenId || link.repo !== want.repo)) {
      // The index must show the workspace gone from the repository before the hook can be let go.
      if (!this.deps.indexed()) return;
      await releaseHook(this.deps.env, origin, link.tokenId, link.repo);
      store.dropLink(sql);
    }
    if (!want) return;
    const attempts = sameLink(link, want) ? (link?.attempts ?? 0) : 0;
    const retry = (error: string) => {
      log("warn", "VCS connection not synced; the alarm retries", { repo: want.repo, attempts: attempts + 1, error });
      store.putLink(sql, { ...want, synced: false, attempts: attempts + 1, nextAt: backoff(attempts), error });
    };
    if (!origin) return retry("the service's public URL is not known yet (set PUBLIC_URL)");
    const hook = await syncHook(this.deps.env, origin, want.tokenId, want.repo);
    if (hook.state !== "registered") return retry(hook.error);
    // The branch's head becomes the current configuration version, so a manual run plans the latest commit; with
    // `queue-all-runs` it runs at once.
    try {
      const connected = await connectionOf(this.deps.env, want.tokenId);
      if (!connected) return retry("the OAuth token is gone or has no token string");
      const head = await vcsClient(this.deps.env, connected.connection, origin).branchHead(w.settings["vcs-repo"]!.identifier, want.branch || null);
      const event: VcsEvent = {
        type: "push",
        action: "updated",
        repo: w.settings["vcs-repo"]!.identifier,
        sha: head.sha,
        before: null,
        branch: head.branch,
        tag: null,
        defaultBranch: head.defaultBranch,
        paths: null,
        forced: false,
        commitMessage: head.message,
        commitUrl: head.url,
        compareUrl: null,
        cloneUrl: null,
        repoUrl: connected.connection.httpUrl ? `${connected.connection.httpUrl}/${w.settings["vcs-repo"]!.identifier}` : null,
        pullRequest: null,
        sender: head.author,
      };
      const current = this.host.live();
      if (!isFailure(current) && !store.ranCommit(sql, "push", head.sha)) {
        await this.ingest(current, event, connected, origin, { speculative: false, queue: current.settings["queue-all-runs"] });
      }
    } catch (err) {
      return retry(err instanceof Error ? err.message : String(err));
    }
    store.putLink(sql, { ...want, synced: true, attempts: 0, nextAt: 0, error: null });
  }

  // ---- deliveries ----

  private async work(): Promise<void> {
    const sql = this.host.sql;
    for (const row of store.dueInbox(sql, Date.now(), 10)) {
      try {
        const outcome = await this.handle(row.event, row.origin);
        log("info", "VCS delivery handled", { delivery: row.deliveryId, outcome });
        store.dropInbox(sql, row.seq);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        if (row.attempts + 1 >= MAX_ATTEMPTS) {
          log("warn", "VCS delivery given up", { delivery: row.deliveryId, error });
          store.dropInbox(sql, row.seq);
        } else {
          store.retryInbox(sql, row.seq, backoff(row.attempts));
        }
      }
    }
  }

  /** What one delivery does here; throws when the host failed (the inbox retries it). */
  private async handle(e: VcsEvent, deliveryOrigin: string): Promise<string> {
    const w = this.host.live();
    if (isFailure(w)) return "the workspace is gone";
    const decision = decide(w, e);
    if (decision.kind === "skip") return decision.reason;
    const speculative = decision.kind === "speculative";
    const kind = speculative ? "pull_request" : "push";
    // HCP skips a commit the workspace already ran ("Processing skipped for duplicate commit SHA").
    if (store.ranCommit(this.host.sql, kind, e.sha)) return "Processing skipped for duplicate commit SHA";
    const connected = await connectionOf(this.deps.env, w.settings["vcs-repo"]!["oauth-token-id"] ?? "");
    if (!connected) return "the OAuth token is gone or has no token string";
    const origin = this.origin() ?? deliveryOrigin;
    const client = vcsClient(this.deps.env, connected.connection, origin);
    let paths = e.paths;
    if (speculative && e.pullRequest) paths = await client.pullRequestFiles(e.repo, e.pullRequest.number);
    else if (paths === null && e.before && e.action === "updated" && !e.forced) paths = await client.compareFiles(e.repo, e.before, e.sha);
    const filter = {
      fileTriggersEnabled: w.settings["file-triggers-enabled"],
      triggerPrefixes: w.settings["trigger-prefixes"],
      triggerPatterns: w.settings["trigger-patterns"],
      workingDirectory: w.settings["working-directory"],
    };
    if (!w.settings["vcs-repo"]!["tags-regex"] && !triggers(filter, paths)) {
      const org = speculative ? await findOrganization(this.deps.env.DB.withSession("first-primary"), { id: w.organizationId }) : null;
      if (org?.attrs["send-passing-statuses-for-untriggered-speculative-plans"] === true) {
        // A pull request the workspace ignores gets a passing status when the organisation asks for one (HCP's
        // "Send passing commit statuses for untriggered speculative plans").
        await client.setStatus(e.repo, e.sha, {
          state: "success",
          description: "No changes in the files this workspace watches",
          targetUrl: `${origin}/app/${encodeURIComponent(org.name)}/workspaces/${encodeURIComponent(w.name)}`,
          context: statusContext(org.name, w.name),
        });
      }
      return "no changed file matches the workspace's triggers";
    }
    if (speculative && e.pullRequest) await this.cancelOutdated(w, e.pullRequest.number, e.sha);
    const queue = speculative || w.settings["queue-all-runs"] || this.runs.any();
    return this.ingest(w, e, connected, origin, { speculative, queue });
  }

  /** The commit's archive as a configuration version of the workspace, queuing its run when `queue`. */
  private async ingest(w: WorkspaceRecord, e: VcsEvent, connected: Connected, origin: string, o: { speculative: boolean; queue: boolean }): Promise<string> {
    const defaults = (await this.deps.defaults(w)) ?? { executionMode: "local" as const, agentPoolId: null };
    const exec = effectiveExecution(w.settings, defaults);
    const raw = await vcsClient(this.deps.env, connected.connection, origin).archive(e.repo, e.sha);
    const archive = await repackArchive(raw, LIMITS.configurationBodyBytes);
    const queue = o.queue && exec.mode !== "local";
    const id = newId("cv");
    const now = nowIso();
    const created = await this.cvs.create({
      id,
      now,
      source: SOURCE[connected.connection.kind],
      speculative: o.speculative,
      // A pull request's version never becomes the workspace's current configuration.
      provisional: o.speculative,
      autoQueueRuns: queue,
      // The repository stands for the run's creator: it applies by itself where the workspace auto-applies.
      creator: { actor: null, canApply: true },
      agentPoolId: exec.agentPoolId,
      ingress: ingressOf(e),
    });
    if (!created.ok) throw new Error(`the configuration version could not be created: ${created.code}`);
    const upload = crypto.randomUUID();
    let at = 0;
    for (; at + CV_PART_BYTES < archive.byteLength; at += CV_PART_BYTES) {
      const piece = this.cvs.appendUpload({ id, upload, bytes: archive.subarray(at, at + CV_PART_BYTES) });
      if (!piece.ok) throw new Error(`the configuration version could not be stored: ${piece.code}`);
    }
    const sha256 = [...new Uint8Array(await crypto.subtle.digest("SHA-256", archive))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const done = await this.cvs.completeUpload({ id, upload, bytes: archive.subarray(at), sha256, now: nowIso() });
    if (!done.ok) throw new Error(`the configuration version could not be stored: ${done.code}`);
    const sql = this.host.sql;
    if (!queue)
      return `configuration version ${id} made current; no run (${exec.mode === "local" ? "local execution" : "the workspace waits for a first run"})`;
    store.markCommit(sql, o.speculative ? "pull_request" : "push", e.sha, now);
    store.addReport(sql, { cvId: id, tokenId: w.settings["vcs-repo"]!["oauth-token-id"]!, repo: e.repo, sha: e.sha, origin }, e.pullRequest?.number ?? null);
    return `configuration version ${id} and its ${o.speculative ? "speculative plan" : "run"} queued`;
  }

  /**
   * A new commit on a pull request cancels the plans of its earlier commits that have not finished, unless the
   * organisation turned `speculative-plan-management-enabled` off (HCP: "Automatically cancel plan-only runs triggered
   * by outdated commits").
   */
  private async cancelOutdated(w: WorkspaceRecord, pr: number, sha: string): Promise<void> {
    const org = await findOrganization(this.deps.env.DB.withSession("first-primary"), { id: w.organizationId });
    if (org?.attrs["speculative-plan-management-enabled"] === false) return;
    for (const cvId of store.earlierPlans(this.host.sql, pr, sha)) {
      const run = this.runs.ofConfigurationVersion(cvId);
      if (!run || !["pending", "plan_queued", "planning"].includes(run.status)) continue;
      await this.runs.action({
        runId: run.id,
        action: "cancel",
        comment: "A newer commit of the pull request was pushed",
        now: nowIso(),
        by: { actor: null, canApply: true },
      });
    }
  }

  // ---- commit statuses ----

  private async report(): Promise<void> {
    const sql = this.host.sql;
    const w = this.host.live();
    if (isFailure(w)) return;
    const open = store.openReports(sql);
    if (open.length === 0) return;
    let org: string | null = null;
    for (const r of open) {
      const run = this.runs.ofConfigurationVersion(r.cvId);
      if (!run || r.nextAt > Date.now()) continue;
      const s = statusOf(run);
      const posted = `${s.state} ${s.description}`;
      if (r.posted === posted) continue;
      org ??= await this.organizationName(w);
      try {
        const connected = await connectionOf(this.deps.env, r.tokenId);
        if (!connected) {
          store.reportFailed(sql, r.cvId, 0, true);
          continue;
        }
        await vcsClient(this.deps.env, connected.connection, r.origin).setStatus(r.repo, r.sha, {
          state: s.state,
          description: s.description,
          targetUrl: `${r.origin}/app/${encodeURIComponent(org)}/workspaces/${encodeURIComponent(w.name)}/runs/${run.id}`,
          context: statusContext(org, w.name),
        });
        store.reportPosted(sql, r.cvId, posted, s.final);
      } catch (err) {
        log("warn", "VCS status not posted", { run: run.id, error: err instanceof Error ? err.message : String(err) });
        store.reportFailed(sql, r.cvId, backoff(r.attempts), r.attempts + 1 >= MAX_ATTEMPTS);
      }
    }
  }

  private async organizationName(w: WorkspaceRecord): Promise<string> {
    const org = await findOrganization(this.deps.env.DB.withSession("first-primary"), { id: w.organizationId });
    return org?.name ?? w.organizationId;
  }
}

/** The (token, repository, branch) a workspace's record connects it to, or null. */
function wanted(w: WorkspaceRecord): { tokenId: string; repo: string; branch: string } | null {
  const r = w.settings["vcs-repo"];
  if (!r?.identifier || !r["oauth-token-id"]) return null;
  return { tokenId: r["oauth-token-id"], repo: r.identifier.toLowerCase(), branch: r.branch };
}

function sameLink(link: store.Link | null, want: ReturnType<typeof wanted>): boolean {
  if (!link || !want) return link === null && want === null;
  return link.tokenId === want.tokenId && link.repo === want.repo && link.branch === want.branch;
}

function log(level: "info" | "warn", msg: string, fields: Record<string, unknown>): void {
  console.log(JSON.stringify({ level, msg, ...fields }));
}
