// The state both VCS fakes share (repositories, commits, branches, pull requests, hooks, statuses, recorded
// requests, injected failures) and the operations tests use to set it up. fake-github.ts and fake-gitlab.ts route
// their REST APIs over it; fake-vcs.ts is the entry point.

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

export const ZERO_SHA = "0".repeat(40);
export const DEFAULT_AUTHOR: FakeAuthor = { name: "Octo Tester", email: "octo@example.com", username: "octo-tester" };

/** The state and test-side operations both fakes share; each subclass routes its own REST API over it. */
export abstract class FakeHost {
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
export class HttpAnswer extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`);
  }
}

export function parseJson(body: string): any {
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    throw new HttpAnswer(json(400, { message: "Problems parsing JSON" }));
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
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
