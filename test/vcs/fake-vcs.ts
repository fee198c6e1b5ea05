// In-memory fakes of the GitHub and GitLab REST APIs, the parts a VCS integration drives: hooks, commit statuses,
// archives at a commit, changed files of a pull/merge request, compare, branches and commits. Pure Web APIs, so the
// same module serves tests in workerd and in Node: call `fake.fetch(request)`, or route a whole `fetch` to it with
// `fakeFetch` / `installFakeFetch` (test/vcs/outbound.ts).
//
// Shapes and status codes follow the public REST docs (docs.github.com/rest: repos, webhooks, commits/statuses,
// pulls, commits/compare, repos/contents#download-a-repository-archive-tar; docs.gitlab.com/api: projects, project
// webhooks, commits#set-the-pipeline-status-of-a-commit, repositories#get-file-archive, merge_requests). Tests
// set state up directly (createRepo, commit, openPullRequest) and read what the service did (hooks, statuses,
// archives, requests).
import { signGitHub, signGitHubSha1 } from "./deliveries";
import { tarGz } from "./tar";

/** Files to write (string content) or delete (null), by repository path. */
export type FileChanges = Record<string, string | null>;

export interface FakeAuthor {
  name: string;
  email: string;
  username: string;
}

export interface FakeCommit {
  sha: string;
  parents: string[];
  files: Record<string, string>;
  message: string;
  author: FakeAuthor;
  timestamp: string;
  added: string[];
  modified: string[];
  removed: string[];
}

/** What a push did: enough to build a provider's push payload. */
export interface FakePush {
  repo: string;
  ref: string;
  before: string;
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  /** The new commits, oldest first (empty for a delete). */
  commits: FakeCommit[];
}

export interface FakePull {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  merged: boolean;
  headRef: string;
  baseRef: string;
  /** Full name of the repository the head branch lives in (a fork when it differs). */
  headRepo: string;
  author: FakeAuthor;
}

export interface FakeRepo {
  id: number;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  commits: Map<string, FakeCommit>;
  branches: Map<string, string>;
  tags: Map<string, string>;
  pulls: Map<number, FakePull>;
}

export interface FakeHook {
  id: number;
  repo: string;
  url: string;
  /** The secret (GitHub) or token (GitLab) the hook was registered with. */
  secret: string | undefined;
  /** GitHub event names, or GitLab's flags mapped to `push`, `tag_push`, `merge_requests`. */
  events: string[];
  active: boolean;
  contentType: string;
  createdAt: string;
  updatedAt: string;
}

export interface HookChange {
  action: "created" | "updated" | "deleted";
  hook: FakeHook;
}

export interface FakeStatus {
  id: number;
  repo: string;
  sha: string;
  /** The provider's state word as posted (GitHub: error|failure|pending|success; GitLab: pending|running|success|failed|canceled|skipped). */
  state: string;
  context: string;
  description: string;
  targetUrl: string;
  createdAt: string;
}

export interface RecordedRequest {
  method: string;
  url: string;
  /** Path below the API base (`/repos/o/r/hooks`), or the full path for non-API URLs (codeload). */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface ServedArchive {
  repo: string;
  sha: string;
  root: string;
}

export interface FailRule {
  method?: string;
  /** Matches the path below the API base. */
  path?: string | RegExp;
  /** Answer with this status (and body), or fail the fetch like a network error. */
  status?: number;
  body?: unknown;
  networkError?: boolean;
  /** How many requests to fail (default 1). */
  times?: number;
}

export interface DeliveryResult {
  hookId: number;
  deliveryId: string;
  status: number;
  request: Request;
}

export type Deliver = (request: Request) => Promise<Response>;

const ZERO_SHA = "0".repeat(40);
const DEFAULT_AUTHOR: FakeAuthor = { name: "Octo Tester", email: "octo@example.com", username: "octo-tester" };

/** The state and test-side operations both fakes share; each subclass routes its own REST API over it. */
abstract class FakeHost {
  readonly repos = new Map<string, FakeRepo>();
  /** Every request answered, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Hook creations, updates and deletions, in order. */
  readonly hookChanges: HookChange[] = [];
  /** Archives served, in order. */
  readonly archives: ServedArchive[] = [];
  /** Deliveries sent with sendEvent, in order. */
  readonly deliveries: DeliveryResult[] = [];
  protected readonly hookList: FakeHook[] = [];
  protected readonly statusList: FakeStatus[] = [];
  private readonly failRules: FailRule[] = [];
  private seq = 0;
  private clock = Date.parse("2026-01-01T00:00:00Z");

  constructor(
    /** The token a request must carry; undefined accepts any (or none). */
    readonly token: string | undefined,
  ) {}

  /** Answers one request. Never throws except for an injected network error. */
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = this.apiPath(url) ?? url.pathname;
    // Decoded by hand: workerd warns on .text() of a body whose type is not textual (a bare POST, a form).
    const body = request.method === "GET" || request.method === "HEAD" ? "" : new TextDecoder().decode(await request.clone().arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    this.requests.push({ method: request.method, url: request.url, path, headers, body });

    const rule = this.failRules.find(
      (r) => (!r.method || r.method === request.method) && (!r.path || (typeof r.path === "string" ? r.path === path : r.path.test(path))),
    );
    if (rule) {
      rule.times = (rule.times ?? 1) - 1;
      if (rule.times <= 0) this.failRules.splice(this.failRules.indexOf(rule), 1);
      if (rule.networkError) throw new TypeError("fake: network error (injected)");
      return json(rule.status ?? 500, rule.body ?? { message: "fake: injected failure" });
    }
    try {
      return await this.route(request, url, path, body);
    } catch (error) {
      if (error instanceof HttpAnswer) return error.response;
      throw error;
    }
  }

  /** Makes the next matching request(s) fail, e.g. `{ method: "POST", path: /\/hooks$/, status: 502 }`. */
  failNext(rule: FailRule): void {
    this.failRules.push({ ...rule });
  }

  /** Current hooks (of one repository when given). */
  hooks(repo?: string): FakeHook[] {
    return this.hookList.filter((h) => !repo || h.repo === repo).map((h) => ({ ...h, events: [...h.events] }));
  }

  /** Statuses posted for a commit (of every repository when `repo` is omitted), oldest first. */
  statuses(sha: string, repo?: string): FakeStatus[] {
    return this.statusList.filter((s) => s.sha === sha && (!repo || s.repo === repo)).map((s) => ({ ...s }));
  }

  /** Every status posted, oldest first. */
  allStatuses(): FakeStatus[] {
    return this.statusList.map((s) => ({ ...s }));
  }

  /** Requests whose path matches, optionally by method. */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[] {
    return this.requests.filter((r) => (!method || r.method === method) && (typeof path === "string" ? r.path === path : path.test(r.path)));
  }

  /** Creates a repository with an initial commit on its default branch. */
  createRepo(fullName: string, options: { defaultBranch?: string; files?: Record<string, string>; private?: boolean } = {}): FakeRepo {
    if (this.repos.has(fullName)) throw new Error(`fake: repository ${fullName} exists`);
    const repo: FakeRepo = {
      id: 1000 + this.repos.size + 1,
      fullName,
      defaultBranch: options.defaultBranch ?? "main",
      private: options.private ?? true,
      commits: new Map(),
      branches: new Map(),
      tags: new Map(),
      pulls: new Map(),
    };
    this.repos.set(fullName, repo);
    const root = this.makeCommit(repo, [], {}, { "README.md": `# ${fullName}\n`, ...(options.files ?? {}) }, "Initial commit", DEFAULT_AUTHOR);
    repo.branches.set(repo.defaultBranch, root.sha);
    return repo;
  }

  /**
   * Commits `changes` on top of `branch` (created from `from`, default the default branch, when missing) and moves
   * the branch. Returns the push that a provider would report.
   */
  commit(fullName: string, branch: string, changes: FileChanges, options: { message?: string; author?: FakeAuthor; from?: string } = {}): FakePush {
    const repo = this.repo(fullName);
    const before = repo.branches.get(branch);
    const parent = before ?? this.resolve(repo, options.from ?? repo.defaultBranch);
    if (!parent) throw new Error(`fake: no ref ${options.from} in ${fullName}`);
    const commit = this.makeCommit(
      repo,
      [parent],
      repo.commits.get(parent)!.files,
      changes,
      options.message ?? `Change ${Object.keys(changes).join(", ")}`,
      options.author,
    );
    repo.branches.set(branch, commit.sha);
    return {
      repo: fullName,
      ref: `refs/heads/${branch}`,
      before: before ?? ZERO_SHA,
      after: commit.sha,
      created: !before,
      deleted: false,
      forced: false,
      commits: [commit],
    };
  }

  /** Replaces the branch's tip with a new commit on `onto` (default: the tip's parent), as a force push does. */
  forcePush(fullName: string, branch: string, changes: FileChanges, options: { message?: string; author?: FakeAuthor; onto?: string } = {}): FakePush {
    const repo = this.repo(fullName);
    const before = repo.branches.get(branch);
    if (!before) throw new Error(`fake: no branch ${branch} in ${fullName}`);
    const onto = options.onto ? this.resolve(repo, options.onto) : repo.commits.get(before)!.parents[0];
    if (!onto) throw new Error(`fake: nothing to force-push onto in ${fullName}`);
    const commit = this.makeCommit(repo, [onto], repo.commits.get(onto)!.files, changes, options.message ?? "Rewrite", options.author);
    repo.branches.set(branch, commit.sha);
    return { repo: fullName, ref: `refs/heads/${branch}`, before, after: commit.sha, created: false, deleted: false, forced: true, commits: [commit] };
  }

  deleteBranch(fullName: string, branch: string): FakePush {
    const repo = this.repo(fullName);
    const before = repo.branches.get(branch);
    if (!before) throw new Error(`fake: no branch ${branch} in ${fullName}`);
    repo.branches.delete(branch);
    return { repo: fullName, ref: `refs/heads/${branch}`, before, after: ZERO_SHA, created: false, deleted: true, forced: false, commits: [] };
  }

  /** Creates a lightweight tag at `ref` (default: the default branch's tip). */
  createTag(fullName: string, name: string, ref?: string): FakePush {
    const repo = this.repo(fullName);
    const sha = this.resolve(repo, ref ?? repo.defaultBranch);
    if (!sha) throw new Error(`fake: no ref ${ref} in ${fullName}`);
    repo.tags.set(name, sha);
    return { repo: fullName, ref: `refs/tags/${name}`, before: ZERO_SHA, after: sha, created: true, deleted: false, forced: false, commits: [] };
  }

  /** Opens a pull (merge) request from `head` into `base` (default: the default branch). */
  openPullRequest(fullName: string, options: { head: string; base?: string; title?: string; body?: string; headRepo?: string; author?: FakeAuthor }): FakePull {
    const repo = this.repo(fullName);
    if (!repo.branches.has(options.head)) throw new Error(`fake: no branch ${options.head} in ${fullName}`);
    const pull: FakePull = {
      number: repo.pulls.size + 1,
      title: options.title ?? `Merge ${options.head}`,
      body: options.body ?? "",
      state: "open",
      merged: false,
      headRef: options.head,
      baseRef: options.base ?? repo.defaultBranch,
      headRepo: options.headRepo ?? fullName,
      author: options.author ?? DEFAULT_AUTHOR,
    };
    repo.pulls.set(pull.number, pull);
    return pull;
  }

  closePullRequest(fullName: string, number: number, options: { merge?: boolean } = {}): FakePull {
    const pull = this.pull(this.repo(fullName), number);
    pull.state = "closed";
    if (options.merge) {
      const repo = this.repo(fullName);
      const head = repo.branches.get(pull.headRef)!;
      const base = repo.branches.get(pull.baseRef)!;
      const merge = this.makeCommit(repo, [base, head], repo.commits.get(head)!.files, {}, `Merge pull request #${number}`, DEFAULT_AUTHOR);
      repo.branches.set(pull.baseRef, merge.sha);
      pull.merged = true;
    }
    return { ...pull };
  }

  /** The sha a branch, tag or (abbreviated) sha names, or undefined. */
  resolveRef(fullName: string, ref: string): string | undefined {
    return this.resolve(this.repo(fullName), ref);
  }

  /** Files changed between two commits (what a three-dot compare reports), by path. */
  diff(fullName: string, base: string, head: string): { path: string; status: "added" | "modified" | "removed" }[] {
    const repo = this.repo(fullName);
    const from = repo.commits.get(this.resolve(repo, base) ?? "")?.files ?? {};
    const to = repo.commits.get(this.resolve(repo, head) ?? "")?.files ?? {};
    const out: { path: string; status: "added" | "modified" | "removed" }[] = [];
    for (const path of new Set([...Object.keys(from), ...Object.keys(to)])) {
      if (!(path in from)) out.push({ path, status: "added" });
      else if (!(path in to)) out.push({ path, status: "removed" });
      else if (from[path] !== to[path]) out.push({ path, status: "modified" });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  protected abstract apiPath(url: URL): string | undefined;
  protected abstract route(request: Request, url: URL, path: string, body: string): Promise<Response>;

  protected repo(fullName: string): FakeRepo {
    const repo = this.repos.get(fullName);
    if (!repo) throw new Error(`fake: no repository ${fullName}`);
    return repo;
  }

  protected pull(repo: FakeRepo, number: number): FakePull {
    const pull = repo.pulls.get(number);
    if (!pull) throw new Error(`fake: no pull request ${number} in ${repo.fullName}`);
    return pull;
  }

  protected resolve(repo: FakeRepo, ref: string): string | undefined {
    const name = ref.replace(/^refs\/(heads|tags)\//, "").replace(/^(heads|tags)\//, "");
    if (repo.branches.has(name)) return repo.branches.get(name);
    if (repo.tags.has(name)) return repo.tags.get(name);
    if (/^[0-9a-f]{7,40}$/.test(ref)) {
      const matches = [...repo.commits.keys()].filter((sha) => sha.startsWith(ref));
      if (matches.length === 1) return matches[0];
    }
    return undefined;
  }

  /** Commits reachable from `sha`, itself included. */
  protected ancestors(repo: FakeRepo, sha: string): Set<string> {
    const seen = new Set<string>();
    const stack = [sha];
    while (stack.length) {
      const next = stack.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(repo.commits.get(next)?.parents ?? []));
    }
    return seen;
  }

  /** The newest common ancestor of two commits (breadth-first from `head`). */
  protected mergeBase(repo: FakeRepo, base: string, head: string): string {
    const fromBase = this.ancestors(repo, base);
    const queue = [head];
    const seen = new Set<string>();
    while (queue.length) {
      const next = queue.shift()!;
      if (fromBase.has(next)) return next;
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(...(repo.commits.get(next)?.parents ?? []));
    }
    return base;
  }

  /** Commits in `head` not in `base`, oldest first. */
  protected commitsBetween(repo: FakeRepo, base: string, head: string): FakeCommit[] {
    const exclude = this.ancestors(repo, base);
    return [...this.ancestors(repo, head)]
      .filter((sha) => !exclude.has(sha))
      .map((sha) => repo.commits.get(sha)!)
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1));
  }

  protected now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  protected nextId(): number {
    return ++this.seq;
  }

  protected addHook(hook: FakeHook): FakeHook {
    this.hookList.push(hook);
    this.hookChanges.push({ action: "created", hook: { ...hook, events: [...hook.events] } });
    return hook;
  }

  protected changedHook(hook: FakeHook): void {
    hook.updatedAt = this.now();
    this.hookChanges.push({ action: "updated", hook: { ...hook, events: [...hook.events] } });
  }

  protected removeHook(hook: FakeHook): void {
    this.hookList.splice(this.hookList.indexOf(hook), 1);
    this.hookChanges.push({ action: "deleted", hook: { ...hook, events: [...hook.events] } });
  }

  protected findHook(repo: FakeRepo, id: string): FakeHook {
    const hook = this.hookList.find((h) => h.repo === repo.fullName && String(h.id) === id);
    if (!hook) throw new HttpAnswer(this.notFound());
    return hook;
  }

  protected abstract notFound(what?: string): Response;

  private makeCommit(
    repo: FakeRepo,
    parents: string[],
    base: Record<string, string>,
    changes: FileChanges,
    message: string,
    author = DEFAULT_AUTHOR,
  ): FakeCommit {
    const files = { ...base };
    const added: string[] = [];
    const modified: string[] = [];
    const removed: string[] = [];
    for (const [path, content] of Object.entries(changes)) {
      if (content === null) {
        if (path in files) removed.push(path);
        delete files[path];
      } else {
        if (!(path in files)) added.push(path);
        else if (files[path] !== content) modified.push(path);
        files[path] = content;
      }
    }
    const sha = fakeSha(`${repo.fullName}\n${this.nextId()}\n${message}\n${JSON.stringify(files)}`);
    const commit: FakeCommit = { sha, parents, files, message, author, timestamp: this.now(), added, modified, removed };
    repo.commits.set(sha, commit);
    return commit;
  }
}

/** Thrown inside a route to answer early (404s, validation failures). */
class HttpAnswer extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`);
  }
}

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

export function createFakeGitHub(options: FakeGitHubOptions = {}): FakeGitHub {
  return new FakeGitHub(options);
}

export function createFakeGitLab(options: FakeGitLabOptions = {}): FakeGitLab {
  return new FakeGitLab(options);
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

function parseJson(body: string): any {
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    throw new HttpAnswer(json(400, { message: "Problems parsing JSON" }));
  }
}

function validationFailed(errors: unknown[]): Response {
  return json(422, { message: "Validation Failed", errors, documentation_url: GITHUB_DOCS, status: "422" });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

/** A stable 40-hex id for a string (FNV-1a, five seeds): looks like a git sha, unique enough for a test's repos. */
export function fakeSha(input: string): string {
  let out = "";
  for (let seed = 0; seed < 5; seed++) {
    let h = 0x811c9dc5 ^ (seed * 0x9e3779b1);
    for (let i = 0; i < input.length; i++) {
      h ^= input.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    out += (h >>> 0).toString(16).padStart(8, "0");
  }
  return out;
}
