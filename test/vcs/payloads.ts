// Webhook payloads for tests. GitHub's are the real recorded examples of @octokit/webhooks-examples, retargeted
// to a test's repository and commits; GitLab's start from fixtures/gitlab/*.json, written from the shapes in
// GitLab's "Webhook events" documentation. Each builder returns a fresh object; serialise it once and sign those bytes.
import examples from "@octokit/webhooks-examples";
import gitlabMergeRequestOpen from "./fixtures/gitlab/merge_request_open.json";
import gitlabMergeRequestUpdate from "./fixtures/gitlab/merge_request_update.json";
import gitlabPush from "./fixtures/gitlab/push.json";
import gitlabTagPush from "./fixtures/gitlab/tag_push.json";
import type { FakeCommit, FakePush } from "./fake-vcs";

const ZERO_SHA = "0".repeat(40);

/** Every recorded example of a GitHub event (deep copies), e.g. `githubExamples("pull_request")`. */
export function githubExamples(event: string): any[] {
  const definition = (examples as { name: string; examples: unknown[] }[]).find((d) => d.name === event);
  if (!definition) throw new Error(`@octokit/webhooks-examples has no "${event}" event`);
  return structuredClone(definition.examples) as any[];
}

/** The first recorded example of `event` that satisfies `match`. */
export function githubExample(event: string, match: (payload: any) => boolean = () => true): any {
  const found = githubExamples(event).find(match);
  if (!found) throw new Error(`no "${event}" example matches`);
  return found;
}

export interface GitHubRepoInfo {
  /** owner/name */
  fullName: string;
  defaultBranch?: string;
  id?: number;
  /** Web origin; default https://github.com. With another origin (GHES) API URLs become <origin>/api/v3. */
  webUrl?: string;
}

// The examples describe Codertocat/Hello-World (or Octocoders/Hello-World): rewrite every URL and name in them to the
// test's repository.
function retarget(payload: any, repo: GitHubRepoInfo): any {
  const [owner, name] = repo.fullName.split("/");
  const [fromOwner, fromName] = String(payload.repository?.full_name ?? "Codertocat/Hello-World").split("/");
  const web = repo.webUrl ?? "https://github.com";
  const api = web === "https://github.com" ? "https://api.github.com" : `${web}/api/v3`;
  const text = JSON.stringify(payload)
    .replaceAll("https://api.github.com", api)
    .replaceAll("https://github.com", web)
    .replaceAll(`${fromOwner}/${fromName}`, repo.fullName)
    .replaceAll(fromName, name)
    .replaceAll(fromOwner, owner);
  const out = JSON.parse(text);
  if (out.repository) {
    out.repository.default_branch = repo.defaultBranch ?? "main";
    if ("master_branch" in out.repository) out.repository.master_branch = out.repository.default_branch;
    if (repo.id !== undefined) out.repository.id = repo.id;
  }
  return out;
}

function githubCommit(repo: GitHubRepoInfo, c: FakeCommit) {
  const web = repo.webUrl ?? "https://github.com";
  const who = { name: c.author.name, email: c.author.email, username: c.author.username };
  return {
    id: c.sha,
    tree_id: c.sha.split("").reverse().join(""),
    distinct: true,
    message: c.message,
    timestamp: c.timestamp,
    url: `${web}/${repo.fullName}/commit/${c.sha}`,
    author: who,
    committer: who,
    added: c.added,
    removed: c.removed,
    modified: c.modified,
  };
}

/**
 * A `push` payload for what `fake.commit()` / `forcePush()` / `deleteBranch()` / `createTag()` returned: ref, before,
 * after, created/deleted/forced, compare, commits[] with added/modified/removed, head_commit, repository, pusher.
 */
export function githubPushPayload(repo: GitHubRepoInfo, push: FakePush, options: { installationId?: number; sender?: string } = {}): any {
  const payload = retarget(
    githubExample("push", (p) => p.ref.startsWith("refs/heads/") && p.commits.length > 0),
    repo,
  );
  const web = repo.webUrl ?? "https://github.com";
  const commits = push.commits.map((c) => githubCommit(repo, c));
  payload.ref = push.ref;
  payload.before = push.before;
  payload.after = push.after;
  payload.created = push.created;
  payload.deleted = push.deleted;
  payload.forced = push.forced;
  payload.base_ref = null;
  payload.compare = push.created
    ? `${web}/${repo.fullName}/commit/${push.after.slice(0, 12)}`
    : `${web}/${repo.fullName}/compare/${push.before.slice(0, 12)}...${push.after.slice(0, 12)}`;
  payload.commits = commits;
  payload.head_commit = push.deleted ? null : (commits[commits.length - 1] ?? null);
  if (push.after === ZERO_SHA) payload.head_commit = null;
  const author = push.commits[push.commits.length - 1]?.author;
  if (author) payload.pusher = { name: author.username, email: author.email };
  if (options.sender) payload.sender.login = options.sender;
  if (options.installationId === undefined) delete payload.installation;
  else payload.installation = { id: options.installationId, node_id: `MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u${options.installationId}` };
  return payload;
}

export interface GitHubPullInfo {
  number: number;
  headRef: string;
  headSha: string;
  baseRef: string;
  baseSha: string;
  /** The head repository's owner/name; a fork when it differs from the base repository. */
  headRepo?: string;
  title?: string;
  merged?: boolean;
}

/**
 * A `pull_request` payload from the recorded example of that action: opened, synchronize (with `before`), closed
 * (merged or not), reopened.
 */
export function githubPullRequestPayload(
  action: "opened" | "synchronize" | "closed" | "reopened",
  repo: GitHubRepoInfo,
  pull: GitHubPullInfo,
  options: { before?: string; installationId?: number } = {},
): any {
  const payload = retarget(
    githubExample("pull_request", (p) => p.action === action),
    repo,
  );
  const web = repo.webUrl ?? "https://github.com";
  const pr = payload.pull_request;
  payload.number = pull.number;
  pr.number = pull.number;
  pr.html_url = `${web}/${repo.fullName}/pull/${pull.number}`;
  pr.url = pr.url.replace(/\/pulls\/\d+$/, `/pulls/${pull.number}`);
  if (pull.title) pr.title = pull.title;
  pr.state = action === "closed" ? "closed" : "open";
  pr.merged = action === "closed" ? (pull.merged ?? false) : false;
  pr.head.ref = pull.headRef;
  pr.head.sha = pull.headSha;
  pr.head.label = `${(pull.headRepo ?? repo.fullName).split("/")[0]}:${pull.headRef}`;
  pr.base.ref = pull.baseRef;
  pr.base.sha = pull.baseSha;
  if (pull.headRepo && pull.headRepo !== repo.fullName) {
    const [owner, name] = pull.headRepo.split("/");
    pr.head.repo = { ...pr.head.repo, full_name: pull.headRepo, name, fork: true, owner: { ...pr.head.repo.owner, login: owner } };
  }
  if (action === "synchronize") {
    payload.before = options.before ?? payload.before;
    payload.after = pull.headSha;
  }
  if (options.installationId === undefined) delete payload.installation;
  else payload.installation = { id: options.installationId, node_id: `MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u${options.installationId}` };
  return payload;
}

/** The `ping` GitHub sends when a hook is created. */
export function githubPingPayload(repo: GitHubRepoInfo, hook: { id: number; url: string; events: string[] }): any {
  const payload = retarget(
    githubExample("ping", (p) => p.hook?.type === "Repository"),
    repo,
  );
  payload.hook_id = hook.id;
  payload.hook.id = hook.id;
  payload.hook.events = hook.events;
  payload.hook.config = { ...payload.hook.config, url: hook.url, content_type: "json", insecure_ssl: "0" };
  return payload;
}

export interface GitLabProjectInfo {
  /** group[/subgroup...]/project */
  fullName: string;
  id?: number;
  defaultBranch?: string;
  /** Web origin; default https://gitlab.example.com. */
  webUrl?: string;
}

function gitlabProject(base: any, project: GitLabProjectInfo): any {
  const web = project.webUrl ?? "https://gitlab.example.com";
  const host = new URL(web).host;
  const name = project.fullName.split("/").pop()!;
  return {
    ...base,
    id: project.id ?? base.id,
    name,
    web_url: `${web}/${project.fullName}`,
    git_ssh_url: `git@${host}:${project.fullName}.git`,
    git_http_url: `${web}/${project.fullName}.git`,
    namespace: project.fullName.split("/").slice(-2, -1)[0] ?? base.namespace,
    path_with_namespace: project.fullName,
    default_branch: project.defaultBranch ?? "main",
    homepage: `${web}/${project.fullName}`,
    url: `git@${host}:${project.fullName}.git`,
    ssh_url: `git@${host}:${project.fullName}.git`,
    http_url: `${web}/${project.fullName}.git`,
  };
}

function gitlabCommit(project: GitLabProjectInfo, c: FakeCommit) {
  const web = project.webUrl ?? "https://gitlab.example.com";
  return {
    id: c.sha,
    message: c.message,
    title: c.message.split("\n")[0],
    timestamp: c.timestamp,
    url: `${web}/${project.fullName}/-/commit/${c.sha}`,
    author: { name: c.author.name, email: c.author.email },
    added: c.added,
    modified: c.modified,
    removed: c.removed,
  };
}

/** A "Push Hook" (branch) or "Tag Push Hook" (refs/tags/...) payload for a FakePush. */
export function gitlabPushPayload(project: GitLabProjectInfo, push: FakePush): { event: "Push Hook" | "Tag Push Hook"; payload: any } {
  const tag = push.ref.startsWith("refs/tags/");
  const payload: any = structuredClone(tag ? gitlabTagPush : gitlabPush);
  payload.project = gitlabProject(payload.project, project);
  payload.project_id = payload.project.id;
  payload.repository = {
    ...payload.repository,
    name: payload.project.name,
    url: payload.project.url,
    homepage: payload.project.homepage,
    git_http_url: payload.project.git_http_url,
    git_ssh_url: payload.project.git_ssh_url,
  };
  payload.ref = push.ref;
  payload.before = push.before;
  payload.after = push.after;
  // A deleted ref has no checkout_sha; a tag's `after` may be the tag object, `checkout_sha` is the commit.
  payload.checkout_sha = push.deleted ? null : push.after;
  payload.commits = push.commits.map((c) => gitlabCommit(project, c));
  payload.total_commits_count = payload.commits.length;
  if (tag) payload.message = push.deleted ? null : payload.message;
  const author = push.commits[push.commits.length - 1]?.author;
  if (author) {
    payload.user_name = author.name;
    payload.user_username = author.username;
  }
  return { event: tag ? "Tag Push Hook" : "Push Hook", payload };
}

export interface GitLabMergeRequestInfo {
  iid: number;
  sourceBranch: string;
  targetBranch: string;
  /** The source branch's head commit. */
  lastCommit: FakeCommit;
  title?: string;
  /** A different project id marks a merge request from a fork. */
  sourceProjectId?: number;
}

/** A "Merge Request Hook" payload: open, update (with `oldrev` when commits were pushed), close, reopen, merge. */
export function gitlabMergeRequestPayload(
  action: "open" | "update" | "close" | "reopen" | "merge",
  project: GitLabProjectInfo,
  mr: GitLabMergeRequestInfo,
  options: { oldrev?: string } = {},
): any {
  const payload: any = structuredClone(action === "update" ? gitlabMergeRequestUpdate : gitlabMergeRequestOpen);
  const web = project.webUrl ?? "https://gitlab.example.com";
  payload.project = gitlabProject(payload.project, project);
  const attrs = payload.object_attributes;
  attrs.action = action;
  attrs.iid = mr.iid;
  attrs.source_branch = mr.sourceBranch;
  attrs.target_branch = mr.targetBranch;
  attrs.target_project_id = payload.project.id;
  attrs.source_project_id = mr.sourceProjectId ?? payload.project.id;
  attrs.source = mr.sourceProjectId && mr.sourceProjectId !== payload.project.id ? { ...payload.project, id: mr.sourceProjectId } : payload.project;
  attrs.target = payload.project;
  attrs.url = `${web}/${project.fullName}/-/merge_requests/${mr.iid}`;
  attrs.last_commit = gitlabCommit(project, mr.lastCommit);
  delete attrs.last_commit.added;
  delete attrs.last_commit.modified;
  delete attrs.last_commit.removed;
  if (mr.title) attrs.title = mr.title;
  attrs.state = action === "close" ? "closed" : action === "merge" ? "merged" : "opened";
  if (action === "update") {
    if (options.oldrev) attrs.oldrev = options.oldrev;
    else delete attrs.oldrev;
  }
  payload.repository = { ...payload.repository, name: payload.project.name, url: payload.project.url, homepage: payload.project.homepage };
  return payload;
}
