/**
 * GitLab's REST API v4 (docs.gitlab.com/api: projects, project webhooks, commits "Set the pipeline status of a
 * commit", repositories "Get file archive", "Compare branches, tags or commits", merge requests diffs) and its webhook
 * deliveries ("Webhook events": Push Hook, Tag Push Hook, Merge Request Hook; the secret token in X-Gitlab-Token).
 */
import type { ParsedDelivery, StatusState, VcsClient, VcsConnection, VcsEvent, VcsFetch } from "../vcs.types";
import { VcsError } from "../vcs.types";
import { bytes, call, cut, json, pushPaths, sameSecret, sha256Hex, ZERO_SHA } from "./http";

const STATE: Record<StatusState, string> = { pending: "pending", success: "success", failure: "failed", error: "canceled" };

export function client(conn: VcsConnection, fetch: VcsFetch): VcsClient {
  const api = conn.apiUrl.replace(/\/+$/, "");
  const headers = { "PRIVATE-TOKEN": conn.token };
  const p = (repo: string, rest = "") => `${api}/projects/${encodeURIComponent(repo)}${rest}`;
  return {
    async createHook(repo, url, secret) {
      const res = await call(fetch, p(repo, "/hooks"), {
        method: "POST",
        headers,
        body: { url, token: secret, push_events: true, tag_push_events: true, merge_requests_events: true, enable_ssl_verification: true },
      });
      return String((await json<{ id: number }>(res)).id);
    },
    async deleteHook(repo, hookId) {
      await call(fetch, p(repo, `/hooks/${encodeURIComponent(hookId)}`), { method: "DELETE", headers, ok: [404] });
    },
    async archive(repo, sha) {
      return bytes(await call(fetch, p(repo, `/repository/archive.tar.gz?sha=${encodeURIComponent(sha)}`), { headers }));
    },
    async branchHead(repo, branch) {
      const info = await json<{ default_branch: string }>(await call(fetch, p(repo), { headers }));
      const name = branch || info.default_branch;
      const b = await json<{ commit: { id: string; message?: string; web_url?: string; author_name?: string } }>(
        await call(fetch, p(repo, `/repository/branches/${encodeURIComponent(name)}`), { headers }),
      );
      return {
        sha: b.commit.id,
        message: b.commit.message?.trim() ?? null,
        url: b.commit.web_url ?? null,
        author: { username: b.commit.author_name ?? null, avatarUrl: null, htmlUrl: null },
        branch: name,
        defaultBranch: info.default_branch,
      };
    },
    async pullRequestFiles(repo, number) {
      const paths: string[] = [];
      let page = "1";
      for (let i = 0; i < 30 && page; i++) {
        const res = await call(fetch, p(repo, `/merge_requests/${number}/diffs?per_page=100&page=${page}`), { headers });
        for (const d of await json<Array<{ old_path: string; new_path: string }>>(res))
          paths.push(d.new_path, ...(d.old_path !== d.new_path ? [d.old_path] : []));
        page = res.headers.get("x-next-page") ?? "";
      }
      return page ? null : paths;
    },
    async compareFiles(repo, base, head) {
      const res = await call(fetch, p(repo, `/repository/compare?from=${encodeURIComponent(base)}&to=${encodeURIComponent(head)}`), { headers, ok: [404] });
      if (res.status === 404) return null;
      const body = await json<{ diffs?: Array<{ old_path: string; new_path: string }>; compare_timeout?: boolean }>(res);
      if (!body.diffs || body.compare_timeout) return null;
      return body.diffs.flatMap((d) => (d.old_path !== d.new_path ? [d.new_path, d.old_path] : [d.new_path]));
    },
    async setStatus(repo, sha, s) {
      try {
        await call(fetch, p(repo, `/statuses/${encodeURIComponent(sha)}`), {
          method: "POST",
          headers,
          body: { state: STATE[s.state], name: s.context, target_url: s.targetUrl, description: cut(s.description, 140) },
        });
      } catch (err) {
        // GitLab refuses a status already in that state ("Cannot transition status via :enqueue from :pending"): it
        // shows what was to be posted.
        if (err instanceof VcsError && err.status === 400 && /Cannot transition status/.test(err.message)) return;
        throw err;
      }
    },
  };
}

export function verifyDelivery(headers: Headers, _body: Uint8Array, secret: string): Promise<boolean> {
  return sameSecret(headers.get("x-gitlab-token"), secret);
}

// biome-ignore lint/suspicious/noExplicitAny: a delivery's payload as the host sent it, read field by field
type Payload = any;
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

export async function parseDelivery(headers: Headers, p: Payload, raw: Uint8Array | null = null): Promise<ParsedDelivery> {
  const eventName = headers.get("x-gitlab-event") ?? "";
  const deliveryId = headers.get("idempotency-key") ?? headers.get("x-gitlab-event-uuid") ?? (raw ? await sha256Hex(raw) : crypto.randomUUID());
  const none = (ignored: string): ParsedDelivery => ({ deliveryId, eventName, event: null, ignored });
  const project = p?.project ?? {};
  const base = {
    repo: String(project.path_with_namespace ?? ""),
    defaultBranch: str(project.default_branch),
    cloneUrl: str(project.git_http_url),
    repoUrl: str(project.web_url),
  };
  if (!base.repo) return none(`${eventName || "a delivery"} without a project`);
  if (eventName === "Push Hook" || eventName === "Tag Push Hook") {
    const ref = String(p.ref ?? "");
    const isTag = eventName === "Tag Push Hook" || ref.startsWith("refs/tags/");
    const after = String(p.after ?? "");
    const deleted = ZERO_SHA.test(after) || p.checkout_sha === null;
    const created = ZERO_SHA.test(String(p.before ?? ""));
    const commits = Array.isArray(p.commits) ? p.commits : [];
    const head = commits.find((c: Payload) => c.id === p.checkout_sha) ?? commits[commits.length - 1];
    const name = ref.replace(/^refs\/(heads|tags)\//, "");
    const event: VcsEvent = {
      ...base,
      type: isTag ? "tag" : "push",
      action: deleted ? "deleted" : created ? "created" : "updated",
      // An annotated tag's `after` is the tag object; `checkout_sha` is its commit.
      sha: deleted ? String(p.before ?? "") : (str(p.checkout_sha) ?? after),
      before: created ? null : str(p.before),
      branch: isTag ? null : name,
      tag: isTag ? name : null,
      // GitLab lists at most 20 commits in a push (`total_commits_count` says how many there were).
      paths: created || isTag || Number(p.total_commits_count ?? commits.length) > commits.length ? null : pushPaths(commits),
      forced: false,
      commitMessage: str(head?.message)?.trim() ?? null,
      commitUrl: str(head?.url),
      compareUrl: base.repoUrl && !created && !deleted ? `${base.repoUrl}/-/compare/${p.before}...${after}` : null,
      pullRequest: null,
      sender: { username: str(p.user_username), avatarUrl: str(p.user_avatar), htmlUrl: null },
    };
    return { deliveryId, eventName, event };
  }
  if (eventName === "Merge Request Hook") {
    const mr = p.object_attributes ?? {};
    const raw = String(mr.action ?? "");
    // An update without `oldrev` changed the merge request's details, not its commits.
    const action: VcsEvent["action"] =
      raw === "open"
        ? "opened"
        : raw === "reopen"
          ? "reopened"
          : raw === "update" && mr.oldrev
            ? "updated"
            : raw === "close"
              ? "closed"
              : raw === "merge"
                ? "merged"
                : "other";
    const sha = String(mr.last_commit?.id ?? "");
    const event: VcsEvent = {
      ...base,
      type: "pull_request",
      action,
      sha,
      before: str(mr.oldrev),
      branch: str(mr.source_branch),
      tag: null,
      paths: null,
      forced: false,
      commitMessage: str(mr.last_commit?.message)?.trim() ?? str(mr.title),
      commitUrl: str(mr.last_commit?.url),
      compareUrl: str(mr.url),
      pullRequest: {
        number: Number(mr.iid),
        title: String(mr.title ?? ""),
        body: str(mr.description),
        url: String(mr.url ?? ""),
        headBranch: String(mr.source_branch ?? ""),
        baseBranch: String(mr.target_branch ?? ""),
        fromFork: mr.source_project_id !== undefined && mr.target_project_id !== undefined && mr.source_project_id !== mr.target_project_id,
      },
      sender: { username: str(p.user?.username), avatarUrl: str(p.user?.avatar_url), htmlUrl: null },
    };
    return { deliveryId, eventName, event };
  }
  return none(`event ${eventName || "(none)"} is not acted on`);
}
