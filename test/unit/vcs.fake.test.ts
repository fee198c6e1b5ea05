// The VCS test kit (test/vcs): the GitHub and GitLab fakes, delivery signing, payload builders and the outbound
// seam, checked inside workerd where the service's tests will use them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { githubDelivery, gitlabDelivery, signGitHub, verifyGitHub } from "../vcs/deliveries";
import { createFakeGitHub, createFakeGitLab } from "../vcs/fake-vcs";
import giteaPull from "../vcs/fixtures/gitea/pull_request.json";
import giteaPush from "../vcs/fixtures/gitea/push.json";
import { fakeFetch, installFakeFetch } from "../vcs/outbound";
import { githubExamples, githubPingPayload, githubPullRequestPayload, githubPushPayload, gitlabMergeRequestPayload, gitlabPushPayload } from "../vcs/payloads";
import { archiveFiles, readTarGz } from "../vcs/tar";

const TOKEN = "ghp_fake_token";
const auth = { authorization: `token ${TOKEN}` };
const jsonHeaders = { ...auth, "content-type": "application/json" };

describe("GitHub signatures", () => {
  it("match GitHub's published test vector", async () => {
    // docs.github.com, "Validating webhook deliveries": secret and payload below give this signature.
    const expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    expect(await signGitHub("It's a Secret to Everybody", "Hello, World!")).toBe(expected);
    expect(await verifyGitHub("It's a Secret to Everybody", "Hello, World!", expected)).toBe(true);
    expect(await verifyGitHub("It's a Secret to Everybody", "Hello, World!!", expected)).toBe(false);
    expect(await verifyGitHub("another secret", "Hello, World!", expected)).toBe(false);
    expect(await verifyGitHub("It's a Secret to Everybody", "Hello, World!", null)).toBe(false);
    expect(await verifyGitHub("It's a Secret to Everybody", "Hello, World!", "sha256=zz")).toBe(false);
  });

  it("sign the exact bytes of a delivery, and can be left off or overridden", async () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra");
    const payload = githubPushPayload({ fullName: "acme/infra" }, gh.createTag("acme/infra", "v1"));
    const signed = await githubDelivery("https://service.test/webhooks/vcs/1", { event: "push", payload, secret: "s3cret", deliveryId: "d-1" });
    const body = await signed.clone().text();
    expect(body).toBe(JSON.stringify(payload));
    expect(signed.headers.get("x-github-event")).toBe("push");
    expect(signed.headers.get("x-github-delivery")).toBe("d-1");
    expect(await verifyGitHub("s3cret", body, signed.headers.get("x-hub-signature-256"))).toBe(true);
    expect(signed.headers.get("x-hub-signature")).toMatch(/^sha1=[0-9a-f]{40}$/);
    const unsigned = await githubDelivery("https://service.test/h", { event: "push", payload });
    expect(unsigned.headers.has("x-hub-signature-256")).toBe(false);
    const forged = await githubDelivery("https://service.test/h", {
      event: "push",
      payload,
      secret: "s3cret",
      headers: { "x-hub-signature-256": "sha256=00" },
    });
    expect(forged.headers.get("x-hub-signature-256")).toBe("sha256=00");
  });
});

describe("GitHub payloads from @octokit/webhooks-examples", () => {
  it("carry the events the service reacts to", () => {
    expect(githubExamples("push").length).toBeGreaterThan(0);
    const actions = githubExamples("pull_request").map((p) => p.action);
    for (const action of ["opened", "synchronize", "closed", "reopened"]) expect(actions).toContain(action);
    expect(githubExamples("ping").length).toBeGreaterThan(0);
  });

  it("are retargeted to the fake's repository and commits", () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra");
    const push = gh.commit("acme/infra", "main", { "network/main.tf": "x", "README.md": "changed" });
    const payload = githubPushPayload({ fullName: "acme/infra", defaultBranch: "main" }, push);
    expect(payload).toMatchObject({
      ref: "refs/heads/main",
      before: push.before,
      after: push.after,
      created: false,
      deleted: false,
      forced: false,
      repository: { full_name: "acme/infra", name: "infra", default_branch: "main", html_url: "https://github.com/acme/infra", owner: { login: "acme" } },
      head_commit: { id: push.after, added: ["network/main.tf"], modified: ["README.md"], removed: [] },
    });
    expect(payload.commits).toHaveLength(1);
    expect(payload.installation).toBeUndefined();
    expect(JSON.stringify(payload)).not.toContain("Codertocat");

    const feature = gh.commit("acme/infra", "feature", { "a.tf": "a" });
    expect(githubPushPayload({ fullName: "acme/infra" }, feature)).toMatchObject({ created: true, before: "0".repeat(40) });
    const forced = gh.forcePush("acme/infra", "feature", { "b.tf": "b" });
    expect(githubPushPayload({ fullName: "acme/infra" }, forced)).toMatchObject({ forced: true });
    const deleted = gh.deleteBranch("acme/infra", "feature");
    expect(githubPushPayload({ fullName: "acme/infra" }, deleted)).toMatchObject({ deleted: true, after: "0".repeat(40), head_commit: null, commits: [] });

    const ghes = githubPushPayload({ fullName: "acme/infra", webUrl: "https://ghe.example.com" }, push, { installationId: 7 });
    expect(ghes.repository.html_url).toBe("https://ghe.example.com/acme/infra");
    // In push payloads repository.url is the web URL (a quirk of GitHub's push event); the API links are the *_url ones.
    expect(ghes.repository.hooks_url).toBe("https://ghe.example.com/api/v3/repos/acme/infra/hooks");
    expect(ghes.installation.id).toBe(7);
  });

  it("build pull_request and ping payloads, forks included", () => {
    const pull = { number: 5, headRef: "feature", headSha: "a".repeat(40), baseRef: "main", baseSha: "b".repeat(40) };
    const sync = githubPullRequestPayload("synchronize", { fullName: "acme/infra" }, pull, { before: "c".repeat(40) });
    expect(sync).toMatchObject({ action: "synchronize", number: 5, before: "c".repeat(40), after: "a".repeat(40) });
    expect(sync.pull_request).toMatchObject({
      number: 5,
      head: { ref: "feature", sha: "a".repeat(40) },
      base: { ref: "main", repo: { full_name: "acme/infra" } },
    });
    expect(sync.pull_request.head.repo.full_name).toBe("acme/infra");
    const fork = githubPullRequestPayload("opened", { fullName: "acme/infra" }, { ...pull, headRepo: "mallory/infra" });
    expect(fork.pull_request.head.repo.full_name).toBe("mallory/infra");
    expect(fork.pull_request.base.repo.full_name).toBe("acme/infra");
    const merged = githubPullRequestPayload("closed", { fullName: "acme/infra" }, { ...pull, merged: true });
    expect(merged.pull_request).toMatchObject({ state: "closed", merged: true });
    const ping = githubPingPayload({ fullName: "acme/infra" }, { id: 99, url: "https://service.test/h", events: ["push"] });
    expect(ping).toMatchObject({ hook_id: 99, hook: { id: 99, config: { url: "https://service.test/h" } }, repository: { full_name: "acme/infra" } });
  });
});

describe("fake GitHub", () => {
  it("registers, reads, updates and deletes hooks, at api.github.com and under /api/v3", async () => {
    const gh = createFakeGitHub({ token: TOKEN });
    gh.createRepo("acme/infra");
    gh.createRepo("acme/other");
    const create = (base: string, repo: string, url: string) =>
      gh.fetch(
        new Request(`${base}/repos/${repo}/hooks`, {
          method: "POST",
          headers: jsonHeaders,
          body: JSON.stringify({ name: "web", config: { url, content_type: "json", secret: "hook-secret" }, events: ["push", "pull_request"], active: true }),
        }),
      );
    const created = await create("https://api.github.com", "acme/infra", "https://service.test/webhooks/vcs/1");
    expect(created.status).toBe(201);
    const hook: any = await created.json();
    expect(hook).toMatchObject({
      type: "Repository",
      name: "web",
      active: true,
      events: ["push", "pull_request"],
      config: { url: "https://service.test/webhooks/vcs/1", secret: "********" },
    });
    expect(JSON.stringify(hook)).not.toContain("hook-secret");
    expect((await create("https://api.github.com", "acme/infra", "https://service.test/webhooks/vcs/1")).status).toBe(422);
    const ghes = await create("https://ghe.example.com/api/v3", "acme/other", "https://service.test/webhooks/vcs/2");
    expect(ghes.status).toBe(201);
    expect(((await ghes.json()) as any).url).toMatch(/^https:\/\/ghe\.example\.com\/api\/v3\/repos\/acme\/other\/hooks\/\d+$/);

    const patched = await gh.fetch(
      new Request(`https://api.github.com/repos/acme/infra/hooks/${hook.id}`, {
        method: "PATCH",
        headers: jsonHeaders,
        body: JSON.stringify({ config: { url: "https://service.test/webhooks/vcs/1b", content_type: "json", secret: "rotated" }, add_events: ["ping"] }),
      }),
    );
    expect(patched.status).toBe(200);
    expect(gh.hooks("acme/infra")[0]).toMatchObject({
      url: "https://service.test/webhooks/vcs/1b",
      secret: "rotated",
      events: ["push", "pull_request", "ping"],
    });

    const list = await gh.fetch(new Request("https://api.github.com/repos/acme/infra/hooks", { headers: auth }));
    expect(((await list.json()) as any[]).map((h) => h.id)).toEqual([hook.id]);
    expect((await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/hooks/${hook.id}`, { method: "DELETE", headers: auth }))).status).toBe(204);
    expect((await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/hooks/${hook.id}`, { headers: auth }))).status).toBe(404);
    expect(gh.hooks("acme/infra")).toEqual([]);
    expect(gh.hookChanges.map((c) => `${c.action} ${c.hook.repo}`)).toEqual([
      "created acme/infra",
      "created acme/other",
      "updated acme/infra",
      "deleted acme/infra",
    ]);
  });

  it("refuses a wrong token and answers unknown repositories with 404", async () => {
    const gh = createFakeGitHub({ token: TOKEN });
    gh.createRepo("acme/infra");
    const wrong = await gh.fetch(new Request("https://api.github.com/repos/acme/infra", { headers: { authorization: "token nope" } }));
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ message: "Bad credentials" });
    expect((await gh.fetch(new Request("https://api.github.com/repos/acme/infra", { headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(200);
    expect((await gh.fetch(new Request("https://api.github.com/repos/acme/nope", { headers: auth }))).status).toBe(404);
  });

  it("records statuses per commit and combines them per context", async () => {
    const gh = createFakeGitHub({ token: TOKEN });
    gh.createRepo("acme/infra");
    const sha = gh.commit("acme/infra", "main", { "main.tf": "x" }).after;
    const post = (body: unknown, at = sha) =>
      gh.fetch(new Request(`https://api.github.com/repos/acme/infra/statuses/${at}`, { method: "POST", headers: jsonHeaders, body: JSON.stringify(body) }));
    const first = await post({
      state: "pending",
      context: "Terraform Cloud/acme/net",
      target_url: "https://service.test/runs/run-1",
      description: "Plan queued",
    });
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ state: "pending", context: "Terraform Cloud/acme/net", target_url: "https://service.test/runs/run-1" });
    expect((await post({ state: "pending", context: "Terraform Cloud/acme/net" })).status).toBe(201);
    await post({ state: "success", context: "Terraform Cloud/acme/app", description: "Planned: +1/~0/-0" });
    expect(gh.combinedStatus("acme/infra", sha).state).toBe("pending");
    await post({ state: "success", context: "terraform cloud/ACME/net", description: "Planned: 0 to add" });
    expect(gh.combinedStatus("acme/infra", sha)).toMatchObject({ state: "success" });
    await post({ state: "failure", context: "Terraform Cloud/acme/app" });
    const combined = await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/commits/main/status`, { headers: auth }));
    expect(await combined.json()).toMatchObject({ state: "failure", sha, total_count: 2 });
    expect(gh.statuses(sha).map((s) => s.state)).toEqual(["pending", "pending", "success", "success", "failure"]);

    expect((await post({ state: "done", context: "x" })).status).toBe(422);
    expect((await post({ state: "success", context: "x", description: "d".repeat(141) })).status).toBe(422);
    expect((await post({ state: "success", context: "x" }, "f".repeat(40))).status).toBe(422);
    expect(gh.statuses(sha)).toHaveLength(5);
  });

  it("redirects a tarball to its download host and serves <owner>-<repo>-<sha7>/ with a pax header", async () => {
    const gh = createFakeGitHub({ token: TOKEN });
    gh.createRepo("acme/infra", { files: { "main.tf": "root" } });
    const push = gh.commit("acme/infra", "main", { "network/vpc.tf": "vpc", "main.tf": null });
    const redirect = await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/tarball/${push.after}`, { headers: auth }));
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe(`https://codeload.github.com/acme/infra/legacy.tar.gz/${push.after}`);

    const fetcher = fakeFetch({ "api.github.com": gh, "codeload.github.com": gh });
    const followed = await fetcher(`https://api.github.com/repos/acme/infra/tarball/main`, { headers: auth });
    expect(followed.status).toBe(200);
    const archive = new Uint8Array(await followed.arrayBuffer());
    expect((await readTarGz(archive)).length).toBeGreaterThan(0);
    const { root, files } = await archiveFiles(archive);
    expect(root).toBe(`acme-infra-${push.after.slice(0, 7)}`);
    expect(files).toEqual({ "README.md": "# acme/infra\n", "network/vpc.tf": "vpc" });
    expect(gh.archives).toEqual([{ repo: "acme/infra", sha: push.after, root }]);
    // The redirect went to another origin, so the token was not sent there.
    expect(gh.requests.at(-1)).toMatchObject({ url: `https://codeload.github.com/acme/infra/legacy.tar.gz/${push.after}` });
    expect(gh.requests.at(-1)?.headers.authorization).toBeUndefined();

    const ghesRedirect = await gh.fetch(new Request("https://ghe.example.com/api/v3/repos/acme/infra/tarball/main", { headers: auth }));
    expect(ghesRedirect.headers.get("location")).toBe(`https://ghe.example.com/_codeload/acme/infra/legacy.tar.gz/${push.after}`);
    const ghes = await fakeFetch({ "ghe.example.com": gh })("https://ghe.example.com/api/v3/repos/acme/infra/tarball/main", { headers: auth });
    expect((await archiveFiles(new Uint8Array(await ghes.arrayBuffer()))).files["network/vpc.tf"]).toBe("vpc");
  });

  it("lists a pull request's files page by page and compares commits", async () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra");
    const changes: Record<string, string> = {};
    for (let i = 0; i < 45; i++) changes[`mod/f${String(i).padStart(2, "0")}.tf`] = String(i);
    const base = gh.resolveRef("acme/infra", "main")!;
    gh.commit("acme/infra", "feature", changes);
    const head = gh.commit("acme/infra", "feature", { "README.md": "edited", "mod/f00.tf": null }).after;
    gh.commit("acme/infra", "main", { "elsewhere.tf": "main moved on" });
    const pull = gh.openPullRequest("acme/infra", { head: "feature" });

    const first = await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/pulls/${pull.number}/files`));
    const page1 = (await first.json()) as any[];
    expect(page1).toHaveLength(30);
    expect(first.headers.get("link")).toContain('rel="next"');
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link")!)![1];
    const page2 = (await (await gh.fetch(new Request(next))).json()) as any[];
    const all = [...page1, ...page2];
    expect(all).toHaveLength(45);
    expect(all.find((f) => f.filename === "README.md")).toMatchObject({ status: "modified" });
    expect(all.some((f) => f.filename === "mod/f00.tf" || f.filename === "elsewhere.tf")).toBe(false);

    const pr = (await (await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/pulls/${pull.number}`))).json()) as any;
    expect(pr).toMatchObject({ number: 1, state: "open", head: { ref: "feature", sha: head }, base: { ref: "main" }, changed_files: 45 });

    const compare = (await (await gh.fetch(new Request(`https://api.github.com/repos/acme/infra/compare/${base}...${head}`))).json()) as any;
    expect(compare).toMatchObject({ status: "ahead", ahead_by: 2, total_commits: 2 });
    expect(compare.files).toHaveLength(45);
  });

  it("delivers events to each subscribed hook, signed with that hook's secret", async () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra");
    for (const [url, events] of [
      ["https://service.test/webhooks/vcs/a", ["push"]],
      ["https://service.test/webhooks/vcs/b", ["pull_request"]],
    ] as const) {
      await gh.fetch(
        new Request("https://api.github.com/repos/acme/infra/hooks", {
          method: "POST",
          body: JSON.stringify({ config: { url, secret: `secret-${url.at(-1)}` }, events }),
        }),
      );
    }
    const received: Request[] = [];
    const push = gh.commit("acme/infra", "main", { "main.tf": "x" });
    const results = await gh.sendEvent("acme/infra", "push", githubPushPayload({ fullName: "acme/infra" }, push), async (r) => {
      received.push(r);
      return new Response(null, { status: 202 });
    });
    expect(results.map((r) => r.status)).toEqual([202]);
    expect(received[0].url).toBe("https://service.test/webhooks/vcs/a");
    expect(await verifyGitHub("secret-a", await received[0].text(), received[0].headers.get("x-hub-signature-256"))).toBe(true);
    expect(received[0].headers.get("x-github-delivery")).toBe(results[0].deliveryId);
  });

  it("fails the next matching requests on demand", async () => {
    const gh = createFakeGitHub();
    gh.createRepo("acme/infra");
    gh.failNext({ method: "POST", path: /\/hooks$/, status: 502, times: 2 });
    const create = () =>
      gh.fetch(new Request("https://api.github.com/repos/acme/infra/hooks", { method: "POST", body: JSON.stringify({ config: { url: "https://s.test/h" } }) }));
    expect((await create()).status).toBe(502);
    expect((await create()).status).toBe(502);
    expect((await create()).status).toBe(201);
    gh.failNext({ path: "/repos/acme/infra", networkError: true });
    await expect(gh.fetch(new Request("https://api.github.com/repos/acme/infra"))).rejects.toThrow(TypeError);
    expect(gh.requestsTo(/\/hooks$/, "POST")).toHaveLength(3);
  });
});

describe("fake GitLab", () => {
  const PAT = "glpat-fake";
  const glAuth = { "private-token": PAT };

  it("finds projects by id or encoded path, subgroups included, and refuses a wrong token", async () => {
    const gl = createFakeGitLab({ token: PAT });
    gl.createRepo("acme/platform/infra");
    const byPath = await gl.fetch(new Request("https://gitlab.example.com/api/v4/projects/acme%2Fplatform%2Finfra", { headers: glAuth }));
    expect(byPath.status).toBe(200);
    const project = (await byPath.json()) as any;
    expect(project).toMatchObject({
      path_with_namespace: "acme/platform/infra",
      default_branch: "main",
      web_url: "https://gitlab.example.com/acme/platform/infra",
    });
    expect(
      (await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${project.id}`, { headers: { authorization: `Bearer ${PAT}` } }))).status,
    ).toBe(200);
    expect((await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${project.id}`, { headers: { "private-token": "x" } }))).status).toBe(401);
    expect((await gl.fetch(new Request("https://gitlab.example.com/api/v4/projects/acme%2Fnope", { headers: glAuth }))).status).toBe(404);
  });

  it("manages hooks from JSON or form bodies and never answers the token", async () => {
    const gl = createFakeGitLab({ token: PAT });
    const id = gl.createRepo("acme/infra").id;
    const created = await gl.fetch(
      new Request(`https://gitlab.example.com/api/v4/projects/${id}/hooks`, {
        method: "POST",
        headers: { ...glAuth, "content-type": "application/json" },
        body: JSON.stringify({ url: "https://service.test/webhooks/vcs/g1", token: "hook-token", push_events: true, merge_requests_events: true }),
      }),
    );
    expect(created.status).toBe(201);
    const hook = (await created.json()) as any;
    expect(hook).toMatchObject({ url: "https://service.test/webhooks/vcs/g1", push_events: true, merge_requests_events: true, tag_push_events: false });
    expect(JSON.stringify(hook)).not.toContain("hook-token");
    const form = await gl.fetch(
      new Request(`https://gitlab.example.com/api/v4/projects/acme%2Finfra/hooks/${hook.id}`, {
        method: "PUT",
        headers: { ...glAuth, "content-type": "application/x-www-form-urlencoded" },
        body: "token=rotated&tag_push_events=true",
      }),
    );
    expect(await form.json()).toMatchObject({ push_events: true, merge_requests_events: true, tag_push_events: true });
    expect(gl.hooks("acme/infra")[0]).toMatchObject({ secret: "rotated", events: ["push", "tag_push", "merge_requests"] });
    expect((await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/hooks`, { method: "POST", headers: glAuth }))).status).toBe(400);
    expect(
      (await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/hooks/${hook.id}`, { method: "DELETE", headers: glAuth }))).status,
    ).toBe(204);
    expect(gl.hookChanges.map((c) => c.action)).toEqual(["created", "updated", "deleted"]);
  });

  it("refuses a repeated pending or running status, as GitLab's state machine does", async () => {
    const gl = createFakeGitLab();
    const id = gl.createRepo("acme/infra").id;
    const sha = gl.commit("acme/infra", "main", { "main.tf": "x" }).after;
    const post = (params: Record<string, string>) =>
      gl.fetch(
        new Request(`https://gitlab.example.com/api/v4/projects/${id}/statuses/${sha}?${new URLSearchParams(params)}`, {
          method: "POST",
        }),
      );
    const pending = await post({ state: "pending", name: "Terraform Cloud/acme/net", target_url: "https://service.test/runs/run-1" });
    expect(pending.status).toBe(201);
    expect(await pending.json()).toMatchObject({ status: "pending", name: "Terraform Cloud/acme/net", sha });
    const again = await post({ state: "pending", name: "Terraform Cloud/acme/net" });
    expect(again.status).toBe(400);
    expect(((await again.json()) as any).message).toContain("Cannot transition status via :enqueue from :pending");
    expect((await post({ state: "running", name: "Terraform Cloud/acme/net" })).status).toBe(201);
    expect((await post({ state: "running", name: "Terraform Cloud/acme/net" })).status).toBe(400);
    expect((await post({ state: "success", name: "Terraform Cloud/acme/net", description: "Planned" })).status).toBe(201);
    expect((await post({ state: "pending", name: "Terraform Cloud/acme/other" })).status).toBe(201);
    expect((await post({ state: "failure", name: "x" })).status).toBe(400);
    expect(gl.statuses(sha).map((s) => `${s.context}=${s.state}`)).toEqual([
      "Terraform Cloud/acme/net=pending",
      "Terraform Cloud/acme/net=running",
      "Terraform Cloud/acme/net=success",
      "Terraform Cloud/acme/other=pending",
    ]);
    const listed = await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/repository/commits/${sha}/statuses`));
    expect(((await listed.json()) as any[]).map((s) => s.status)).toEqual(["pending", "running", "success", "pending"]);
  });

  it("serves archives under <project>-<ref>-<sha>/ and a merge request's diffs", async () => {
    const gl = createFakeGitLab();
    const id = gl.createRepo("acme/platform/infra").id;
    gl.commit("acme/platform/infra", "feature", { "network/main.tf": "n" });
    const head = gl.commit("acme/platform/infra", "feature", { "README.md": null }).after;
    const mr = gl.openPullRequest("acme/platform/infra", { head: "feature" });

    const archive = await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/repository/archive.tar.gz?sha=${head}`));
    expect(archive.status).toBe(200);
    const { root, files } = await archiveFiles(new Uint8Array(await archive.arrayBuffer()));
    expect(root).toBe(`infra-${head}-${head}`);
    expect(files).toEqual({ "network/main.tf": "n" });

    const diffs = (await (await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/merge_requests/${mr.number}/diffs`))).json()) as any[];
    expect(diffs.map((d) => [d.new_path, d.new_file, d.deleted_file])).toEqual([
      ["README.md", false, true],
      ["network/main.tf", true, false],
    ]);
    const changes = (await (await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/merge_requests/${mr.number}/changes`))).json()) as any;
    expect(changes).toMatchObject({ iid: 1, source_branch: "feature", target_branch: "main", sha: head, overflow: false });
    expect(changes.changes).toHaveLength(2);
    const compare = (await (
      await gl.fetch(new Request(`https://gitlab.example.com/api/v4/projects/${id}/repository/compare?from=main&to=${head}`))
    ).json()) as any;
    expect(compare.commits).toHaveLength(2);
    expect(compare.diffs).toHaveLength(2);
  });

  it("builds push, tag and merge request payloads and delivers them with the hook's token", async () => {
    const gl = createFakeGitLab();
    const repo = gl.createRepo("acme/platform/infra");
    const project = { fullName: repo.fullName, id: repo.id };
    const push = gl.commit(repo.fullName, "main", { "main.tf": "x" });
    const { event, payload } = gitlabPushPayload(project, push);
    expect(event).toBe("Push Hook");
    expect(payload).toMatchObject({
      object_kind: "push",
      ref: "refs/heads/main",
      after: push.after,
      checkout_sha: push.after,
      project: { id: repo.id, path_with_namespace: "acme/platform/infra", namespace: "platform" },
      commits: [{ id: push.after, added: ["main.tf"] }],
      total_commits_count: 1,
    });
    expect(gitlabPushPayload(project, gl.createTag(repo.fullName, "v1.0.0")).event).toBe("Tag Push Hook");
    expect(gitlabPushPayload(project, gl.deleteBranch(repo.fullName, "main")).payload).toMatchObject({ checkout_sha: null, commits: [] });

    const mr = gitlabMergeRequestPayload(
      "update",
      project,
      { iid: 3, sourceBranch: "feature", targetBranch: "main", lastCommit: push.commits[0] },
      { oldrev: push.before },
    );
    expect(mr).toMatchObject({
      object_kind: "merge_request",
      object_attributes: { action: "update", iid: 3, oldrev: push.before, last_commit: { id: push.after } },
    });
    const fork = gitlabMergeRequestPayload("open", project, {
      iid: 4,
      sourceBranch: "f",
      targetBranch: "main",
      lastCommit: push.commits[0],
      sourceProjectId: 999,
    });
    expect(fork.object_attributes).toMatchObject({ source_project_id: 999, target_project_id: repo.id });
    expect(fork.object_attributes.oldrev).toBeUndefined();

    await gl.fetch(
      new Request(`https://gitlab.example.com/api/v4/projects/${repo.id}/hooks`, {
        method: "POST",
        body: new URLSearchParams({ url: "https://service.test/g", token: "tkn" }),
      }),
    );
    const got: Request[] = [];
    await gl.sendEvent(repo.fullName, "Push Hook", payload, async (r) => {
      got.push(r);
      return new Response("ok");
    });
    await gl.sendEvent(repo.fullName, "Merge Request Hook", mr, async (r) => {
      got.push(r);
      return new Response("ok");
    });
    expect(got).toHaveLength(1);
    expect(got[0].headers.get("x-gitlab-token")).toBe("tkn");
    expect(got[0].headers.get("x-gitlab-event")).toBe("Push Hook");
    expect(got[0].headers.get("idempotency-key")).toBe(got[0].headers.get("x-gitlab-event-uuid"));

    const manual = await gitlabDelivery("https://service.test/g", { event: "Merge Request Hook", payload: mr, token: "tkn", eventId: "e-1" });
    expect(manual.headers.get("idempotency-key")).toBe("e-1");
    expect(JSON.parse(await manual.text())).toEqual(mr);
  });
});

describe("Gitea deliveries recorded from Gitea 1.26.0", () => {
  // Recorded by test/node/vcs.gitea.test.ts (GITEA_RECORD=1); re-signed over the normalised body with this secret.
  const FIXTURE_SECRET = "gitea-fixture-secret";

  for (const [name, fixture] of [
    ["push", giteaPush],
    ["pull_request", giteaPull],
  ] as const) {
    it(`${name}: GitHub-style headers whose signature verifies`, async () => {
      const headers = fixture.headers as Record<string, string>;
      const body = JSON.stringify(fixture.body);
      expect(headers["X-GitHub-Event"]).toBe(name);
      expect(headers["X-GitHub-Delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(await verifyGitHub(FIXTURE_SECRET, body, headers["X-Hub-Signature-256"])).toBe(true);
    });
  }

  it("differ from GitHub's shapes where the notes say", () => {
    const push = giteaPush.body as any;
    expect(push.compare_url).toBeDefined();
    expect(push.created).toBeUndefined();
    expect(push.commits[0].added).toBeDefined();
    const pull = giteaPull.body as any;
    expect(pull.action).toBe("synchronized");
    expect(giteaPull.headers["X-GitHub-Event-Type"]).toBe("pull_request_sync");
  });
});

describe("outbound seam", () => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it("answers a fetch made inside the Worker's Durable Object from the fake", async () => {
    const gh = createFakeGitHub({ token: TOKEN });
    gh.createRepo("acme/infra");
    restore = installFakeFetch({ "api.github.com": gh, "codeload.github.com": gh });
    const stub = env.WORKSPACES.getByName(`vcs-seam-${crypto.randomUUID()}`);
    const answer = await runInDurableObject(stub, async () => {
      const response = await fetch("https://api.github.com/repos/acme/infra", { headers: auth });
      return { status: response.status, body: (await response.json()) as any };
    });
    expect(answer.status).toBe(200);
    expect(answer.body.full_name).toBe("acme/infra");
    expect(gh.requestsTo("/repos/acme/infra", "GET")).toHaveLength(1);
  });

  it("refuses hosts it has no route for", async () => {
    restore = installFakeFetch({});
    await expect(fetch("https://example.com/")).rejects.toThrow(/no route for example\.com/);
  });
});
