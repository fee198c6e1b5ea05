// Runs from repositories (HCP Terraform docs: "UI and VCS-driven run workflow"; API docs: Workspaces `vcs-repo`,
// OAuth Clients, Configuration Versions "Ingress Attributes"), against a fake GitHub Enterprise whose REST API the
// Worker and its objects reach through the outbound fetch seam (test/vcs/README.md).
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, postOAuthClient } from "../fixtures";
import { ADMIN, api, uniqueName } from "../helpers";
import { signIn, ui } from "../ui-client";
import { claim, finish } from "../do/runs.helpers";
import { githubDelivery } from "../vcs/deliveries";
import { createFakeGitHub, type FakeGitHub, type FakePush, type FakeRepo } from "../vcs/fake-vcs";
import { fakeFetchPerTest } from "../vcs/outbound";
import { githubPullRequestPayload, githubPushPayload } from "../vcs/payloads";

const HOST = "ghe.example.com";
const TOKEN = "ghp_vcs_test_token";
// Each test its own repository: another test's workspaces, retrying on their own alarms, never see this one's.
let REPO = "acme/infra";
const MAIN_TF = 'resource "terraform_data" "x" {}\n';

const installFake = fakeFetchPerTest();

/** A branch's tip in the fake (its repository model is the fake's own). */
const tip = (gh: FakeGitHub, branch: string): string => (gh as unknown as { repo(n: string): FakeRepo }).repo(REPO).branches.get(branch)!;

const deliver = (req: Request) => exports.default.fetch(req);
const repoInfo = () => ({ fullName: REPO, webUrl: `https://${HOST}` });

function fake(): FakeGitHub {
  REPO = uniqueName("acme/infra");
  const gh = createFakeGitHub({ token: TOKEN });
  gh.createRepo(REPO, { files: { "main.tf": MAIN_TF, "docs/README.md": "docs" } });
  installFake({ [HOST]: gh });
  return gh;
}

async function oauthClient(org: string, attributes: Record<string, unknown> = {}): Promise<string> {
  const res = await postOAuthClient(org, {
    "service-provider": "github_enterprise",
    "http-url": `https://${HOST}`,
    "api-url": `https://${HOST}/api/v3`,
    "oauth-token-string": TOKEN,
    ...attributes,
  });
  expect(res.status).toBe(201);
  expect(JSON.stringify(res.body)).not.toContain(TOKEN);
  return res.body.data.relationships["oauth-tokens"].data[0].id;
}

async function connectedWorkspace(org: string, tokenId: string, attributes: Record<string, unknown> = {}) {
  const res = await api("POST", `/organizations/${org}/workspaces`, {
    body: {
      data: { type: "workspaces", attributes: { name: uniqueName("ws"), "vcs-repo": { identifier: REPO, "oauth-token-id": tokenId }, ...attributes } },
    },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; attributes: Record<string, unknown> };
}

/** Runs the object's alarm until it has nothing due (the fake stays installed meanwhile). */
async function settle(workspaceId: string): Promise<void> {
  const stub = env.WORKSPACES.getByName(workspaceId);
  for (let i = 0; i < 8; i++) {
    await runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The workspace's runs; `plans`: its plan-only runs (the list leaves them out unless filtered for, as HCP's does). */
async function runsOf(workspaceId: string, plans = false) {
  const res = await api("GET", `/workspaces/${workspaceId}/runs${plans ? "?filter%5Boperation%5D=plan_only" : ""}`);
  return res.body.data as Array<{ id: string; attributes: Record<string, any>; relationships: Record<string, any> }>;
}

async function push(gh: FakeGitHub, p: FakePush, deliveryId?: string) {
  return gh.sendEvent(REPO, "push", githubPushPayload(repoInfo(), p), deliver, deliveryId ? { deliveryId } : {});
}

describe("VCS connections", () => {
  it("registers one hook per repository for every workspace on it and removes it when the last one leaves", async () => {
    const gh = fake();
    const org = await createOrg();
    const tokenId = await oauthClient(org);
    const a = await connectedWorkspace(org, tokenId);
    await settle(a.id);
    expect(gh.hooks(REPO)).toHaveLength(1);
    const hook = gh.hooks(REPO)[0]!;
    expect(hook.url).toMatch(/\/webhooks\/vcs\/hook-[A-Za-z0-9]+$/);
    expect(hook.events).toEqual(expect.arrayContaining(["push", "pull_request"]));
    const b = await connectedWorkspace(org, tokenId);
    await settle(b.id);
    expect(gh.hooks(REPO)).toHaveLength(1);
    expect(gh.hookChanges.filter((c) => c.action === "created")).toHaveLength(1);

    // The workspace answers with its connection; the token string never appears.
    const shown = await api("GET", `/workspaces/${a.id}`);
    expect(shown.body.data.attributes["vcs-repo"]).toMatchObject({ identifier: REPO, "oauth-token-id": tokenId });
    expect(shown.text).not.toContain(TOKEN);

    const disconnect = async (id: string) =>
      expect((await api("PATCH", `/workspaces/${id}`, { body: { data: { type: "workspaces", attributes: { "vcs-repo": null } } } })).status).toBe(200);
    await disconnect(a.id);
    await settle(a.id);
    expect(gh.hooks(REPO)).toHaveLength(1);
    await disconnect(b.id);
    await settle(b.id);
    expect(gh.hooks(REPO)).toHaveLength(0);
    expect(gh.hookChanges.filter((c) => c.action === "deleted")).toHaveLength(1);
  });

  it("makes the branch's head the current configuration version, with its commit, and runs nothing before a first run", async () => {
    const gh = fake();
    const org = await createOrg();
    const w = await connectedWorkspace(org, await oauthClient(org));
    await settle(w.id);
    const head = tip(gh, "main");
    const ws = await api("GET", `/workspaces/${w.id}`);
    const cvId = ws.body.data.relationships["current-configuration-version"].data.id;
    const cv = await api("GET", `/configuration-versions/${cvId}?include=ingress_attributes`);
    expect(cv.body.data.attributes).toMatchObject({ source: "github", status: "uploaded", speculative: false });
    expect(cv.body.included[0]).toMatchObject({
      type: "ingress-attributes",
      attributes: { "commit-sha": head, identifier: REPO, branch: "main", "is-pull-request": false },
    });
    const ia = await api("GET", `/configuration-versions/${cvId}/ingress-attributes`);
    expect(ia.body.data.attributes["commit-sha"]).toBe(head);
    expect(await runsOf(w.id)).toHaveLength(0);
    // The archive's top directory is stripped: the configuration is at the root.
    const archive = gh.archives.at(-1);
    expect(archive?.sha).toBe(head);
  });

  it("queue-all-runs runs the head at once", async () => {
    fake();
    const org = await createOrg();
    const w = await connectedWorkspace(org, await oauthClient(org), { "queue-all-runs": true });
    await settle(w.id);
    const runs = await runsOf(w.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.attributes.source).toBe("tfe-configuration-version");
  });

  it("refuses what it could not honour, whatever the client sends", async () => {
    fake();
    const org = await createOrg();
    const tokenId = await oauthClient(org);
    const bad = async (attributes: Record<string, unknown>) =>
      api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), ...attributes } } } });
    const vcs = { identifier: REPO, "oauth-token-id": tokenId };
    const both = await bad({ "vcs-repo": vcs, "trigger-patterns": ["/a/**"], "trigger-prefixes": ["a/"] });
    expect(both.status).toBe(422);
    expect(both.body.errors[0].source.pointer).toBe("/data/attributes/trigger-patterns");
    expect((await bad({ "vcs-repo": { ...vcs, "tags-regex": "^v" }, "trigger-patterns": ["/a/**"], "file-triggers-enabled": false })).status).toBe(422);
    expect((await bad({ "vcs-repo": { ...vcs, "tags-regex": "^v" }, "file-triggers-enabled": true })).status).toBe(422);
    expect((await bad({ "vcs-repo": { ...vcs, identifier: "no-slash" } })).status).toBe(422);
    // The tfe provider sends every key, "" meaning unset.
    const ok = await bad({ "vcs-repo": { ...vcs, branch: "", "tags-regex": "", "github-app-installation-id": "" } });
    expect(ok.status).toBe(201);
    expect(ok.body.data.attributes["vcs-repo"]["tags-regex"]).toBeNull();
    // A provider this service cannot run from, and a client without a token string.
    const bitbucket = await api("POST", `/organizations/${org}/oauth-clients`, {
      body: {
        data: {
          type: "oauth-clients",
          attributes: {
            "service-provider": "bitbucket_hosted",
            "http-url": "https://bitbucket.org",
            "api-url": "https://api.bitbucket.org",
            "oauth-token-string": "x",
          },
        },
      },
    });
    const refused = await bad({ "vcs-repo": { identifier: REPO, "oauth-token-id": bitbucket.body.data.relationships["oauth-tokens"].data[0].id } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toContain("bitbucket_hosted");
    const bare = await oauthClient(org, { "oauth-token-string": undefined });
    const noString = await bad({ "vcs-repo": { identifier: REPO, "oauth-token-id": bare } });
    expect(noString.status).toBe(422);
    expect(noString.body.errors[0].detail).toContain("oauth-token-string");
  });
});

describe("VCS deliveries", () => {
  async function ready(attributes: Record<string, unknown> = {}) {
    const gh = fake();
    const org = await createOrg();
    const w = await connectedWorkspace(org, await oauthClient(org), attributes);
    await settle(w.id);
    // A first run, as HCP wants before it runs pushes (no queue-all-runs).
    const first = await api("POST", "/runs", {
      body: { data: { type: "runs", attributes: {}, relationships: { workspace: { data: { type: "workspaces", id: w.id } } } } },
    });
    expect(first.status).toBe(201);
    return { gh, org, w, stub: env.WORKSPACES.getByName(w.id) };
  }

  it("a push to the branch queues a run of that commit with its commit status, once", async () => {
    const { gh, org, w, stub } = await ready({ "auto-apply": false });
    const p = gh.commit(REPO, "main", { "main.tf": `${MAIN_TF}# v2\n` }, { message: "Change the data" });
    const [res] = await push(gh, p, "delivery-1");
    expect(res!.status).toBe(202);
    await settle(w.id);
    const runs = await runsOf(w.id);
    expect(runs).toHaveLength(2);
    const run = runs[0]!;
    expect(run.attributes).toMatchObject({ source: "tfe-configuration-version", message: "Change the data", "plan-only": false });
    const cv = await api("GET", `/runs/${run.id}/configuration-version`);
    const ia = await api("GET", `/configuration-versions/${cv.body.data.id}/ingress-attributes`);
    expect(ia.body.data.attributes).toMatchObject({ "commit-sha": p.after, "commit-message": "Change the data", branch: "main", "on-default-branch": true });
    const context = `Terraform Cloud/${org}/${w.attributes.name}`;
    expect(gh.statuses(p.after)).toEqual([expect.objectContaining({ state: "pending", context })]);
    // The run page names the commit, its branch and message, linked to the host.
    const page = await ui("GET", `/app/${org}/workspaces/${w.attributes.name}/runs/${run.id}`, { cookie: await signIn(ADMIN) });
    const commit = /<dd id="run-commit">([\s\S]*?)<\/dd>/.exec(page.text)?.[1] ?? "";
    expect(commit).toContain(p.after.slice(0, 8));
    expect(commit).toContain("on main");
    expect(commit).toContain("Change the data");
    expect(commit).toContain(`href="https://${HOST}/`);

    // A redelivery of the same delivery, and another delivery of the same commit, run nothing more.
    const [again] = await push(gh, p, "delivery-1");
    expect(again!.status).toBe(200);
    await push(gh, p, "delivery-2");
    await settle(w.id);
    expect(await runsOf(w.id)).toHaveLength(2);

    // The plan ends: the status says what it found, and links the run's page.
    const firstRun = runs[1]!;
    expect((await api("POST", `/runs/${firstRun.id}/actions/cancel`, { body: {} })).status).toBe(202);
    const job = await claim(stub, run.id, "plan");
    await finish(stub, job, "finished", { hasChanges: true, resourceAdditions: 1 });
    await settle(w.id);
    const last = gh.statuses(p.after).at(-1)!;
    expect(last).toMatchObject({ state: "success", context, description: "Terraform plan: +1 ~0 -0" });
    expect(last.targetUrl).toContain(`/workspaces/${w.attributes.name}/runs/${run.id}`);
  });

  it("a push whose files the workspace does not watch runs nothing; another branch runs nothing", async () => {
    const { gh, w } = await ready({ "trigger-patterns": ["/*.tf"] });
    await push(gh, gh.commit(REPO, "main", { "docs/README.md": "more docs" }));
    await settle(w.id);
    expect(await runsOf(w.id)).toHaveLength(1);
    await push(gh, gh.commit(REPO, "main", { "main.tf": `${MAIN_TF}# v3\n` }));
    await settle(w.id);
    expect(await runsOf(w.id)).toHaveLength(2);
  });

  it("a pull request into the branch gets a speculative plan; one from a fork does not", async () => {
    const { gh, w } = await ready();
    const c = gh.commit(REPO, "feature", { "main.tf": `${MAIN_TF}# pr\n` }, { from: "main", message: "Try it" });
    const pr = gh.openPullRequest(REPO, { head: "feature", title: "Try it" });
    const info = { number: pr.number, headRef: "feature", headSha: c.after, baseRef: "main", baseSha: tip(gh, "main"), title: "Try it" };
    await gh.sendEvent(REPO, "pull_request", githubPullRequestPayload("opened", repoInfo(), info), deliver);
    await settle(w.id);
    expect(await runsOf(w.id)).toHaveLength(1);
    const runs = await runsOf(w.id, true);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.attributes).toMatchObject({ source: "tfe-configuration-version", "plan-only": true });
    const cv = await api("GET", `/runs/${runs[0]!.id}/configuration-version?include=ingress_attributes`);
    expect(cv.body.data.attributes.speculative).toBe(true);
    const ia = await api("GET", `/configuration-versions/${cv.body.data.id}/ingress-attributes`);
    expect(ia.body.data.attributes).toMatchObject({ "is-pull-request": true, "pull-request-number": pr.number, "commit-sha": c.after });
    // The workspace's current configuration stays the branch's.
    const ws = await api("GET", `/workspaces/${w.id}`);
    expect(ws.body.data.relationships["current-configuration-version"].data.id).not.toBe(cv.body.data.id);
    expect(gh.statuses(c.after)[0]).toMatchObject({ state: "pending" });

    await gh.sendEvent(
      REPO,
      "pull_request",
      githubPullRequestPayload("opened", repoInfo(), { ...info, number: pr.number + 100, headRepo: "someone/infra" }),
      deliver,
    );
    await settle(w.id);
    expect(await runsOf(w.id, true)).toHaveLength(1);
  });

  it("refuses deliveries that are not signed with the hook's secret, and hooks it does not know", async () => {
    const { gh, w } = await ready();
    const hook = gh.hooks(REPO)[0]!;
    const p = gh.commit(REPO, "main", { "main.tf": `${MAIN_TF}# x\n` });
    const payload = githubPushPayload(repoInfo(), p);
    const unsigned = await deliver(await githubDelivery(hook.url, { event: "push", payload, secret: "wrong-secret" }));
    expect(unsigned.status).toBe(401);
    const body = (await unsigned.json()) as { errors: Array<{ status: string; title: string }> };
    expect(body.errors[0]).toMatchObject({ status: "401", title: "unauthorized" });
    const noSignature = await deliver(
      await githubDelivery(hook.url, { event: "push", payload, secret: "x", headers: { "x-hub-signature-256": null, "x-hub-signature": null } }),
    );
    expect(noSignature.status).toBe(401);
    const unknown = await deliver(
      await githubDelivery(hook.url.replace(/hook-[A-Za-z0-9]+$/, "hook-Unknown0000000001"), { event: "push", payload, secret: "x" }),
    );
    expect(unknown.status).toBe(404);
    await settle(w.id);
    expect(await runsOf(w.id)).toHaveLength(1);
  });
});
