// Revocation takes effect on the very next request, even right after the same token succeeded (issue 16: no
// principal outlives a revocation in an isolate's memory). The direct D1 writes stand for another isolate, or
// another instance, revoking: nothing in this isolate hears of them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createOrg } from "./helpers";
import { makeTeam, makeUser } from "./principals";

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
});
