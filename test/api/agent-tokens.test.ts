// Agent tokens (the agent tokens API reference; go-tfe's agent_token_integration_test.go): list, create, show and
// delete; who may manage them (the pool's manage-agent-pools); they never authenticate an API request; a deleted pool
// or organisation takes its tokens.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api, sha256, uniqueName } from "../helpers";

const SECRET = /^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/;
const body = (description: unknown, type = "authentication-tokens") => ({ data: { type, attributes: { description } } });

async function pool(org: string): Promise<string> {
  const res = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
const createToken = (poolId: string, description: unknown = "agent", token?: string, type?: string) =>
  api("POST", `/agent-pools/${poolId}/authentication-tokens`, { token, body: body(description, type) });
const tokenCount = async (poolId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM agent_tokens WHERE agent_pool_id = ?").bind(poolId).first<{ n: number }>())!.n;

describe("agent tokens", () => {
  it("creates a token (201): the secret only in the create response, created-by the caller; show equals create without it", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const p = await pool(org);
    const res = await createToken(p, "build agents", owner.token);
    expect(res.status).toBe(201);
    const t = res.body.data;
    expect(t.id).toMatch(/^at-[A-Za-z0-9]{16}$/);
    expect(t.type).toBe("authentication-tokens");
    expect(t.attributes).toEqual({
      "created-at": expect.stringMatching(/Z$/),
      "last-used-at": null,
      description: "build agents",
      token: expect.stringMatching(SECRET),
    });
    expect(t.relationships["created-by"].data).toEqual({ id: owner.id, type: "users" });
    const shown = await api("GET", `/authentication-tokens/${t.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data).toEqual({ ...t, attributes: { ...t.attributes, token: null } });
    expect(shown.text).not.toContain(t.attributes.token);
    // go-tfe sends `agent-tokens` as the type.
    expect((await createToken(p, "from go-tfe", undefined, "agent-tokens")).status).toBe(201);
  });

  it("keeps only the secret's SHA-256", async () => {
    const org = await createOrg();
    const created = await createToken(await pool(org), "hashed");
    const secret: string = created.body.data.attributes.token;
    const row = await env.DB.prepare("SELECT * FROM agent_tokens WHERE id = ?").bind(created.body.data.id).first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain(secret.split(".")[2]);
    expect(row!.token_hash).toBe(await sha256(secret));
  });

  it("lists a pool's tokens with pagination and sort, never with a secret", async () => {
    const org = await createOrg();
    const p = await pool(org);
    const ids: string[] = [];
    for (const d of ["a", "b", "c"]) ids.push((await createToken(p, d)).body.data.id);
    await createToken(await pool(org), "another pool's");
    const first = await api("GET", `/agent-pools/${p}/authentication-tokens?page%5Bsize%5D=2`);
    expect(first.status).toBe(200);
    expect(first.body.meta.pagination).toMatchObject({ "current-page": 1, "page-size": 2, "next-page": 2, "total-pages": 2, "total-count": 3 });
    expect(first.body.data.map((t: any) => t.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data.every((t: any) => t.attributes.token === null && t.type === "authentication-tokens")).toBe(true);
    expect(first.body.links.next).toContain("page%5Bnumber%5D=2");
    const second = await api("GET", `/agent-pools/${p}/authentication-tokens?page%5Bnumber%5D=2&page%5Bsize%5D=2`);
    expect(second.body.data.map((t: any) => t.id)).toEqual(ids.slice(2));
    const newest = await api("GET", `/agent-pools/${p}/authentication-tokens?sort=-created-at`);
    expect(newest.body.data.map((t: any) => t.id)).toEqual([...ids].reverse());
    const bad = await api("GET", `/agent-pools/${p}/authentication-tokens?sort=description`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ status: "400", source: { parameter: "sort" } });
  });

  it("refuses a bad body (422 with its pointer) or an unknown pool (404), creating nothing", async () => {
    const org = await createOrg();
    const p = await pool(org);
    for (const [sent, pointer] of [
      [{ data: { type: "authentication-tokens", attributes: {} } }, "/data/attributes/description"],
      [body("   "), "/data/attributes/description"],
      [body(42), "/data/attributes/description"],
      [body("x", "teams"), "/data/type"],
    ] as const) {
      const res = await api("POST", `/agent-pools/${p}/authentication-tokens`, { body: sent });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
      expect(typeof res.body.errors[0].detail).toBe("string");
    }
    expect(await tokenCount(p)).toBe(0);
    expect((await createToken("apool-doesnotexist0000")).status).toBe(404);
    expect((await api("GET", "/agent-pools/apool-doesnotexist0000/authentication-tokens")).status).toBe(404);
    expect((await api("GET", "/authentication-tokens/at-doesnotexist000000")).status).toBe(404);
    expect((await api("DELETE", "/authentication-tokens/at-doesnotexist000000")).status).toBe(404);
  });

  it("an agent token never authenticates an API request (401), and its last use stays unset", async () => {
    const org = await createOrg();
    const p = await pool(org);
    const created = await createToken(p, "agent only");
    const secret: string = created.body.data.attributes.token;
    for (const path of ["/account/details", `/organizations/${org}`, `/agent-pools/${p}`, `/agent-pools/${p}/authentication-tokens`]) {
      const res = await api("GET", path, { token: secret });
      expect(res.status).toBe(401);
      expect(res.body.errors[0]).toMatchObject({ status: "401", title: "unauthorized" });
    }
    expect((await createToken(p, "minted by an agent token", secret)).status).toBe(401);
    expect((await api("GET", `/authentication-tokens/${created.body.data.id}`)).body.data.attributes["last-used-at"]).toBeNull();
  });

  it("deletes a token (204): it is gone from show and list; a second delete is 404", async () => {
    const org = await createOrg();
    const p = await pool(org);
    const keep = (await createToken(p, "keep")).body.data.id;
    const gone = (await createToken(p, "gone")).body.data.id;
    const res = await api("DELETE", `/authentication-tokens/${gone}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await api("GET", `/authentication-tokens/${gone}`)).status).toBe(404);
    expect((await api("GET", `/agent-pools/${p}/authentication-tokens`)).body.data.map((t: any) => t.id)).toEqual([keep]);
    expect((await api("DELETE", `/authentication-tokens/${gone}`)).status).toBe(404);
  });

  it("managing needs the pool's manage-agent-pools: owners, the organisation token, such teams; others get 404 and nothing changes", async () => {
    const org = await createOrg();
    const p = await pool(org);
    const existing = (await createToken(p, "existing")).body.data.id;
    const managers = [(await makeUser({ ownerOf: org })).token, (await makeOrgToken(org)).token, (await makeTeam(org, { "manage-agent-pools": true })).token];
    for (const token of managers) {
      const made = await createToken(p, "by a manager", token);
      expect(made.status).toBe(201);
      expect((await api("GET", `/agent-pools/${p}/authentication-tokens`, { token })).status).toBe(200);
      expect((await api("GET", `/authentication-tokens/${existing}`, { token })).status).toBe(200);
      expect((await api("DELETE", `/authentication-tokens/${made.body.data.id}`, { token })).status).toBe(204);
    }
    // A member who may read the pool (and other organisation permissions), and an owner of another organisation.
    const member = (await makeTeam(org, { "manage-vcs-settings": true, "manage-workspaces": true })).token;
    expect((await api("GET", `/agent-pools/${p}`, { token: member })).status).toBe(200);
    const outsider = (await makeUser({ ownerOf: await createOrg() })).token;
    for (const token of [member, outsider]) {
      expect((await createToken(p, "refused", token)).status).toBe(404);
      expect((await api("GET", `/agent-pools/${p}/authentication-tokens`, { token })).status).toBe(404);
      expect((await api("GET", `/authentication-tokens/${existing}`, { token })).status).toBe(404);
      expect((await api("DELETE", `/authentication-tokens/${existing}`, { token })).status).toBe(404);
    }
    expect((await api("GET", `/agent-pools/${p}/authentication-tokens`, { token: ADMIN })).body.data.map((t: any) => t.id)).toEqual([existing]);
  });

  it("deleting the pool deletes its tokens; deleting the organisation deletes the rest", async () => {
    const org = await createOrg();
    const p = await pool(org);
    const tokens = [(await createToken(p, "one")).body.data.id, (await createToken(p, "two")).body.data.id];
    const other = await pool(org);
    const survivor = (await createToken(other, "other pool")).body.data.id;
    expect((await api("DELETE", `/agent-pools/${p}`)).status).toBe(204);
    for (const id of tokens) expect((await api("GET", `/authentication-tokens/${id}`)).status).toBe(404);
    expect(await tokenCount(p)).toBe(0);
    expect((await api("GET", `/authentication-tokens/${survivor}`)).status).toBe(200);
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    expect(await tokenCount(other)).toBe(0);
  });
});
