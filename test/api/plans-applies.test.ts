// Plans and applies through the API: their documents, the signed log URL, the JSON plan (204 until stored, then a
// redirect to a short-lived signed URL) and the redacted plan. Agents are played through the object's job methods.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { claim, finish, setup, type Stub } from "../do/runs.helpers";

async function newRun(workspaceId: string): Promise<string> {
  const res = await api("POST", "/runs", {
    body: { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: workspaceId } } } } },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

const PLAN_JSON = JSON.stringify({ format_version: "1.2", terraform_version: "1.11.4", planned_values: {} });

/** The plan phase with its JSON plans stored, ending with changes. */
async function planWithArtifacts(stub: Stub, runId: string, redacted = true) {
  const job = await claim(stub, runId, "plan");
  const bytes = (s: string) => new TextEncoder().encode(s);
  expect((await stub.putArtifact({ runId, claimId: job.claimId, kind: "plan-json", bytes: bytes(PLAN_JSON) })).ok).toBe(true);
  if (redacted)
    expect((await stub.putArtifact({ runId, claimId: job.claimId, kind: "plan-json-redacted", bytes: bytes('{"plan_format_version":"1.2"}') })).ok).toBe(true);
  return finish(stub, job, "finished", { hasChanges: true, resourceAdditions: 1 });
}

describe("plans and applies", () => {
  it("shows a plan and an apply by id and through the run, with an absolute signed log URL", async () => {
    const { id } = await setup();
    const runId = await newRun(id);
    const suffix = runId.slice(4);
    const plan = await api("GET", `/plans/plan-${suffix}`);
    expect(plan.status).toBe(200);
    expect(plan.body.data).toMatchObject({ id: `plan-${suffix}`, type: "plans" });
    expect(plan.body.data.attributes).toMatchObject({
      status: "queued",
      "has-changes": false,
      "resource-additions": 0,
      "execution-details": { mode: "remote" },
    });
    const url = new URL(plan.body.data.attributes["log-read-url"]);
    expect(url.origin).toBe("http://localhost");
    expect(url.pathname).toMatch(new RegExp(`^/_logs/${id}/${runId}/plan/\\d+\\.[0-9a-f]{64}$`));
    expect((await api("GET", `/runs/${runId}/plan`)).body.data).toEqual(plan.body.data);

    const apply = await api("GET", `/applies/apply-${suffix}`);
    expect(apply.status).toBe(200);
    expect(apply.body.data.attributes.status).toBe("pending");
    expect(apply.body.data.attributes["log-read-url"]).toMatch(/^http:\/\/localhost\/_logs\/.+\/apply\//);
    expect((await api("GET", `/runs/${runId}/apply`)).body.data).toEqual(apply.body.data);

    expect((await api("GET", `/plans/plan-doesnotexist0000`)).status).toBe(404);
    // An id whose run exists but names no phase of it.
    expect((await api("GET", `/applies/apply-${suffix}x`)).status).toBe(404);
  });

  it("shows the plan's outcome and the agent that ran it once it finished", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    await planWithArtifacts(stub, runId);
    const plan = (await api("GET", `/runs/${runId}/plan`)).body.data.attributes;
    expect(plan).toMatchObject({ status: "finished", "has-changes": true, "resource-additions": 1, "resource-changes": 0 });
    expect(plan["status-timestamps"]["finished-at"]).toMatch(/Z$/);
    expect(plan["execution-details"]).toMatchObject({ mode: "remote", "agent-name": "test-agent" });
  });

  it("answers the JSON plan with 204 until the plan finished, then redirects to a signed URL serving it", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    const suffix = runId.slice(4);
    expect((await api("GET", `/plans/plan-${suffix}/json-output`)).status).toBe(204);
    expect((await api("GET", `/plans/plan-${suffix}/json-output-redacted`)).status).toBe(204);
    await planWithArtifacts(stub, runId);

    for (const path of [`/plans/plan-${suffix}/json-output`, `/runs/${runId}/plan/json-output`]) {
      const res = await exports.default.fetch(
        new Request(`http://localhost/api/v2${path}`, { headers: { Authorization: "Bearer test-admin-token" }, redirect: "manual" }),
      );
      expect(res.status).toBe(307);
      const location = res.headers.get("Location")!;
      expect(location).toMatch(new RegExp(`^http://localhost/_artifacts/${id}/${runId}/plan-json/\\d+\\.[0-9a-f]{64}$`));
      // No token needed: the URL is signed.
      const got = await exports.default.fetch(new Request(location));
      expect(got.status).toBe(200);
      expect(await got.json()).toMatchObject({ terraform_version: "1.11.4", planned_values: {} });
      // A tampered signature is refused.
      const tampered = await exports.default.fetch(new Request(location.replace(/.$/, (ch) => (ch === "0" ? "1" : "0"))));
      expect(tampered.status).toBe(403);
    }
    // Terraform follows the redirect of the redacted plan (structured run output).
    const redacted = await api("GET", `/plans/plan-${suffix}/json-output-redacted`);
    expect(redacted.status).toBe(200);
    expect(redacted.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(JSON.parse(redacted.text)).toEqual({ plan_format_version: "1.2" });
  });

  it("has no errored state for an apply", async () => {
    const { id } = await setup();
    const runId = await newRun(id);
    const res = await api("GET", `/applies/apply-${runId.slice(4)}/errored-state`);
    expect(res.status).toBe(404);
    expect(res.body.errors[0].status).toBe("404");
  });
});
