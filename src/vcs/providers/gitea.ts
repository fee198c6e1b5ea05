/**
 * Gitea's (and Forgejo's) API v1 (`<host>/api/v1`; Gitea API docs: repos hooks, statuses, archive, branches,
 * pulls/{index}/files) and its deliveries, which carry GitHub's headers and signature beside their own, so the
 * GitHub-shaped parsing reads them (providers/github.ts).
 */
import type { ParsedDelivery, VcsClient, VcsConnection, VcsFetch } from "../vcs.types";
import { parseGitHubShaped } from "./github";
import { bytes, call, cut, json, repoPath, verifyHmacSha256 } from "./http";

export function client(conn: VcsConnection, fetch: VcsFetch): VcsClient {
  const api = conn.apiUrl.replace(/\/+$/, "");
  const headers = { Authorization: `token ${conn.token}` };
  const r = (repo: string, rest = "") => `${api}/repos/${repoPath(repo)}${rest}`;
  return {
    async createHook(repo, url, secret) {
      const res = await call(fetch, r(repo, "/hooks"), {
        method: "POST",
        headers,
        body: { type: "gitea", active: true, events: ["push", "pull_request"], config: { url, content_type: "json", secret } },
      });
      return String((await json<{ id: number }>(res)).id);
    },
    async deleteHook(repo, hookId) {
      await call(fetch, r(repo, `/hooks/${encodeURIComponent(hookId)}`), { method: "DELETE", headers, ok: [404] });
    },
    async archive(repo, sha) {
      return bytes(await call(fetch, r(repo, `/archive/${encodeURIComponent(sha)}.tar.gz`), { headers }));
    },
    async branchHead(repo, branch) {
      const info = await json<{ default_branch: string }>(await call(fetch, r(repo), { headers }));
      const name = branch || info.default_branch;
      const b = await json<{ commit: { id: string; message?: string; url?: string; author?: { username?: string; name?: string } } }>(
        await call(fetch, r(repo, `/branches/${encodeURIComponent(name)}`), { headers }),
      );
      return {
        sha: b.commit.id,
        message: b.commit.message?.trim() ?? null,
        url: b.commit.url ?? null,
        author: { username: b.commit.author?.username ?? b.commit.author?.name ?? null, avatarUrl: null, htmlUrl: null },
        branch: name,
        defaultBranch: info.default_branch,
      };
    },
    async pullRequestFiles(repo, number) {
      const paths: string[] = [];
      for (let page = 1; page <= 30; page++) {
        const files = await json<Array<{ filename: string; previous_filename?: string }>>(
          await call(fetch, r(repo, `/pulls/${number}/files?page=${page}&limit=50`), { headers }),
        );
        for (const f of files) paths.push(f.filename, ...(f.previous_filename ? [f.previous_filename] : []));
        if (files.length < 50) return paths;
      }
      return null;
    },
    // Gitea's pushes list each commit's files, so a push rarely needs this: unknown means every workspace runs.
    async compareFiles() {
      return null;
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

export function verifyDelivery(headers: Headers, body: Uint8Array, secret: string): Promise<boolean> {
  const bare = headers.get("x-gitea-signature");
  return verifyHmacSha256(headers.get("x-hub-signature-256") ?? (bare ? `sha256=${bare}` : null), body, secret);
}

export function parseDelivery(headers: Headers, body: unknown, raw: Uint8Array | null = null): Promise<ParsedDelivery> {
  return parseGitHubShaped(headers, body, raw);
}
