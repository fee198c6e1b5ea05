/**
 * What the service knows of a VCS host, whatever the provider: a connection (where its API is and the token that acts
 * there), a delivery's event normalised from the provider's payload, and the client the service drives. Each provider
 * implements `VcsClient` and its delivery parsing in `src/vcs/providers/<kind>.ts`.
 */

/** The API dialects this service speaks: GitHub (github.com and Enterprise), GitLab (all editions), Gitea/Forgejo. */
export type VcsKind = "github" | "gitlab" | "gitea";

export interface VcsConnection {
  kind: VcsKind;
  /** The API's base URL as the OAuth client names it (`https://api.github.com`, `https://ghe.example.com/api/v3`, `https://gitlab.example.com/api/v4`, `http://127.0.0.1:3000/api/v1`). */
  apiUrl: string;
  /** The web base URL (`https://github.com`). */
  httpUrl: string;
  /** The OAuth token string (a personal access token). */
  token: string;
}

/** The outbound fetch the service hands to a client (checks addresses, follows and checks redirects). */
export type VcsFetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface VcsSender {
  username: string | null;
  avatarUrl: string | null;
  htmlUrl: string | null;
}

export interface VcsPullRequest {
  number: number;
  title: string;
  body: string | null;
  /** The pull request's web page. */
  url: string;
  headBranch: string;
  baseBranch: string;
  /** From another repository than the base (a fork): never planned. */
  fromFork: boolean;
}

/** One delivery's meaning, provider-neutral. */
export interface VcsEvent {
  /** `push`: a branch moved (or was created/deleted); `tag`: a tag pushed; `pull_request`: opened/updated/closed/... */
  type: "push" | "tag" | "pull_request";
  /** push/tag: `created` | `updated` | `deleted`; pull_request: `opened` | `updated` (new head) | `reopened` | `closed` | `merged` | `other`. */
  action: "created" | "updated" | "deleted" | "opened" | "reopened" | "closed" | "merged" | "other";
  /** The repository as `vcs-repo.identifier` names it (`owner/name`; GitLab: `group/sub/name`). */
  repo: string;
  /** The commit to run (the new head; the PR's head commit). 40 zeros never appear: a deleted ref has action `deleted`. */
  sha: string;
  /** The previous head of a push (null when unknown). */
  before: string | null;
  /** push: the branch; pull_request: the head branch; tag: null. */
  branch: string | null;
  /** tag: the tag's name (no `refs/tags/`). */
  tag: string | null;
  defaultBranch: string | null;
  /** Repository-root-relative paths changed (added, modified, removed); null when the delivery cannot say (force push, new branch, too many, a pull request's files not yet fetched). */
  paths: string[] | null;
  /** The push was forced (the commit list does not describe the change). */
  forced: boolean;
  commitMessage: string | null;
  commitUrl: string | null;
  /** The compare URL of a push; the pull request's URL for a pull request. */
  compareUrl: string | null;
  cloneUrl: string | null;
  /** The repository's web page. */
  repoUrl: string | null;
  pullRequest: VcsPullRequest | null;
  sender: VcsSender;
}

/** What a delivery is, once its signature held. `event` null: nothing to act on (ping, an event or action we ignore). */
export interface ParsedDelivery {
  /** The provider's delivery id (X-GitHub-Delivery, GitLab's Idempotency-Key / X-Gitlab-Event-UUID, else a hash of the body). */
  deliveryId: string;
  /** The provider's event name as sent (`push`, `pull_request`, `Push Hook`, `ping`...). */
  eventName: string;
  event: VcsEvent | null;
  /** Why `event` is null (`ping`, `unsupported event issues`...). */
  ignored?: string;
}

export interface CommitInfo {
  sha: string;
  message: string | null;
  url: string | null;
  author: VcsSender;
}

export type StatusState = "pending" | "success" | "failure" | "error";

export interface VcsClient {
  /** Registers a webhook for push and pull-request events (and tag pushes) delivering JSON to `url` signed with `secret`; its id on the host. */
  createHook(repo: string, url: string, secret: string): Promise<string>;
  /** Removes a webhook; a hook already gone is not an error. */
  deleteHook(repo: string, hookId: string): Promise<void>;
  /** The repository's archive at `sha` as the host serves it (tar.gz with one top directory; repackArchive strips it). */
  archive(repo: string, sha: string): Promise<Uint8Array>;
  /** The head commit of `branch` (null: the default branch), with the branch name resolved. */
  branchHead(repo: string, branch: string | null): Promise<CommitInfo & { branch: string; defaultBranch: string }>;
  /** The paths a pull request changes; null when the host cannot say or they are more than it lists (GitHub: 3000). */
  pullRequestFiles(repo: string, number: number): Promise<string[] | null>;
  /** The paths changed between two commits; null when unknown or over the host's limit (GitHub compare: 300). */
  compareFiles(repo: string, base: string, head: string): Promise<string[] | null>;
  /** Posts a commit status. `description` at most 140 characters (cut by the client). */
  setStatus(repo: string, sha: string, status: { state: StatusState; description: string; targetUrl: string; context: string }): Promise<void>;
}

/** A host's answer the client could not use: `status` is the HTTP status (0: no answer). */
export class VcsError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
