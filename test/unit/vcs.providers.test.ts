// The VCS providers' pure parts: signatures, deliveries parsed into events, archives repacked, file triggers.
import { describe, expect, it } from "vitest";
import { repackArchive } from "../../src/vcs/archive";
import { triggers } from "../../src/vcs/file-filter.rules";
import * as gitea from "../../src/vcs/providers/gitea";
import * as github from "../../src/vcs/providers/github";
import * as gitlab from "../../src/vcs/providers/gitlab";
import { signGitHub } from "../vcs/deliveries";
import { createFakeGitHub } from "../vcs/fake-vcs";
import giteaPull from "../vcs/fixtures/gitea/pull_request.json";
import giteaPush from "../vcs/fixtures/gitea/push.json";
import gitlabTagPush from "../vcs/fixtures/gitlab/tag_push.json";
import { githubPullRequestPayload, githubPushPayload } from "../vcs/payloads";
import { readTarGz, tarGz } from "../vcs/tar";

const enc = new TextEncoder();

describe("signatures", () => {
  it("GitHub's published test vector verifies; a changed body or secret does not", async () => {
    const body = enc.encode("Hello, World!");
    const headers = new Headers({ "x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" });
    expect(await github.verifyDelivery(headers, body, "It's a Secret to Everybody")).toBe(true);
    expect(await github.verifyDelivery(headers, enc.encode("Hello, World?"), "It's a Secret to Everybody")).toBe(false);
    expect(await github.verifyDelivery(headers, body, "another secret")).toBe(false);
    expect(await github.verifyDelivery(new Headers(), body, "It's a Secret to Everybody")).toBe(false);
  });

  it("Gitea's recorded delivery verifies with its hook's secret", async () => {
    const raw = enc.encode(JSON.stringify(giteaPush.body));
    expect(await gitea.verifyDelivery(new Headers(giteaPush.headers), raw, "gitea-fixture-secret")).toBe(true);
    const bare = new Headers({ "x-gitea-signature": (await signGitHub("gitea-fixture-secret", raw)).slice(7) });
    expect(await gitea.verifyDelivery(bare, raw, "gitea-fixture-secret")).toBe(true);
    expect(await gitea.verifyDelivery(new Headers(giteaPush.headers), raw, "wrong")).toBe(false);
  });

  it("GitLab's secret token must be the hook's", async () => {
    expect(await gitlab.verifyDelivery(new Headers({ "x-gitlab-token": "s3cret" }), new Uint8Array(), "s3cret")).toBe(true);
    expect(await gitlab.verifyDelivery(new Headers({ "x-gitlab-token": "s3creT" }), new Uint8Array(), "s3cret")).toBe(false);
    expect(await gitlab.verifyDelivery(new Headers(), new Uint8Array(), "s3cret")).toBe(false);
  });
});

describe("deliveries", () => {
  const repo = { fullName: "acme/infra" };

  it("a GitHub push: the branch, the commit, the changed files; a forced push and a new branch change an unknown set", async () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra", { files: { "main.tf": "x" } });
    const p = gh.commit("acme/infra", "main", { "net/vpc.tf": "y", "main.tf": null }, { message: "Move" });
    const parsed = await github.parseDelivery(new Headers({ "x-github-event": "push", "x-github-delivery": "d-1" }), githubPushPayload(repo, p));
    expect(parsed.deliveryId).toBe("d-1");
    expect(parsed.event).toMatchObject({ type: "push", action: "updated", repo: "acme/infra", branch: "main", sha: p.after, forced: false });
    expect(parsed.event!.paths!.sort()).toEqual(["main.tf", "net/vpc.tf"]);
    const forced = gh.forcePush("acme/infra", "main", { "a.tf": "z" });
    expect((await github.parseDelivery(new Headers({ "x-github-event": "push" }), githubPushPayload(repo, forced))).event).toMatchObject({
      forced: true,
      paths: null,
    });
    const created = gh.commit("acme/infra", "feature", { "b.tf": "z" }, { from: "main" });
    const c = (
      await github.parseDelivery(new Headers({ "x-github-event": "push" }), githubPushPayload(repo, { ...created, created: true, before: "0".repeat(40) }))
    ).event;
    expect(c).toMatchObject({ action: "created", paths: null, before: null });
    const deleted = gh.deleteBranch("acme/infra", "feature");
    expect((await github.parseDelivery(new Headers({ "x-github-event": "push" }), githubPushPayload(repo, deleted))).event).toMatchObject({
      action: "deleted",
    });
  });

  it("a GitHub pull request: its head, its base, a fork; ping is ignored", async () => {
    const info = { number: 7, headRef: "feature", headSha: "a".repeat(40), baseRef: "main", baseSha: "b".repeat(40), title: "T" };
    const opened = await github.parseDelivery(new Headers({ "x-github-event": "pull_request" }), githubPullRequestPayload("opened", repo, info));
    expect(opened.event).toMatchObject({
      type: "pull_request",
      action: "opened",
      sha: info.headSha,
      pullRequest: { number: 7, baseBranch: "main", headBranch: "feature", fromFork: false },
    });
    const sync = await github.parseDelivery(new Headers({ "x-github-event": "pull_request" }), githubPullRequestPayload("synchronize", repo, info));
    expect(sync.event?.action).toBe("updated");
    const fork = await github.parseDelivery(
      new Headers({ "x-github-event": "pull_request" }),
      githubPullRequestPayload("opened", repo, { ...info, headRepo: "someone/infra" }),
    );
    expect(fork.event?.pullRequest?.fromFork).toBe(true);
    const ping = await github.parseDelivery(new Headers({ "x-github-event": "ping" }), {
      zen: "Keep it logically awesome.",
      repository: { full_name: "acme/infra" },
    });
    expect(ping).toMatchObject({ event: null, ignored: "ping" });
  });

  it("Gitea's recorded push and pull request update (`synchronized`)", async () => {
    const push = await gitea.parseDelivery(new Headers(giteaPush.headers), giteaPush.body);
    expect(push.event).toMatchObject({ type: "push", action: "updated", branch: "main", sha: giteaPush.body.after, paths: ["main.tf"] });
    const pull = await gitea.parseDelivery(new Headers(giteaPull.headers), giteaPull.body);
    expect(pull.event).toMatchObject({ type: "pull_request", action: "updated", pullRequest: { fromFork: false } });
    expect(pull.deliveryId).toBe(giteaPull.headers["X-GitHub-Delivery"]);
  });

  it("a GitLab annotated tag runs its commit, not the tag object", async () => {
    const parsed = await gitlab.parseDelivery(new Headers({ "x-gitlab-event": "Tag Push Hook", "idempotency-key": "k-1" }), gitlabTagPush);
    expect(parsed.deliveryId).toBe("k-1");
    expect(parsed.event).toMatchObject({ type: "tag", sha: gitlabTagPush.checkout_sha, tag: gitlabTagPush.ref.replace("refs/tags/", "") });
    expect(parsed.event!.sha).not.toBe(gitlabTagPush.after);
  });
});

describe("archives", () => {
  it("strips the host's top directory and GitHub's pax header, keeping files, modes and nested paths", async () => {
    const long = `${"deep/".repeat(25)}main.tf`;
    const tgz = await tarGz("acme-infra-1a2b3c4", { "main.tf": "a", "modules/net/vpc.tf": "b", [long]: "c" }, "1a2b3c4d");
    const out = await readTarGz(await repackArchive(tgz, 1_000_000));
    const files = out.filter((e) => e.type === "file").map((e) => e.path);
    expect(files.sort()).toEqual([long, "main.tf", "modules/net/vpc.tf"].sort());
    expect(out.some((e) => e.path.startsWith("acme-infra") || e.path.includes("pax_global_header"))).toBe(false);
    expect(new TextDecoder().decode(out.find((e) => e.path === "modules/net/vpc.tf")!.content)).toBe("b");
  });

  it("refuses what is not an archive, and one larger than allowed unpacked", async () => {
    await expect(repackArchive(enc.encode("not gzip"), 1000)).rejects.toThrow(/gzip/);
    const big = await tarGz("top", { "big.txt": "x".repeat(10_000) });
    await expect(repackArchive(big, 5_000)).rejects.toThrow(/more than 5000 bytes/);
  });
});

describe("file triggers", () => {
  const f = (o: Partial<Parameters<typeof triggers>[0]>) => ({
    fileTriggersEnabled: true,
    triggerPrefixes: [],
    triggerPatterns: [],
    workingDirectory: null,
    ...o,
  });

  it("follows HCP's rules", () => {
    expect(triggers(f({ fileTriggersEnabled: false }), ["docs/a.md"])).toBe(true);
    expect(triggers(f({}), null)).toBe(true);
    expect(triggers(f({}), ["docs/a.md"])).toBe(true);
    expect(triggers(f({ workingDirectory: "infra" }), ["docs/a.md"])).toBe(false);
    expect(triggers(f({ workingDirectory: "/infra/" }), ["infra/main.tf"])).toBe(true);
    expect(triggers(f({ workingDirectory: "infra", triggerPrefixes: ["modules/"] }), ["modules/vpc/main.tf"])).toBe(true);
    expect(triggers(f({ workingDirectory: "infra" }), ["infrastructure/main.tf"])).toBe(false);
    expect(triggers(f({ triggerPatterns: ["/**/networking/*.tf"] }), ["a/b/networking/vpc.tf"])).toBe(true);
    expect(triggers(f({ triggerPatterns: ["/**/networking/*.tf"] }), ["a/b/networking/sub/vpc.tf"])).toBe(false);
    expect(triggers(f({ triggerPatterns: ["/base/*"] }), ["base/.hidden"])).toBe(true);
    expect(triggers(f({ triggerPatterns: ["*.tf"] }), ["main.tf"])).toBe(true);
  });
});
