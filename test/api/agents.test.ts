// Agents in the public API (the agents API reference; go-tfe's Agents.List and Read): a pool's agents with their
// status, address and last ping, filtered by last ping; members of the organisation read them; a silent agent shows
// unknown, then errored, and is gone after a day; a pool holds a bounded number of agents; a deleted pool takes its
// agents.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { touchAgent } from "../../src/agents/agents.d1";
import { LIMITS } from "../../src/limits";
import { createOrg, makeAgentPool, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";

async function poolToken(poolId: string): Promise<string> {
  const res = await api("POST", `/agent-pools/${poolId}/authentication-tokens`, {
    body: { data: { type: "authentication-tokens", attributes: { description: "agents" } } },
  });
  return res.body.data.attributes.token;
}

function registering(token: string, name: string, ip?: string): Promise<Response> {
  return exports.default.fetch(
    new Request("http://localhost/api/agent/register", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...(ip ? { "CF-Connecting-IP": ip } : {}) },
      body: JSON.stringify({ name }),
    }),
  );
}

async function register(token: string, name: string, ip?: string): Promise<string> {
  const res = await registering(token, name, ip);
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const rowCount = async (id: string) => env.DB.prepare("SELECT count(*) AS n FROM agents WHERE id = ?").bind(id).first("n");

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe("agents", () => {
  it("lists a pool's agents oldest first, paged, with what go-tfe decodes", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = await poolToken(pool);
    const ids = [await register(token, "a", "10.0.0.1"), await register(token, "b"), await register(token, "c")];
    await register(await poolToken(await makeAgentPool(org)), "another pool's");
    const first = await api("GET", `/agent-pools/${pool}/agents?page%5Bsize%5D=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(0, 2));
    expect(first.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 3, "total-pages": 2 });
    expect(first.body.data[0]).toEqual({
      id: ids[0],
      type: "agents",
      attributes: { name: "a", status: "idle", "ip-address": "10.0.0.1", "last-ping-at": expect.stringMatching(/Z$/) },
      links: { self: `/api/v2/agents/${ids[0]}` },
    });
    const second = await api("GET", `/agent-pools/${pool}/agents?page%5Bnumber%5D=2&page%5Bsize%5D=2`);
    expect(second.body.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(2));
    expect((await api("GET", `/agents/${ids[1]}`)).body.data.attributes).toMatchObject({ name: "b", "ip-address": null });
  });

  it("filters by last ping, and shows a silent agent as unknown, then errored", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = await poolToken(pool);
    const [fresh, quiet, gone] = [await register(token, "fresh"), await register(token, "quiet"), await register(token, "gone")];
    await touchAgent(env.DB, quiet, { ipAddress: null, at: ago(5 * 60 * 1000) });
    await touchAgent(env.DB, gone, { ipAddress: null, at: ago(3 * 60 * 60 * 1000) });
    const status = async (id: string) => (await api("GET", `/agents/${id}`)).body.data.attributes.status;
    expect([await status(fresh), await status(quiet), await status(gone)]).toEqual(["idle", "unknown", "errored"]);
    // Seconds without fractions, as go-tfe's iso8601 encoder sends them.
    const since = ago(60 * 60 * 1000).replace(/\.\d+Z$/, "Z");
    const recent = await api("GET", `/agent-pools/${pool}/agents?filter%5Blast-ping-since%5D=${encodeURIComponent(since)}`);
    expect(recent.status).toBe(200);
    expect(recent.body.data.map((a: { id: string }) => a.id)).toEqual([fresh, quiet]);
    expect(recent.body.meta.pagination["total-count"]).toBe(2);
    for (const bad of ["yesterday", "2020-13-45T00:00:00Z"]) {
      const res = await api("GET", `/agent-pools/${pool}/agents?filter%5Blast-ping-since%5D=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source).toEqual({ parameter: "filter[last-ping-since]" });
    }
    // An agent that said it exited stays exited, however long ago.
    await touchAgent(env.DB, gone, { status: "exited", ipAddress: null, at: ago(3 * 60 * 60 * 1000) });
    expect(await status(gone)).toBe("exited");
  });

  it("is gone after a day of silence: no longer shown, and removed when an agent registers", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = await poolToken(pool);
    const [stale, alive] = [await register(token, "stale"), await register(token, "alive")];
    await touchAgent(env.DB, stale, { ipAddress: null, at: ago(25 * 60 * 60 * 1000) });
    await touchAgent(env.DB, alive, { ipAddress: null, at: ago(23 * 60 * 60 * 1000) });
    expect((await api("GET", `/agents/${stale}`)).status).toBe(404);
    expect((await api("GET", `/agents/${alive}`)).body.data.attributes.status).toBe("errored");
    const listed = await api("GET", `/agent-pools/${pool}/agents`);
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([alive]);
    expect(listed.body.meta.pagination["total-count"]).toBe(1);
    // Whatever the filter asks for.
    const since = encodeURIComponent(ago(30 * 24 * 60 * 60 * 1000));
    expect((await api("GET", `/agent-pools/${pool}/agents?filter%5Blast-ping-since%5D=${since}`)).body.data.map((a: { id: string }) => a.id)).toEqual([alive]);
    // The next registration, of any pool, removes it.
    expect(await rowCount(stale)).toBe(1);
    await register(await poolToken(await makeAgentPool(await createOrg())), "elsewhere");
    expect(await rowCount(stale)).toBe(0);
    expect(await rowCount(alive)).toBe(1);
  });

  it("are bounded per pool: a registration beyond the bound is refused, until an agent exits or is gone", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = await poolToken(pool);
    const ids: string[] = [];
    for (let i = 0; i < LIMITS.agentsPerPool; i++) ids.push(await register(token, `agent-${i}`));
    const refused = await registering(token, "one too many");
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { errors: { status: string; title: string; detail: string }[] };
    expect(body.errors[0]).toMatchObject({ status: "409", title: "conflict", detail: expect.stringContaining(`already has ${LIMITS.agentsPerPool} agents`) });
    expect((await api("GET", `/agent-pools/${pool}/agents`)).body.meta.pagination["total-count"]).toBe(LIMITS.agentsPerPool);
    // Another pool is not affected.
    await register(await poolToken(await makeAgentPool(org)), "another pool's");

    // An agent that exited makes room: the longest-exited one leaves for the newcomer.
    await touchAgent(env.DB, ids[3], { status: "exited", ipAddress: null, at: ago(60_000) });
    await touchAgent(env.DB, ids[7], { status: "exited", ipAddress: null, at: ago(120_000) });
    const newcomer = await register(token, "newcomer");
    expect((await api("GET", `/agents/${ids[7]}`)).status).toBe(404);
    expect((await api("GET", `/agents/${ids[3]}`)).body.data.attributes.status).toBe("exited");
    expect((await api("GET", `/agents/${newcomer}`)).status).toBe(200);
    await register(token, "second newcomer");
    expect((await api("GET", `/agents/${ids[3]}`)).status).toBe(404);
    expect((await registering(token, "still full")).status).toBe(409);

    // So does one gone for a day.
    await touchAgent(env.DB, ids[0], { ipAddress: null, at: ago(25 * 60 * 60 * 1000) });
    await register(token, "after the silent one");
    expect(await rowCount(ids[0])).toBe(0);
    expect((await api("GET", `/agent-pools/${pool}/agents`)).body.meta.pagination["total-count"]).toBe(LIMITS.agentsPerPool);
  });

  it("is read by the organisation's members; others and unknown ids get 404", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const agent = await register(await poolToken(pool), "a");
    const member = await makeTeam(org);
    expect((await api("GET", `/agents/${agent}`, { token: member.token })).status).toBe(200);
    expect((await api("GET", `/agent-pools/${pool}/agents`, { token: member.token })).status).toBe(200);
    const stranger = await makeUser({ ownerOf: await createOrg() });
    expect((await api("GET", `/agents/${agent}`, { token: stranger.token })).status).toBe(404);
    expect((await api("GET", `/agent-pools/${pool}/agents`, { token: stranger.token })).status).toBe(404);
    expect((await api("GET", "/agents/agent-NoSuchAgent0000000")).status).toBe(404);
    expect((await api("GET", "/agent-pools/apool-NoSuchPool00000000/agents")).status).toBe(404);
  });

  it("leaves with its pool", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const agent = await register(await poolToken(pool), "a");
    expect((await api("DELETE", `/agent-pools/${pool}`)).status).toBe(204);
    expect((await api("GET", `/agents/${agent}`)).status).toBe(404);
    expect(await rowCount(agent)).toBe(0);
  });
});
