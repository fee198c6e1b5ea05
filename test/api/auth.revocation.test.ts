// Revocation takes effect on the very next request, even right after the same token succeeded and its principal
// sits in the isolate's cache (the cached principal is rechecked inside the request's first round trip).
// The direct D1 writes stand for another isolate, or another instance, revoking: nothing in this isolate hears of them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

describe("revocation at once", () => {
  it("a team token revoked through the API gets 401 on the next request", async () => {
    const org = await createOrg();
    const team = await api("POST", `/organizations/${org}/teams`, {
      body: { data: { type: "teams", attributes: { name: `t${crypto.randomUUID().slice(0, 8)}` } } },
    });
    const token = (await api("POST", `/teams/${team.body.data.id}/authentication-token`)).body.data.attributes.token;
    for (let i = 0; i < 3; i++) expect((await api("GET", "/account/details", { token })).status).toBe(200);
    expect((await api("DELETE", `/teams/${team.body.data.id}/authentication-tokens`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token })).status).toBe(401);
  });

  it("a token deleted from D1 elsewhere gets 401 on the next request", async () => {
    const user = await makeUser();
    expect((await api("GET", "/account/details", { token: user.token })).status).toBe(200);
    await env.DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(user.id).run();
    expect((await api("GET", "/account/details", { token: user.token })).status).toBe(401);
  });

  it("a token that expires between two requests gets 401 on the second", async () => {
    const user = await makeUser();
    expect((await api("GET", "/account/details", { token: user.token })).status).toBe(200);
    await env.DB.prepare("UPDATE tokens SET expired_at = ? WHERE user_id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), user.id)
      .run();
    expect((await api("GET", "/account/details", { token: user.token })).status).toBe(401);
  });

  it("a deleted team's token and a demoted site admin lose their standing on the next request", async () => {
    const org = await createOrg();
    const team = await makeTeam(org, { "read-workspaces": true });
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: team.token })).status).toBe(200);
    await env.DB.prepare("DELETE FROM teams WHERE id = ?").bind(team.id).run();
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: team.token })).status).toBe(401);

    const admin = await makeUser();
    await env.DB.prepare("UPDATE users SET is_site_admin = 1 WHERE id = ?").bind(admin.id).run();
    expect((await api("GET", "/admin/consistency", { token: admin.token })).status).toBe(200);
    await env.DB.prepare("UPDATE users SET is_site_admin = 0 WHERE id = ?").bind(admin.id).run();
    expect((await api("GET", "/admin/consistency", { token: admin.token })).status).toBe(404);
  });

  // Each case revokes a token whose principal the isolate has cached (two reads before), so the 401 can only come
  // from the recheck (the first 401 evicts it: each case needs its own token).
  async function cachedThenRevoked(org: string, wsId: string): Promise<string> {
    const user = await makeUser({ ownerOf: org });
    expect((await api("GET", `/workspaces/${wsId}`, { token: user.token })).status).toBe(200);
    const warm = await api("GET", `/workspaces/${wsId}`, { token: user.token });
    expect(warm.status).toBe(200);
    // The recheck rides the access batch; the record comes from the object beside it.
    expect(warm.headers.get("X-Hops")).toBe("d1=1, do=1");
    await env.DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(user.id).run();
    return user.token;
  }

  it("a cached token revoked elsewhere changes nothing: no lock, no Durable Object call, no organisation", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { name: uniqueName("rev") });

    const lock = await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: await cachedThenRevoked(org, ws.id) });
    expect(lock.status).toBe(401);
    // The recheck rode in the access batch and failed there: the Durable Object was never called.
    expect(lock.headers.get("X-Hops")).toBe("d1=1, do=0");
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);

    // A request whose first round trip writes makes the check alone, before it.
    const name = uniqueName("revorg");
    const create = await api("POST", "/organizations", {
      token: await cachedThenRevoked(org, ws.id),
      body: { data: { type: "organizations", attributes: { name, email: "a@example.com" } } },
    });
    expect(create.status).toBe(401);
    expect((await api("GET", `/organizations/${name}`)).status).toBe(404);

    // A request that makes no round trip of its own is checked before it answers.
    const ping = await api("GET", "/ping", { token: await cachedThenRevoked(org, ws.id) });
    expect(ping.status).toBe(401);
    expect(ping.headers.get("X-Hops")).toBe("d1=1, do=0");
  });

  it("a cached token keeps working after its user is renamed, with one round trip per read", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: user.token })).status).toBe(200);
    const renamed = uniqueName("renamed");
    await env.DB.prepare("UPDATE users SET username = ? WHERE id = ?").bind(renamed, user.id).run();
    const list = await api("GET", `/organizations/${org}/workspaces`, { token: user.token });
    expect(list.status).toBe(200);
    expect(list.headers.get("X-Hops")).toBe("d1=1, do=0");
    expect((await api("GET", "/account/details", { token: user.token })).body.data.attributes.username).toBe(renamed);
  });
});
