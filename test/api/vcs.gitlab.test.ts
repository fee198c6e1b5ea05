// Runs from a GitLab project (a subgroup's), against the GitLab fake: the hook with its secret token, a push's run and
// its pipeline status, a merge request's speculative plan, a wrong token refused, a redelivery ignored.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, postOAuthClient } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { gitlabDelivery } from "../vcs/deliveries";
import { createFakeGitLab, type FakeGitLab } from "../vcs/fake-vcs";
import { fakeFetchPerTest } from "../vcs/outbound";
import { gitlabMergeRequestPayload, gitlabPushPayload } from "../vcs/payloads";

const HOST = "gitlab.example.com";
const TOKEN = "glpat-vcs-test";
const installFake = fakeFetchPerTest();
const deliver = (req: Request) => exports.default.fetch(req);

async function settle(workspaceId: string): Promise<void> {
  const stub = env.WORKSPACES.getByName(workspaceId);
  for (let i = 0; i < 8; i++) {
    await runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup() {
  // Short: the fake writes plain ustar, and GitLab names the archive's directory <project>-<sha>-<sha>.
  const project = `acme/platform/i${Math.random().toString(36).slice(2, 8)}`;
  const gl: FakeGitLab = createFakeGitLab({ token: TOKEN });
  gl.createRepo(project, { files: { "main.tf": 'resource "terraform_data" "x" {}\n' } });
  installFake({ [HOST]: gl });
  const org = await createOrg();
  const oc = await postOAuthClient(org, {
    "service-provider": "gitlab_enterprise_edition",
    "http-url": `https://${HOST}`,
    "api-url": `https://${HOST}/api/v4`,
    "oauth-token-string": TOKEN,
  });
  expect(oc.status).toBe(201);
  const tokenId = oc.body.data.relationships["oauth-tokens"].data[0].id;
  const ws = await api("POST", `/organizations/${org}/workspaces`, {
    body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), "vcs-repo": { identifier: project, "oauth-token-id": tokenId } } } },
  });
  expect(ws.status, ws.text).toBe(201);
  const w = ws.body.data;
  expect(w.attributes["vcs-repo"]).toMatchObject({ "service-provider": "gitlab_enterprise_edition", "repository-http-url": `https://${HOST}/${project}` });
  await settle(w.id);
  const first = await api("POST", "/runs", {
    body: { data: { type: "runs", attributes: {}, relationships: { workspace: { data: { type: "workspaces", id: w.id } } } } },
  });
  expect(first.status, first.text).toBe(201);
  return { gl, org, w, project };
}

const runs = async (id: string, plans = false) =>
  (await api("GET", `/workspaces/${id}/runs${plans ? "?filter%5Boperation%5D=plan_only" : ""}`)).body.data as Array<{
    id: string;
    attributes: Record<string, unknown>;
  }>;

describe("VCS: GitLab", () => {
  it("registers a hook with a secret token; a push runs and posts its pipeline status; a redelivery and a wrong token do nothing", async () => {
    const { gl, org, w, project } = await setup();
    const hooks = gl.hooks(project);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.events).toEqual(expect.arrayContaining(["push", "tag_push", "merge_requests"]));
    const push = gl.commit(project, "main", { "main.tf": 'resource "terraform_data" "y" {}\n' }, { message: "Second" });
    const { event, payload } = gitlabPushPayload({ fullName: project, webUrl: `https://${HOST}` }, push);
    const [sent] = await gl.sendEvent(project, event, payload, deliver, { eventId: "gl-1" });
    expect(sent!.status).toBe(202);
    await settle(w.id);
    const list = await runs(w.id);
    expect(list).toHaveLength(2);
    expect(list[0]!.attributes).toMatchObject({ source: "tfe-configuration-version", message: "Second" });
    expect(gl.statuses(push.after)).toEqual([expect.objectContaining({ state: "pending", context: `Terraform Cloud/${org}/${w.attributes.name}` })]);

    const [again] = await gl.sendEvent(project, event, payload, deliver, { eventId: "gl-1" });
    expect(again!.status).toBe(200);
    const forged = await deliver(await gitlabDelivery(hooks[0]!.url, { event, payload, token: "not-the-secret" }));
    expect(forged.status).toBe(401);
    await settle(w.id);
    expect(await runs(w.id)).toHaveLength(2);
  });

  it("a merge request into the branch gets a speculative plan; one from a fork does not", async () => {
    const { gl, w, project } = await setup();
    const c = gl.commit(project, "feature", { "net.tf": 'resource "terraform_data" "net" {}\n' }, { from: "main", message: "Add the network" });
    const mr = gl.openPullRequest(project, { head: "feature", title: "Network" });
    const info = { iid: mr.number, sourceBranch: "feature", targetBranch: "main", lastCommit: c.commits.at(-1)!, title: "Network" };
    await gl.sendEvent(project, "Merge Request Hook", gitlabMergeRequestPayload("open", { fullName: project }, info), deliver);
    await settle(w.id);
    const plans = await runs(w.id, true);
    expect(plans).toHaveLength(1);
    expect(plans[0]!.attributes["plan-only"]).toBe(true);
    await gl.sendEvent(
      project,
      "Merge Request Hook",
      gitlabMergeRequestPayload("open", { fullName: project }, { ...info, iid: mr.number + 50, sourceProjectId: 999 }),
      deliver,
    );
    await settle(w.id);
    expect(await runs(w.id, true)).toHaveLength(1);
  });
});
