// GitHub REST API fake (api.github.com and GHES /api/v3): hooks, statuses, tarball → codeload, pulls and their
// files, compare, branches, commits. Shapes and codes from docs.github.com/rest.
import { signGitHub, signGitHubSha1 } from "./deliveries";
import {
  DEFAULT_AUTHOR,
  type Deliver,
  type DeliveryResult,
  FakeHost,
  type FakeHook,
  type FakePull,
  type FakeRepo,
  type FakeCommit,
  type FakeStatus,
  fakeSha,
  json,
  parseJson,
} from "./fake-host";
import { tarGz } from "./tar";

export interface FakeGitHubOptions {
  /** The token requests must carry (`Authorization: token|Bearer <token>`); undefined accepts any. */
  token?: string;
  /** Web origin in html_url links; default https://github.com. */
  webUrl?: string;
}

const GITHUB_STATES = ["error", "failure", "pending", "success"];
const GITHUB_DOCS = "https://docs.github.com/rest";

/**
 * GitHub REST API fake. Answers `https://api.github.com/...` and `https://<any host>/api/v3/...` (GitHub Enterprise
 * Server) alike, and the archive download the tarball endpoint redirects to: `https://codeload.github.com/...` for
 * api.github.com, `<host>/_codeload/...` for a GHES host.
 */
export class FakeGitHub extends FakeHost {
  readonly webUrl: string;
  /** Hook pings requested through POST /hooks/{id}/pings. */
  readonly pings: FakeHook[] = [];

  constructor(options: FakeGitHubOptions = {}) {
    super(options.token);
    this.webUrl = options.webUrl ?? "https://github.com";
  }

  /** Sends `payload` as `event` to every active hook of `repo` subscribed to it, signed with the hook's secret. */
  async sendEvent(fullName: string, event: string, payload: unknown, deliver: Deliver, options: { deliveryId?: string } = {}): Promise<DeliveryResult[]> {
    const results: DeliveryResult[] = [];
    for (const hook of this.hookList.filter(
      (h) => h.repo === fullName && h.active && (h.events.includes(event) || h.events.includes("*") || event === "ping"),
    )) {
      const body = JSON.stringify(payload);
      const deliveryId = options.deliveryId ?? crypto.randomUUID();
      const headers = new Headers({
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/fake",
        "x-github-event": event,
        "x-github-delivery": deliveryId,
        "x-github-hook-id": String(hook.id),
        "x-github-hook-installation-target-type": "repository",
        "x-github-hook-installation-target-id": String(this.repo(fullName).id),
      });
      if (hook.secret) {
        headers.set("x-hub-signature-256", await signGitHub(hook.secret, body));
        headers.set("x-hub-signature", await signGitHubSha1(hook.secret, body));
      }
      const request = new Request(hook.url, { method: "POST", headers, body });
      const response = await deliver(request.clone());
      const result = { hookId: hook.id, deliveryId, status: response.status, request };
      this.deliveries.push(result);
      results.push(result);
    }
    return results;
  }

  /** GitHub's combined status for a commit: the latest per context (case-insensitive) and an overall state. */
  combinedStatus(fullName: string, sha: string): { state: string; statuses: FakeStatus[] } {
    const latest = new Map<string, FakeStatus>();
    for (const s of this.statuses(sha, fullName)) latest.set(s.context.toLowerCase(), s);
    const statuses = [...latest.values()];
    const state = statuses.some((s) => s.state === "error" || s.state === "failure")
      ? "failure"
      : statuses.length === 0 || statuses.some((s) => s.state === "pending")
        ? "pending"
        : "success";
    return { state, statuses };
  }

  protected apiPath(url: URL): string | undefined {
    if (url.hostname === "api.github.com") return url.pathname;
    if (url.pathname === "/api/v3" || url.pathname.startsWith("/api/v3/")) return url.pathname.slice("/api/v3".length) || "/";
    return undefined;
  }

  protected notFound(): Response {
    return json(404, { message: "Not Found", documentation_url: GITHUB_DOCS, status: "404" });
  }

  protected async route(request: Request, url: URL, path: string, body: string): Promise<Response> {
    const method = request.method;
    const codeload =
      url.hostname === "codeload.github.com" ? url.pathname : url.pathname.startsWith("/_codeload/") ? url.pathname.slice("/_codeload".length) : undefined;
    if (codeload !== undefined) return this.codeload(codeload);
    if (this.apiPath(url) === undefined) return this.notFound();
    if (this.token !== undefined) {
      const auth = request.headers.get("authorization") ?? "";
      const given = /^(?:token|bearer)\s+(.+)$/i.exec(auth)?.[1];
      if (given !== this.token) return json(401, { message: "Bad credentials", documentation_url: GITHUB_DOCS, status: "401" });
    }
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);

    if (method === "GET" && path === "/user") return json(200, { login: DEFAULT_AUTHOR.username, id: 1, type: "User" });
    if (method === "GET" && path === "/user/repos")
      return json(
        200,
        [...this.repos.values()].map((r) => this.repoJson(url, r)),
      );
    if (seg[0] !== "repos" || seg.length < 3) return this.notFound();
    const repo = this.repos.get(`${seg[1]}/${seg[2]}`);
    if (!repo) return this.notFound();
    const rest = seg.slice(3);
    const input = () => parseJson(body);

    if (rest.length === 0 && method === "GET") return json(200, this.repoJson(url, repo));
    if (rest[0] === "branches" && rest.length >= 2 && method === "GET") {
      const name = rest.slice(1).join("/");
      const sha = repo.branches.get(name);
      if (!sha) return json(404, { message: "Branch not found", documentation_url: GITHUB_DOCS, status: "404" });
      return json(200, { name, commit: this.commitJson(url, repo, repo.commits.get(sha)!), protected: false });
    }
    if (rest[0] === "commits" && rest.length >= 2 && method === "GET") {
      const last = rest[rest.length - 1];
      if (last === "status" || last === "statuses") return this.readStatuses(repo, rest.slice(1, -1).join("/"), last === "status");
      const sha = this.resolve(repo, rest.slice(1).join("/"));
      if (!sha) return json(422, { message: `No commit found for SHA: ${rest.slice(1).join("/")}`, documentation_url: GITHUB_DOCS, status: "422" });
      const commit = repo.commits.get(sha)!;
      const parent = commit.parents[0];
      const files = this.diff(repo.fullName, parent ?? sha, sha).map((f) => this.fileJson(url, repo, sha, f));
      return json(200, { ...this.commitJson(url, repo, commit), files });
    }
    if ((rest[0] === "tarball" || rest[0] === "zipball") && method === "GET") {
      const ref = rest.slice(1).join("/") || repo.defaultBranch;
      const sha = this.resolve(repo, ref);
      if (!sha || rest[0] === "zipball") return this.notFound();
      // GitHub answers 302 to a short-lived download URL on another host (docs: "Download a repository archive (tar)").
      const location =
        url.hostname === "api.github.com"
          ? `https://codeload.github.com/${repo.fullName}/legacy.tar.gz/${sha}`
          : `${url.origin}/_codeload/${repo.fullName}/legacy.tar.gz/${sha}`;
      return new Response(null, { status: 302, headers: { location } });
    }
    if (rest[0] === "statuses" && rest.length === 2 && method === "POST") return this.postStatus(repo, rest[1], input());
    if (rest[0] === "hooks") return this.hooksRoute(method, url, repo, rest.slice(1), input);
    if (rest[0] === "pulls" && rest.length >= 2 && method === "GET") {
      const pull = repo.pulls.get(Number(rest[1]));
      if (!pull) return this.notFound();
      if (rest.length === 2) return json(200, this.pullJson(url, repo, pull));
      if (rest[2] === "files" && rest.length === 3) return this.pullFiles(url, repo, pull);
      return this.notFound();
    }
    if (rest[0] === "compare" && rest.length >= 2 && method === "GET") {
      const spec = rest.slice(1).join("/");
      const [baseRef, headRef] = spec.includes("...") ? spec.split("...") : spec.split("..");
      const base = this.resolve(repo, baseRef ?? "");
      const head = this.resolve(repo, headRef ?? "");
      if (!base || !head) return this.notFound();
      const mergeBase = this.mergeBase(repo, base, head);
      const ahead = this.commitsBetween(repo, base, head);
      const behind = this.commitsBetween(repo, head, base);
      // The compare API lists at most 300 files (docs: "Compare two commits").
      const files = this.diff(repo.fullName, mergeBase, head)
        .slice(0, 300)
        .map((f) => this.fileJson(url, repo, head, f));
      const status = ahead.length && behind.length ? "diverged" : ahead.length ? "ahead" : behind.length ? "behind" : "identical";
      return json(200, {
        url: `${this.apiBase(url)}/repos/${repo.fullName}/compare/${spec}`,
        html_url: `${this.webUrl}/${repo.fullName}/compare/${spec}`,
        base_commit: this.commitJson(url, repo, repo.commits.get(base)!),
        merge_base_commit: this.commitJson(url, repo, repo.commits.get(mergeBase)!),
        status,
        ahead_by: ahead.length,
        behind_by: behind.length,
        total_commits: ahead.length,
        commits: ahead.map((c) => this.commitJson(url, repo, c)),
        files,
      });
    }
    return this.notFound();
  }

  private hooksRoute(method: string, url: URL, repo: FakeRepo, rest: string[], input: () => any): Response {
    if (rest.length === 0 && method === "GET")
      return json(
        200,
        this.hooks(repo.fullName).map((h) => this.hookJson(url, h)),
      );
    if (rest.length === 0 && method === "POST") {
      const body = input();
      const config = body?.config ?? {};
      if (typeof config.url !== "string" || !config.url)
        return validationFailed([{ resource: "Hook", code: "custom", message: "Config must contain URL for webhooks" }]);
      if (this.hookList.some((h) => h.repo === repo.fullName && h.url === config.url)) {
        return validationFailed([{ resource: "Hook", code: "custom", message: "Hook already exists on this repository" }]);
      }
      // GitHub caps hooks per event per repository at 20 (docs: "Webhooks" limits); the message here is the fake's.
      if (this.hookList.filter((h) => h.repo === repo.fullName).length >= 20) {
        return validationFailed([{ resource: "Hook", code: "custom", message: "fake: the repository has 20 hooks already" }]);
      }
      const at = this.now();
      const hook = this.addHook({
        id: 10_000 + this.nextId(),
        repo: repo.fullName,
        url: config.url,
        secret: config.secret || undefined,
        events: Array.isArray(body.events) ? body.events : ["push"],
        active: body.active ?? true,
        contentType: config.content_type ?? "form",
        createdAt: at,
        updatedAt: at,
      });
      return json(201, this.hookJson(url, hook));
    }
    const hook = this.findHook(repo, rest[0]);
    if (rest.length === 1 && method === "GET") return json(200, this.hookJson(url, hook));
    if (rest.length === 1 && method === "PATCH") {
      const body = input() ?? {};
      if (body.config) {
        // `config` replaces the hook's configuration as a whole (docs: "Update a repository webhook").
        if (typeof body.config.url !== "string" || !body.config.url)
          return validationFailed([{ resource: "Hook", code: "custom", message: "Config must contain URL for webhooks" }]);
        hook.url = body.config.url;
        hook.secret = body.config.secret || undefined;
        hook.contentType = body.config.content_type ?? "form";
      }
      if (Array.isArray(body.events)) hook.events = [...body.events];
      if (Array.isArray(body.add_events)) hook.events = [...new Set([...hook.events, ...body.add_events])];
      if (Array.isArray(body.remove_events)) hook.events = hook.events.filter((e) => !body.remove_events.includes(e));
      if (typeof body.active === "boolean") hook.active = body.active;
      this.changedHook(hook);
      return json(200, this.hookJson(url, hook));
    }
    if (rest.length === 1 && method === "DELETE") {
      this.removeHook(hook);
      return new Response(null, { status: 204 });
    }
    if (rest.length === 2 && rest[1] === "pings" && method === "POST") {
      this.pings.push({ ...hook });
      return new Response(null, { status: 204 });
    }
    return this.notFound();
  }

  private postStatus(repo: FakeRepo, shaParam: string, body: any): Response {
    if (!/^[0-9a-f]{40}$/.test(shaParam) || !repo.commits.has(shaParam)) {
      return json(422, { message: `No commit found for SHA: ${shaParam}`, documentation_url: GITHUB_DOCS, status: "422" });
    }
    if (!body || !GITHUB_STATES.includes(body.state))
      return validationFailed([{ resource: "Status", field: "state", code: "custom", message: "state is not included in the list" }]);
    const description = body.description ?? "";
    if (typeof description === "string" && description.length > 140) {
      return validationFailed([{ resource: "Status", code: "custom", field: "description", message: "description is too long (maximum is 140 characters)" }]);
    }
    const context = body.context ?? "default";
    if (
      this.statusList.filter((s) => s.repo === repo.fullName && s.sha === shaParam && s.context.toLowerCase() === String(context).toLowerCase()).length >= 1000
    ) {
      return validationFailed([{ resource: "Status", code: "custom", message: "This SHA and context has reached the maximum number of statuses." }]);
    }
    const at = this.now();
    const status: FakeStatus = {
      id: this.nextId(),
      repo: repo.fullName,
      sha: shaParam,
      state: body.state,
      context,
      description: description ?? "",
      targetUrl: body.target_url ?? "",
      createdAt: at,
    };
    this.statusList.push(status);
    return json(201, this.statusJson(status));
  }

  private readStatuses(repo: FakeRepo, ref: string, combined: boolean): Response {
    const sha = this.resolve(repo, ref);
    if (!sha) return this.notFound();
    if (!combined) return json(200, this.statuses(sha, repo.fullName).reverse().map(this.statusJson));
    const { state, statuses } = this.combinedStatus(repo.fullName, sha);
    return json(200, { state, statuses: statuses.map(this.statusJson), sha, total_count: statuses.length, repository: { full_name: repo.fullName } });
  }

  private pullFiles(url: URL, repo: FakeRepo, pull: FakePull): Response {
    const head = repo.branches.get(pull.headRef)!;
    const base = this.mergeBase(repo, repo.branches.get(pull.baseRef)!, head);
    // At most 3000 files, 30 per page by default, 100 at most (docs: "List pull requests files").
    const all = this.diff(repo.fullName, base, head).slice(0, 3000);
    const perPage = Math.min(Math.max(Number(url.searchParams.get("per_page") ?? 30) || 30, 1), 100);
    const page = Math.max(Number(url.searchParams.get("page") ?? 1) || 1, 1);
    const pages = Math.max(Math.ceil(all.length / perPage), 1);
    const headers: Record<string, string> = {};
    const link = (p: number, rel: string) => {
      const next = new URL(url);
      next.searchParams.set("per_page", String(perPage));
      next.searchParams.set("page", String(p));
      return `<${next}>; rel="${rel}"`;
    };
    const links = [];
    if (page < pages) links.push(link(page + 1, "next"), link(pages, "last"));
    if (page > 1) links.push(link(1, "first"), link(page - 1, "prev"));
    if (links.length) headers.link = links.join(", ");
    return json(
      200,
      all.slice((page - 1) * perPage, page * perPage).map((f) => this.fileJson(url, repo, head, f)),
      headers,
    );
  }

  private async codeload(path: string): Promise<Response> {
    // /<owner>/<repo>/legacy.tar.gz/<ref>
    const match = /^\/([^/]+)\/([^/]+)\/legacy\.tar\.gz\/(.+)$/.exec(path);
    const repo = match && this.repos.get(`${match[1]}/${match[2]}`);
    const sha = repo && this.resolve(repo, decodeURIComponent(match[3]));
    if (!repo || !sha) return new Response("Not Found", { status: 404 });
    // The archive's single top-level directory is <owner>-<repo>-<short sha>.
    const root = `${match[1]}-${match[2]}-${sha.slice(0, 7)}`;
    const archive = await tarGz(root, repo.commits.get(sha)!.files, sha);
    this.archives.push({ repo: repo.fullName, sha, root });
    return new Response(archive, {
      status: 200,
      headers: { "content-type": "application/x-gzip", "content-disposition": `attachment; filename=${root}.tar.gz` },
    });
  }

  private apiBase(url: URL): string {
    return url.hostname === "api.github.com" ? "https://api.github.com" : `${url.origin}/api/v3`;
  }

  private repoJson(url: URL, repo: FakeRepo) {
    const [owner, name] = repo.fullName.split("/");
    return {
      id: repo.id,
      node_id: `R_${repo.id}`,
      name,
      full_name: repo.fullName,
      private: repo.private,
      owner: { login: owner, id: repo.id * 10, type: "Organization" },
      html_url: `${this.webUrl}/${repo.fullName}`,
      url: `${this.apiBase(url)}/repos/${repo.fullName}`,
      clone_url: `${this.webUrl}/${repo.fullName}.git`,
      default_branch: repo.defaultBranch,
      permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
    };
  }

  private commitJson(url: URL, repo: FakeRepo, commit: FakeCommit) {
    const who = { name: commit.author.name, email: commit.author.email, date: commit.timestamp };
    return {
      sha: commit.sha,
      node_id: `C_${commit.sha}`,
      url: `${this.apiBase(url)}/repos/${repo.fullName}/commits/${commit.sha}`,
      html_url: `${this.webUrl}/${repo.fullName}/commit/${commit.sha}`,
      commit: { message: commit.message, author: who, committer: who },
      author: { login: commit.author.username },
      committer: { login: commit.author.username },
      parents: commit.parents.map((sha) => ({ sha, url: `${this.apiBase(url)}/repos/${repo.fullName}/commits/${sha}` })),
    };
  }

  private fileJson(url: URL, repo: FakeRepo, sha: string, f: { path: string; status: string }) {
    return {
      sha: fakeSha(`${sha}:${f.path}`),
      filename: f.path,
      status: f.status,
      additions: f.status === "removed" ? 0 : 1,
      deletions: f.status === "added" ? 0 : 1,
      changes: f.status === "modified" ? 2 : 1,
      blob_url: `${this.webUrl}/${repo.fullName}/blob/${sha}/${f.path}`,
      raw_url: `${this.webUrl}/${repo.fullName}/raw/${sha}/${f.path}`,
      contents_url: `${this.apiBase(url)}/repos/${repo.fullName}/contents/${f.path}?ref=${sha}`,
    };
  }

  private pullJson(url: URL, repo: FakeRepo, pull: FakePull) {
    const head = repo.branches.get(pull.headRef);
    const base = repo.branches.get(pull.baseRef);
    const side = (ref: string, sha: string | undefined, fullName: string) => ({
      label: `${fullName.split("/")[0]}:${ref}`,
      ref,
      sha,
      repo: { full_name: fullName, name: fullName.split("/")[1], owner: { login: fullName.split("/")[0] } },
    });
    return {
      url: `${this.apiBase(url)}/repos/${repo.fullName}/pulls/${pull.number}`,
      html_url: `${this.webUrl}/${repo.fullName}/pull/${pull.number}`,
      number: pull.number,
      state: pull.state,
      title: pull.title,
      body: pull.body,
      user: { login: pull.author.username },
      merged: pull.merged,
      head: side(pull.headRef, head, pull.headRepo),
      base: side(pull.baseRef, base, repo.fullName),
      changed_files: head && base ? this.diff(repo.fullName, this.mergeBase(repo, base, head), head).length : 0,
    };
  }

  private hookJson(url: URL, hook: FakeHook) {
    const base = `${this.apiBase(url)}/repos/${hook.repo}/hooks/${hook.id}`;
    return {
      type: "Repository",
      id: hook.id,
      name: "web",
      active: hook.active,
      events: hook.events,
      // GitHub never answers a secret back; it masks it.
      config: { content_type: hook.contentType, insecure_ssl: "0", url: hook.url, ...(hook.secret ? { secret: "********" } : {}) },
      updated_at: hook.updatedAt,
      created_at: hook.createdAt,
      url: base,
      test_url: `${base}/test`,
      ping_url: `${base}/pings`,
      deliveries_url: `${base}/deliveries`,
      last_response: { code: null, status: "unused", message: null },
    };
  }

  private statusJson = (s: FakeStatus) => ({
    id: s.id,
    node_id: `SC_${s.id}`,
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.createdAt,
    updated_at: s.createdAt,
    creator: { login: DEFAULT_AUTHOR.username },
  });
}

function validationFailed(errors: unknown[]): Response {
  return json(422, { message: "Validation Failed", errors, documentation_url: GITHUB_DOCS, status: "422" });
}
