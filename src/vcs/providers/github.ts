/**
 * GitHub's REST API (github.com and GitHub Enterprise Server under `<host>/api/v3`) and its webhook deliveries
 * (docs.github.com: "Webhook events and payloads", "Validating webhook deliveries", REST "Repository webhooks",
 * "Commit statuses", "Download a repository archive (tar)", "List pull requests files", "Compare two commits").
 * Gitea speaks a dialect of it (providers/gitea.ts reuses the delivery parsing).
 */
import type { CommitInfo, ParsedDelivery, VcsClient, VcsConnection, VcsEvent, VcsFetch } from "../vcs.types";
import { bytes, call, cut, json, repoPath, nextLink, pushPaths, sha256Hex, verifyHmacSha256, ZERO_SHA } from "./http";

/** The most files GitHub lists for a pull request (later ones are not listed at all). */
const PR_FILES_MAX = 3000;
/** The most files the compare API lists. */
const COMPARE_FILES_MAX = 300;

export function client(conn: VcsConnection, fetch: VcsFetch): VcsClient {
  const api = conn.apiUrl.replace(/\/+$/, "");
  const headers = { Authorization: `Bearer ${conn.token}`, Accept: "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28" };
  const r = (repo: string, rest = "") => `${api}/repos/${repoPath(repo)}${rest}`;
  return {
    async createHook(repo, url, secret) {
      const res = await call(fetch, r(repo, "/hooks"), {
        method: "POST",
        headers,
        body: { name: "web", active: true, events: ["push", "pull_request"], config: { url, content_type: "json", secret, insecure_ssl: "0" } },
      });
      return String((await json<{ id: number }>(res)).id);
    },
    async deleteHook(repo, hookId) {
      await call(fetch, r(repo, `/hooks/${encodeURIComponent(hookId)}`), { method: "DELETE", headers, ok: [404] });
    },
    async archive(repo, sha) {
      return bytes(await call(fetch, r(repo, `/tarball/${encodeURIComponent(sha)}`), { headers }));
    },
    async branchHead(repo, branch) {
      const info = await json<{ default_branch: string; html_url: string }>(await call(fetch, r(repo), { headers }));
      const name = branch || info.default_branch;
      const c = await json<GhCommit>(await call(fetch, r(repo, `/commits/${encodeURIComponent(name)}`), { headers }));
      return { ...commitInfo(c), branch: name, defaultBranch: info.default_branch };
    },
    async pullRequestFiles(repo, number) {
      const paths: string[] = [];
      let url: string | null = r(repo, `/pulls/${number}/files?per_page=100`);
      while (url) {
        const res = await call(fetch, url, { headers });
        for (const f of await json<Array<{ filename: string; previous_filename?: string }>>(res)) {
          paths.push(f.filename);
          if (f.previous_filename) paths.push(f.previous_filename);
        }
        if (paths.length >= PR_FILES_MAX) return null;
        url = nextLink(res);
      }
      return paths;
    },
    async compareFiles(repo, base, head) {
      const res = await call(fetch, r(repo, `/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`), { headers, ok: [404] });
      if (res.status === 404) return null;
      const body = await json<{ files?: Array<{ filename: string; previous_filename?: string }> }>(res);
      if (!body.files || body.files.length >= COMPARE_FILES_MAX) return null;
      return body.files.flatMap((f) => (f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]));
    },
    async setStatus(repo, sha, s) {
      await call(fetch, r(repo, `/statuses/${encodeURIComponent(sha)}`), {
        method: "POST",
        headers,
        body: { state: s.state, target_url: s.targetUrl, description: cut(s.description, 140), context: s.context },
      });
    },
  };
}

interface GhCommit {
  sha: string;
  html_url?: string;
  commit?: { message?: string };
  author?: { login?: string; avatar_url?: string; html_url?: string } | null;
}

function commitInfo(c: GhCommit): CommitInfo {
  return {
    sha: c.sha,
    message: c.commit?.message?.trim() ?? null,
    url: c.html_url ?? null,
    author: { username: c.author?.login ?? null, avatarUrl: c.author?.avatar_url ?? null, htmlUrl: c.author?.html_url ?? null },
  };
}

export function verifyDelivery(headers: Headers, body: Uint8Array, secret: string): Promise<boolean> {
  return verifyHmacSha256(headers.get("x-hub-signature-256"), body, secret);
}

// biome-ignore lint/suspicious/noExplicitAny: a delivery's payload as the host sent it, read field by field
type Payload = any;

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function sender(p: Payload) {
  const s = p?.sender ?? {};
  return { username: str(s.login) ?? str(s.username), avatarUrl: str(s.avatar_url), htmlUrl: str(s.html_url) };
}

/**
 * A GitHub-shaped delivery (GitHub's own, and Gitea's, which sends the same headers and close payloads: `synchronized`
 * for a pull request's new head, no `created`/`deleted`/`forced` on pushes, `compare_url` for `compare`).
 */
export async function parseGitHubShaped(headers: Headers, p: Payload, body: Uint8Array | null): Promise<ParsedDelivery> {
  const eventName = headers.get("x-github-event") ?? headers.get("x-gitea-event") ?? "";
  const deliveryId = headers.get("x-github-delivery") ?? headers.get("x-gitea-delivery") ?? (body ? await sha256Hex(body) : crypto.randomUUID());
  const none = (ignored: string): ParsedDelivery => ({ deliveryId, eventName, event: null, ignored });
  const repo = p?.repository ?? {};
  const base = {
    repo: String(repo.full_name ?? ""),
    defaultBranch: str(repo.default_branch),
    cloneUrl: str(repo.clone_url),
    repoUrl: str(repo.html_url),
    sender: sender(p),
  };
  if (!base.repo) return none(`${eventName || "a delivery"} without a repository`);
  if (eventName === "push") {
    const ref = String(p.ref ?? "");
    const after = String(p.after ?? "");
    const deleted = p.deleted === true || ZERO_SHA.test(after);
    const created = p.created === true || ZERO_SHA.test(String(p.before ?? ""));
    const head = p.head_commit ?? (Array.isArray(p.commits) ? p.commits[p.commits.length - 1] : null);
    const isTag = ref.startsWith("refs/tags/");
    if (!isTag && !ref.startsWith("refs/heads/")) return none(`a push to ${ref}`);
    const name = ref.replace(/^refs\/(heads|tags)\//, "");
    const event: VcsEvent = {
      ...base,
      type: isTag ? "tag" : "push",
      action: deleted ? "deleted" : created ? "created" : "updated",
      sha: deleted ? String(p.before ?? "") : after,
      before: created || ZERO_SHA.test(String(p.before ?? "")) ? null : str(p.before),
      branch: isTag ? null : name,
      tag: isTag ? name : null,
      paths: p.forced === true || created || isTag ? null : pushPaths(p.commits),
      forced: p.forced === true,
      commitMessage: str(head?.message)?.trim() ?? null,
      commitUrl: str(head?.url),
      compareUrl: str(p.compare) ?? str(p.compare_url),
      pullRequest: null,
    };
    return { deliveryId, eventName, event };
  }
  if (eventName === "pull_request") {
    const pr = p.pull_request ?? {};
    const action = String(p.action ?? "");
    const mapped: VcsEvent["action"] =
      action === "opened"
        ? "opened"
        : action === "synchronize" || action === "synchronized"
          ? "updated"
          : action === "reopened"
            ? "reopened"
            : action === "closed"
              ? pr.merged
                ? "merged"
                : "closed"
              : "other";
    const headRepo = str(pr.head?.repo?.full_name);
    const baseRepo = str(pr.base?.repo?.full_name) ?? base.repo;
    const sha = String(pr.head?.sha ?? "");
    const event: VcsEvent = {
      ...base,
      type: "pull_request",
      action: mapped,
      sha,
      before: str(p.before),
      branch: str(pr.head?.ref),
      tag: null,
      paths: null,
      forced: false,
      commitMessage: str(pr.title),
      commitUrl: base.repoUrl ? `${base.repoUrl}/commit/${sha}` : null,
      compareUrl: str(pr.html_url),
      pullRequest: {
        number: Number(pr.number ?? p.number),
        title: String(pr.title ?? ""),
        body: str(pr.body),
        url: String(pr.html_url ?? ""),
        headBranch: String(pr.head?.ref ?? ""),
        baseBranch: String(pr.base?.ref ?? ""),
        fromFork: headRepo !== null && headRepo.toLowerCase() !== baseRepo.toLowerCase(),
      },
    };
    return { deliveryId, eventName, event };
  }
  return none(eventName === "ping" ? "ping" : `event ${eventName || "(none)"} is not acted on`);
}

export function parseDelivery(headers: Headers, body: unknown, raw: Uint8Array | null = null): Promise<ParsedDelivery> {
  return parseGitHubShaped(headers, body, raw);
}
