// GitLab REST API (v4) fake: project hooks, commit statuses (with GitLab's state-machine refusals), archives, merge
// request diffs and changes, compare, branches, commits. Shapes and codes from docs.gitlab.com/ee/api.
import {
  DEFAULT_AUTHOR,
  type Deliver,
  type DeliveryResult,
  FakeHost,
  type FakeCommit,
  type FakeHook,
  type FakePull,
  type FakeRepo,
  type FakeStatus,
  json,
  parseJson,
} from "./fake-host";
import { tarGz } from "./tar";

export interface FakeGitLabOptions {
  /** The token requests must carry (`PRIVATE-TOKEN` or `Authorization: Bearer`); undefined accepts any. */
  token?: string;
  /** Web origin in web_url links; default https://gitlab.example.com. */
  webUrl?: string;
}

const GITLAB_STATES = ["pending", "running", "success", "failed", "canceled", "skipped"];
// The state-machine event GitLab names in its 400 when a status is posted twice in the same state.
const GITLAB_REPEAT_EVENT: Record<string, string> = { pending: "enqueue", running: "run" };

/** GitLab REST API (v4) fake. Answers `<any host>/api/v4/...`; projects by numeric id or URL-encoded path. */
export class FakeGitLab extends FakeHost {
  readonly webUrl: string;

  constructor(options: FakeGitLabOptions = {}) {
    super(options.token);
    this.webUrl = options.webUrl ?? "https://gitlab.example.com";
  }

  /**
   * Sends `payload` to every hook of `repo` enabled for `event` ("Push Hook", "Tag Push Hook", "Merge Request Hook"),
   * with the hook's token in X-Gitlab-Token.
   */
  async sendEvent(fullName: string, event: string, payload: unknown, deliver: Deliver, options: { eventId?: string } = {}): Promise<DeliveryResult[]> {
    const flag = { "Push Hook": "push", "Tag Push Hook": "tag_push", "Merge Request Hook": "merge_requests" }[event];
    const results: DeliveryResult[] = [];
    for (const hook of this.hookList.filter((h) => h.repo === fullName && (!flag || h.events.includes(flag)))) {
      const eventId = options.eventId ?? crypto.randomUUID();
      const headers = new Headers({
        "content-type": "application/json",
        "user-agent": "GitLab/17.0.0",
        "x-gitlab-event": event,
        "x-gitlab-instance": this.webUrl,
        "x-gitlab-webhook-uuid": `00000000-0000-4000-8000-${String(hook.id).padStart(12, "0")}`,
        "x-gitlab-event-uuid": eventId,
        "idempotency-key": eventId,
      });
      if (hook.secret) headers.set("x-gitlab-token", hook.secret);
      const request = new Request(hook.url, { method: "POST", headers, body: JSON.stringify(payload) });
      const response = await deliver(request.clone());
      const result = { hookId: hook.id, deliveryId: eventId, status: response.status, request };
      this.deliveries.push(result);
      results.push(result);
    }
    return results;
  }

  /** A project's numeric id (what `/projects/:id` accepts besides the encoded path). */
  projectId(fullName: string): number {
    return this.repo(fullName).id;
  }

  protected apiPath(url: URL): string | undefined {
    // Keep %2F inside a segment: GitLab takes `group%2Fproject` as one id.
    const raw = url.pathname;
    if (raw === "/api/v4" || raw.startsWith("/api/v4/")) return raw.slice("/api/v4".length) || "/";
    return undefined;
  }

  protected notFound(what = "Not found"): Response {
    return json(404, { message: `404 ${what}` });
  }

  protected async route(request: Request, url: URL, path: string, body: string): Promise<Response> {
    const method = request.method;
    if (this.apiPath(url) === undefined) return this.notFound();
    if (this.token !== undefined) {
      const given = request.headers.get("private-token") ?? /^bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
      if (given !== this.token) return json(401, { message: "401 Unauthorized" });
    }
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (method === "GET" && path === "/user") return json(200, { id: 1, username: DEFAULT_AUTHOR.username, name: DEFAULT_AUTHOR.name });
    if (method === "GET" && path === "/projects")
      return json(
        200,
        [...this.repos.values()].map((r) => this.projectJson(r)),
      );
    if (seg[0] !== "projects" || seg.length < 2) return this.notFound();
    const repo = /^\d+$/.test(seg[1]) ? [...this.repos.values()].find((r) => r.id === Number(seg[1])) : this.repos.get(seg[1]);
    if (!repo) return this.notFound("Project Not Found");
    const rest = seg.slice(2);
    // GitLab takes parameters from the query string, a form body or a JSON body alike.
    const params = () => ({ ...Object.fromEntries(url.searchParams), ...parseParams(request.headers.get("content-type"), body) });

    if (rest.length === 0 && method === "GET") return json(200, this.projectJson(repo));
    if (rest[0] === "hooks") return this.hooksRoute(method, repo, rest.slice(1), params);
    if (rest[0] === "statuses" && rest.length === 2 && method === "POST") return this.postStatus(repo, rest[1], params());
    if (rest[0] === "repository") return this.repositoryRoute(method, url, repo, rest.slice(1));
    if (rest[0] === "merge_requests" && rest.length >= 2 && method === "GET") {
      const pull = repo.pulls.get(Number(rest[1]));
      if (!pull) return this.notFound();
      if (rest.length === 2) return json(200, this.mergeRequestJson(repo, pull));
      if (rest[2] === "diffs" && rest.length === 3) {
        const diffs = this.pullDiffs(repo, pull);
        const perPage = Math.min(Math.max(Number(url.searchParams.get("per_page") ?? 20) || 20, 1), 100);
        const page = Math.max(Number(url.searchParams.get("page") ?? 1) || 1, 1);
        const pages = Math.max(Math.ceil(diffs.length / perPage), 1);
        return json(200, diffs.slice((page - 1) * perPage, page * perPage), {
          "x-page": String(page),
          "x-per-page": String(perPage),
          "x-total": String(diffs.length),
          "x-total-pages": String(pages),
          "x-next-page": page < pages ? String(page + 1) : "",
        });
      }
      if (rest[2] === "changes" && rest.length === 3) {
        const changes = this.pullDiffs(repo, pull);
        return json(200, { ...this.mergeRequestJson(repo, pull), changes, changes_count: String(changes.length), overflow: false });
      }
    }
    return this.notFound();
  }

  private repositoryRoute(method: string, url: URL, repo: FakeRepo, rest: string[]): Promise<Response> | Response {
    if (method !== "GET") return this.notFound();
    if (rest[0] === "archive" || rest[0] === "archive.tar.gz") {
      const format = rest[0] === "archive.tar.gz" ? "tar.gz" : (url.searchParams.get("format") ?? "tar.gz");
      if (format !== "tar.gz") return this.notFound();
      const ref = url.searchParams.get("sha") ?? repo.defaultBranch;
      const sha = this.resolve(repo, ref);
      if (!sha) return this.notFound("Commit Not Found");
      return this.archive(repo, ref, sha);
    }
    if (rest[0] === "branches" && rest.length >= 2) {
      const name = rest.slice(1).join("/");
      const sha = repo.branches.get(name);
      if (!sha) return this.notFound("Branch Not Found");
      return json(200, { name, commit: this.commitJson(repo, repo.commits.get(sha)!), default: name === repo.defaultBranch, protected: false, merged: false });
    }
    if (rest[0] === "commits" && rest.length >= 2) {
      if (rest[rest.length - 1] === "statuses" && rest.length >= 3) {
        const sha = this.resolve(repo, rest.slice(1, -1).join("/"));
        if (!sha) return this.notFound("Commit Not Found");
        return json(200, this.statuses(sha, repo.fullName).map(this.statusJson));
      }
      const sha = this.resolve(repo, rest.slice(1).join("/"));
      if (!sha) return this.notFound("Commit Not Found");
      return json(200, this.commitJson(repo, repo.commits.get(sha)!));
    }
    if (rest[0] === "compare" && rest.length === 1) {
      const from = this.resolve(repo, url.searchParams.get("from") ?? "");
      const to = this.resolve(repo, url.searchParams.get("to") ?? "");
      if (!from || !to) return this.notFound("Ref Not Found");
      const straight = url.searchParams.get("straight") === "true";
      const base = straight ? from : this.mergeBase(repo, from, to);
      const commits = this.commitsBetween(repo, from, to);
      return json(200, {
        commit: commits.length ? this.commitJson(repo, commits[commits.length - 1]) : null,
        commits: commits.map((c) => this.commitJson(repo, c)),
        diffs: this.diffJson(repo, base, to),
        compare_timeout: false,
        compare_same_ref: from === to,
        web_url: `${this.webUrl}/${repo.fullName}/-/compare/${from}...${to}`,
      });
    }
    return this.notFound();
  }

  private hooksRoute(method: string, repo: FakeRepo, rest: string[], params: () => Record<string, any>): Response {
    if (rest.length === 0 && method === "GET")
      return json(
        200,
        this.hooks(repo.fullName).map((h) => this.hookJson(h)),
      );
    if (rest.length === 0 && method === "POST") {
      const p = params();
      if (!p.url) return json(400, { error: "url is missing" });
      const at = this.now();
      const hook = this.addHook({
        id: 20_000 + this.nextId(),
        repo: repo.fullName,
        url: String(p.url),
        secret: p.token ? String(p.token) : undefined,
        events: gitlabEvents(p, ["push"]),
        active: true,
        contentType: "json",
        createdAt: at,
        updatedAt: at,
      });
      return json(201, this.hookJson(hook));
    }
    const hook = this.findHook(repo, rest[0]);
    if (rest.length === 1 && method === "GET") return json(200, this.hookJson(hook));
    if (rest.length === 1 && method === "PUT") {
      const p = params();
      if (p.url) hook.url = String(p.url);
      if ("token" in p) hook.secret = p.token ? String(p.token) : undefined;
      hook.events = gitlabEvents(p, hook.events);
      this.changedHook(hook);
      return json(200, this.hookJson(hook));
    }
    if (rest.length === 1 && method === "DELETE") {
      this.removeHook(hook);
      return new Response(null, { status: 204 });
    }
    return this.notFound();
  }

  private postStatus(repo: FakeRepo, shaParam: string, p: Record<string, any>): Response {
    const sha = this.resolve(repo, shaParam);
    if (!sha || sha !== shaParam) return this.notFound("Commit Not Found");
    if (!p.state) return json(400, { error: "state is missing" });
    if (!GITLAB_STATES.includes(p.state)) return json(400, { error: "state does not have a valid value" });
    const context = String(p.name ?? p.context ?? "default");
    const previous = this.statuses(sha, repo.fullName)
      .filter((s) => s.context === context)
      .pop();
    // GitLab's commit-status state machine refuses pending→pending and running→running with a 400 (seen by
    // gitlab-org/gitlab-foss#25807 and many clients since); GitHub accepts the repeat.
    if (previous && previous.state === p.state && GITLAB_REPEAT_EVENT[p.state]) {
      const via = GITLAB_REPEAT_EVENT[p.state];
      return json(400, { message: `Cannot transition status via :${via} from :${p.state} (Reason(s): Status cannot transition via "${via}")` });
    }
    const status: FakeStatus = {
      id: this.nextId(),
      repo: repo.fullName,
      sha,
      state: p.state,
      context,
      description: p.description ?? "",
      targetUrl: p.target_url ?? "",
      createdAt: this.now(),
    };
    this.statusList.push(status);
    return json(201, { ...this.statusJson(status), ref: p.ref ?? null });
  }

  private async archive(repo: FakeRepo, ref: string, sha: string): Promise<Response> {
    // GitLab's archive holds one directory <project path>-<ref as asked>-<sha> (OTF's gitlab client strips it).
    const root = `${repo.fullName.split("/").pop()}-${ref}-${sha}`;
    const archive = await tarGz(root, repo.commits.get(sha)!.files, sha);
    this.archives.push({ repo: repo.fullName, sha, root });
    return new Response(archive, {
      status: 200,
      headers: { "content-type": "application/octet-stream", "content-disposition": `attachment; filename="${root}.tar.gz"` },
    });
  }

  private pullDiffs(repo: FakeRepo, pull: FakePull) {
    const head = repo.branches.get(pull.headRef)!;
    return this.diffJson(repo, this.mergeBase(repo, repo.branches.get(pull.baseRef)!, head), head);
  }

  private diffJson(repo: FakeRepo, base: string, head: string) {
    return this.diff(repo.fullName, base, head).map((f) => ({
      old_path: f.path,
      new_path: f.path,
      a_mode: f.status === "added" ? "0" : "100644",
      b_mode: f.status === "removed" ? "0" : "100644",
      new_file: f.status === "added",
      renamed_file: false,
      deleted_file: f.status === "removed",
      generated_file: false,
      diff: "",
    }));
  }

  private projectJson(repo: FakeRepo) {
    const parts = repo.fullName.split("/");
    return {
      id: repo.id,
      name: parts[parts.length - 1],
      path: parts[parts.length - 1],
      path_with_namespace: repo.fullName,
      namespace: { full_path: parts.slice(0, -1).join("/"), path: parts[parts.length - 2] },
      default_branch: repo.defaultBranch,
      visibility: repo.private ? "private" : "public",
      web_url: `${this.webUrl}/${repo.fullName}`,
      http_url_to_repo: `${this.webUrl}/${repo.fullName}.git`,
      permissions: { project_access: { access_level: 40 }, group_access: null },
    };
  }

  private commitJson(repo: FakeRepo, c: FakeCommit) {
    return {
      id: c.sha,
      short_id: c.sha.slice(0, 8),
      title: c.message.split("\n")[0],
      message: c.message,
      author_name: c.author.name,
      author_email: c.author.email,
      authored_date: c.timestamp,
      committer_name: c.author.name,
      committer_email: c.author.email,
      committed_date: c.timestamp,
      created_at: c.timestamp,
      parent_ids: c.parents,
      web_url: `${this.webUrl}/${repo.fullName}/-/commit/${c.sha}`,
    };
  }

  private mergeRequestJson(repo: FakeRepo, pull: FakePull) {
    const head = repo.branches.get(pull.headRef);
    const base = repo.branches.get(pull.baseRef);
    const source = this.repos.get(pull.headRepo) ?? repo;
    return {
      id: repo.id * 1000 + pull.number,
      iid: pull.number,
      project_id: repo.id,
      title: pull.title,
      description: pull.body,
      state: pull.state === "open" ? "opened" : pull.merged ? "merged" : "closed",
      source_branch: pull.headRef,
      target_branch: pull.baseRef,
      source_project_id: source.id,
      target_project_id: repo.id,
      sha: head,
      author: { username: pull.author.username, name: pull.author.name },
      web_url: `${this.webUrl}/${repo.fullName}/-/merge_requests/${pull.number}`,
      diff_refs: head && base ? { base_sha: this.mergeBase(repo, base, head), head_sha: head, start_sha: base } : null,
    };
  }

  private hookJson(hook: FakeHook) {
    // GitLab never answers the token back.
    return {
      id: hook.id,
      url: hook.url,
      project_id: this.repo(hook.repo).id,
      push_events: hook.events.includes("push"),
      tag_push_events: hook.events.includes("tag_push"),
      merge_requests_events: hook.events.includes("merge_requests"),
      enable_ssl_verification: true,
      created_at: hook.createdAt,
    };
  }

  private statusJson = (s: FakeStatus) => ({
    id: s.id,
    sha: s.sha,
    status: s.state,
    name: s.context,
    target_url: s.targetUrl || null,
    description: s.description || null,
    created_at: s.createdAt,
    started_at: s.state === "running" ? s.createdAt : null,
    finished_at: ["success", "failed", "canceled", "skipped"].includes(s.state) ? s.createdAt : null,
    allow_failure: false,
    author: { username: DEFAULT_AUTHOR.username },
  });
}

function gitlabEvents(p: Record<string, any>, fallback: string[]): string[] {
  const flags: [string, string][] = [
    ["push_events", "push"],
    ["tag_push_events", "tag_push"],
    ["merge_requests_events", "merge_requests"],
  ];
  if (!flags.some(([key]) => key in p)) return [...fallback];
  const truthy = (v: unknown) => v === true || v === "true" || v === "1" || v === 1;
  return flags.filter(([key, event]) => (key in p ? truthy(p[key]) : fallback.includes(event))).map(([, event]) => event);
}

function parseParams(contentType: string | null, body: string): Record<string, any> {
  if (!body) return {};
  if (contentType?.includes("application/json")) return parseJson(body) ?? {};
  return Object.fromEntries(new URLSearchParams(body));
}
