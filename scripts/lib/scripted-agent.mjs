// A pool's agent played by a harness (the browser suite's run steps, bench/ui-plan.mjs): it registers with a pool's
// token and plans the runs it claims with a JSON plan it is handed, through the agent protocol an agent process uses
// (docs/runs.md, "Agent protocol"; agent/client.ts), so a run page shows a plan of any shape without Terraform. The
// redacted plan is made by the agent's own redactor (agent/redact.ts), as a real job's is. Needs Node 24 (npm's
// `node`, which `npm run` puts first on PATH) to import the agent's TypeScript.
import { jobPatterns, redactedPlan } from "../../agent/redact.ts";
import { readJson } from "./harness.mjs";

/**
 * `base`: the service's origin; `api(method, path, body)`: a site-admin API call answering its JSON; `organization`;
 * `name`: the pool's and the agent's name. Answers { pool, agent, workspace(name, attributes?), plan(runId, full, log?) }.
 */
export async function scriptedAgent({ base, api, organization, name }) {
  const pool = (await api("POST", `/organizations/${organization}/agent-pools`, { data: { type: "agent-pools", attributes: { name } } })).data;
  const token = (
    await api("POST", `/agent-pools/${pool.id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: name } } })
  ).data.attributes.token;
  /**
   * An agent protocol call with `bearer`: its answer's JSON, or null when it has none.
   * @param {string} method @param {string} path @param {string} bearer @param {unknown} [body] @param {string} [type]
   * @returns {Promise<import("./harness.mjs").JsonDoc | null>}
   */
  const call = async (method, path, bearer, body, type = "application/json") => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "Content-Type": type }) },
      body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : /** @type {RequestInit["body"]} */ (body),
      signal: AbortSignal.timeout(30_000),
    });
    if (res.status >= 300) throw new Error(`scripted agent: ${method} ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return res.status !== 204 && res.headers.get("content-type")?.includes("json") ? readJson(res) : null;
  };
  const agent = await call("POST", "/api/agent/register", token, { name, version: "0.2.0" });

  /** A workspace of `organization` whose runs this agent claims. */
  const workspace = async (wsName, attributes = {}) =>
    (
      await api("POST", `/organizations/${organization}/workspaces`, {
        data: { type: "workspaces", attributes: { name: wsName, "execution-mode": "agent", "agent-pool-id": pool.id, ...attributes } },
      })
    ).data;

  /**
   * Claims the plan of `runId` and finishes it with `full` (a `terraform show -json` plan): the redacted plan from
   * the agent's redactor beside it, a log, and the counts Terraform's summary would give. Any other job claimed
   * first is an error: the caller keeps the pool's queue to the run it means.
   */
  const plan = async (runId, full, log = "Terraform planned the changes.\n") => {
    /** @type {import("../../agent/protocol.ts").Job | null} */
    let job = null;
    for (let i = 0; i < 20 && !job; i++) {
      job = /** @type {import("../../agent/protocol.ts").Job | null} */ (
        await call("POST", `/api/agent/agents/${encodeURIComponent(agent.id)}/jobs/next?wait=2`, token, {})
      );
      if (job && (job.run !== runId || job.phase !== "plan")) throw new Error(`scripted agent: claimed ${job.run} ${job.phase}, not the plan of ${runId}`);
    }
    if (!job) throw new Error(`scripted agent: the plan of ${runId} was never handed out`);
    const path = `/api/agent/jobs/${encodeURIComponent(job.run)}/plan`;
    const redacted = redactedPlan(full, { format_version: "1.0", provider_schemas: {} }, { secrets: jobPatterns(job) });
    await call("PUT", `${path}/artifacts/plan-json`, job.token, JSON.stringify(full), "application/octet-stream");
    await call("PUT", `${path}/artifacts/plan-json-redacted`, job.token, JSON.stringify(redacted), "application/octet-stream");
    await call("POST", `${path}/logs?offset=0`, job.token, new TextEncoder().encode(log), "application/octet-stream");
    const count = (acts) => (full.resource_changes ?? []).filter((r) => acts.includes(r.change.actions.join(","))).length;
    const additions = count(["create", "delete,create", "create,delete"]);
    const destructions = count(["delete", "delete,create", "create,delete"]);
    const changes = count(["update"]);
    await call("POST", `${path}/finish`, job.token, {
      status: "finished",
      hasChanges: additions + destructions + changes > 0,
      resourceAdditions: additions,
      resourceChanges: changes,
      resourceDestructions: destructions,
      resourceImports: 0,
    });
  };
  return { pool, agent, workspace, plan };
}
