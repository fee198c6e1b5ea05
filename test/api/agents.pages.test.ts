// Every pool's agents are visible: the site admin lists them all (`GET /admin/agents`, the default pool's included,
// with their pool), and each pool has a page with its agents' status, last ping and the jobs they run now.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Job as AgentJob } from "../../agent/protocol";
import { createOrg, createWorkspace, makeAgentPool, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { createRun, seedCv } from "../do/runs.helpers";
import { signIn, ui } from "../ui-client";

async function agentCall(method: string, path: string, token: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await exports.default.fetch(
    new Request(`http://localhost/api/agent${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    }),
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const register = async (token: string, name: string) => (await agentCall("POST", "/register", token, { name, version: "0.2.0" })).body.id as string;

describe("the agents of every pool", () => {
  it("the site admin lists them all, the default pool's with no pool; others are refused", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = (
      await api("POST", `/agent-pools/${pool}/authentication-tokens`, {
        body: { data: { type: "authentication-tokens", attributes: { description: "agent" } } },
      })
    ).body.data.attributes.token as string;
    const defaultName = uniqueName("default-agent");
    const poolName = uniqueName("pool-agent");
    const defaultAgent = await register("test-agent-token", defaultName);
    const poolAgent = await register(token, poolName);
    const all = await api("GET", "/admin/agents?page%5Bsize%5D=100");
    expect(all.status).toBe(200);
    const byId = new Map((all.body.data as any[]).map((a) => [a.id, a]));
    expect(byId.get(defaultAgent)).toMatchObject({ attributes: { name: defaultName, status: "idle" }, relationships: { "agent-pool": { data: null } } });
    expect(byId.get(poolAgent)).toMatchObject({ attributes: { name: poolName }, relationships: { "agent-pool": { data: { id: pool, type: "agent-pools" } } } });
    const owner = await makeUser({ ownerOf: org });
    expect((await api("GET", "/admin/agents", { token: owner.token })).status).toBe(404);
  });

  it("each pool's page shows its agents and the job each runs now; the default pool's is the site admin's", async () => {
    const name = uniqueName("busy-agent");
    const agent = await register("test-agent-token", name);
    // Other files' queued jobs are not in this file's store; claim this test's run.
    const org = await createOrg();
    const ws = await createWorkspace(org, { "execution-mode": "remote" });
    const stub = env.WORKSPACES.getByName(ws.id);
    const run = await createRun(stub, await seedCv(stub));
    let job: AgentJob | null = null;
    for (;;) {
      const next = await agentCall("POST", `/agents/${agent}/jobs/next?wait=0`, "test-agent-token", {});
      if (next.status !== 200) break;
      if ((next.body as AgentJob).run === run.id) job = next.body;
    }
    expect(job?.run).toBe(run.id);
    const admin = await signIn("test-admin-token");
    const page = await ui("GET", "/app/admin/agents", { cookie: admin });
    expect(page.status).toBe(200);
    const row = page.text.slice(page.text.indexOf(`id="${agent}"`));
    expect(row).toContain(name);
    expect(row).toContain("busy");
    expect(row).toContain(`/app/${org}/workspaces/${ws.attributes.name}/runs/${run.id}`);
    // The finish releases the job; an idle report clears whatever the agent held.
    await agentCall("POST", `/jobs/${run.id}/plan/finish`, (job as AgentJob).token, { status: "errored", error: "x" });
    await agentCall("POST", `/agents/${agent}/status`, "test-agent-token", { status: "idle" });
    const after = await ui("GET", "/app/admin/agents", { cookie: admin });
    expect(after.text.slice(after.text.indexOf(`id="${agent}"`)).split("</tr>")[0]).not.toContain(run.id);

    const member = await makeUser({ ownerOf: org });
    const cookie = await signIn(member.token);
    expect((await ui("GET", "/app/admin/agents", { cookie })).status).toBe(404);
    const pool = await makeAgentPool(org);
    const own = await ui("GET", `/app/${org}/agent-pools/${pool}`, { cookie });
    expect(own.status).toBe(200);
    expect(own.text).toContain("No agent is connected");
    const stranger = await signIn((await makeUser({ ownerOf: await createOrg() })).token);
    expect((await ui("GET", `/app/${org}/agent-pools/${pool}`, { cookie: stranger })).status).toBe(404);
  });
});
