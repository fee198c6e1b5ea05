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
export { FakeGitHub, type FakeGitHubOptions } from "./fake-github";
export { FakeGitLab, type FakeGitLabOptions } from "./fake-gitlab";
export {
  type Deliver,
  type DeliveryResult,
  type FailRule,
  type FakeAuthor,
  type FakeCommit,
  type FakeHook,
  type FakePull,
  type FakePush,
  type FakeRepo,
  type FakeStatus,
  type FileChanges,
  type HookChange,
  type RecordedRequest,
  type ServedArchive,
  fakeSha,
} from "./fake-host";

import { FakeGitHub, type FakeGitHubOptions } from "./fake-github";
import { FakeGitLab, type FakeGitLabOptions } from "./fake-gitlab";

export function createFakeGitHub(options: FakeGitHubOptions = {}): FakeGitHub {
  return new FakeGitHub(options);
}

export function createFakeGitLab(options: FakeGitLabOptions = {}): FakeGitLab {
  return new FakeGitLab(options);
}
