// Registries workspaces refer to — agent pools, OAuth clients/tokens, SSH keys (HCP Terraform API docs for each).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeOrgToken, makeTeam, makeUser, makeTeams } from "../fixtures";
import { api, uniqueName, createdResource } from "../helpers";

type Rel = Record<string, unknown>;
const createPool = (org: string, attributes: Record<string, unknown>, relationships?: Rel, token?: string) =>
  api("POST", `/organizations/${org}/agent-pools`, { token, body: { data: { type: "agent-pools", attributes, ...(relationships ? { relationships } : {}) } } });
const patchPool = (id: string, attributes: Record<string, unknown>, relationships?: Rel, token?: string) =>
  api("PATCH", `/agent-pools/${id}`, { token, body: { data: { type: "agent-pools", attributes, ...(relationships ? { relationships } : {}) } } });
const ref = (type: string, ids: string[]) => ({ data: ids.map((id) => ({ type, id })) });
const GITHUB = {
  "service-provider": "github",
  "http-url": "https://github.com",
  "api-url": "https://api.github.com",
  "oauth-token-string": "ghp_registries_test",
};
const createClient = (org: string, attributes: Record<string, unknown>, token?: string) =>
  api("POST", `/organizations/${org}/oauth-clients`, { token, body: { data: { type: "oauth-clients", attributes } } });
const createKey = (org: string, attributes: Record<string, unknown>, token?: string) =>
  api("POST", `/organizations/${org}/ssh-keys`, { token, body: { data: { type: "ssh-keys", attributes } } });
const KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretmaterial\n-----END RSA PRIVATE KEY-----";

describe("agent pools", () => {
  it("creates a pool (201) with the real shape; show equals create", async () => {
    const org = await createOrg();
    const res = await createPool(org, { name: "pool-1" });
    const p = createdResource(res, "agent-pools", "apool");
    expect(p.attributes).toMatchObject({ name: "pool-1", "organization-scoped": true, "agent-count": 0 });
    expect(p.attributes["created-at"]).toMatch(/Z$/);
    expect(p.relationships).toMatchObject({
      agents: { links: { related: `/api/v2/agent-pools/${p.id}/agents` } },
      "authentication-tokens": { links: { related: `/api/v2/agent-pools/${p.id}/authentication-tokens` } },
      workspaces: { data: [] },
      "allowed-workspaces": { data: [] },
      "allowed-projects": { data: [] },
      "excluded-workspaces": { data: [] },
    });
    expect(p.links.self).toBe(`/api/v2/agent-pools/${p.id}`);
    expect((await api("GET", `/agent-pools/${p.id}`)).body.data).toEqual(p);
  });

  it("validates names (letters, numbers, - and _) and keeps them unique per organisation", async () => {
    const org = await createOrg();
    for (const bad of ["has space", "dot.name", "slash/x", ""]) {
      const r = await createPool(org, { name: bad });
      expect(r.status).toBe(422);
      expect(r.body.errors[0].source.pointer).toBe("/data/attributes/name");
    }
    expect((await createPool(org, { name: "Pool_A-1" })).status).toBe(201);
    const dup = await createPool(org, { name: "pool_a-1" });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatchObject({
      title: "invalid attribute",
      detail: "Name has already been taken",
      source: { pointer: "/data/attributes/name" },
    });
    expect((await createPool(await createOrg(), { name: "Pool_A-1" })).status).toBe(201);
    const other = (await createPool(org, { name: "other" })).body.data.id;
    expect((await patchPool(other, { name: "POOL_A-1" })).status).toBe(422);
    expect((await patchPool(other, { name: "bad name" })).status).toBe(422);
    expect((await api("GET", `/agent-pools/${other}`)).body.data.attributes.name).toBe("other");
  });

  it("stores organization-scoped and the allowed/excluded relationships; refuses ids of other organisations", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const prj = (await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: "Pooled" } } } })).body.data.id;
    const res = await createPool(
      org,
      { name: "scoped", "organization-scoped": false },
      {
        "allowed-workspaces": ref("workspaces", [ws.id]),
        "allowed-projects": ref("projects", [prj]),
        "excluded-workspaces": ref("workspaces", []),
      },
    );
    expect(res.status).toBe(201);
    expect(res.body.data.attributes["organization-scoped"]).toBe(false);
    expect(res.body.data.relationships["allowed-workspaces"].data).toEqual([{ id: ws.id, type: "workspaces" }]);
    expect(res.body.data.relationships["allowed-projects"].data).toEqual([{ id: prj, type: "projects" }]);
    const upd = await patchPool(
      res.body.data.id,
      { "organization-scoped": true },
      { "excluded-workspaces": ref("workspaces", [ws.id]), "allowed-workspaces": ref("workspaces", []) },
    );
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes["organization-scoped"]).toBe(true);
    expect(upd.body.data.relationships["excluded-workspaces"].data).toEqual([{ id: ws.id, type: "workspaces" }]);
    expect(upd.body.data.relationships["allowed-workspaces"].data).toEqual([]);
    expect(upd.body.data.relationships["allowed-projects"].data).toEqual([{ id: prj, type: "projects" }]);

    const foreignWs = await createWorkspace(await createOrg());
    const bad = await createPool(org, { name: "bad-refs" }, { "allowed-workspaces": ref("workspaces", [ws.id, foreignWs.id]) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/relationships/allowed-workspaces/data/1");
    expect((await patchPool(res.body.data.id, {}, { "allowed-projects": ref("projects", ["prj-nope000000000000"]) })).status).toBe(422);
  });

  it("lists with q and pagination", async () => {
    const org = await createOrg();
    for (const n of ["linux-a", "linux-b", "windows"]) await createPool(org, { name: n });
    const all = await api("GET", `/organizations/${org}/agent-pools`);
    expect(all.body.data.map((p: any) => p.attributes.name)).toEqual(["linux-a", "linux-b", "windows"]);
    expect((await api("GET", `/organizations/${org}/agent-pools?q=LINUX`)).body.data.map((p: any) => p.attributes.name)).toEqual(["linux-a", "linux-b"]);
    const page = await api("GET", `/organizations/${org}/agent-pools?page%5Bsize%5D=2&page%5Bnumber%5D=2`);
    expect(page.body.data.map((p: any) => p.attributes.name)).toEqual(["windows"]);
    expect(page.body.meta.pagination).toMatchObject({ "current-page": 2, "total-count": 3, "total-pages": 2 });
  });

  it("shows the workspaces using a pool and refuses to delete a pool in use", async () => {
    const org = await createOrg();
    const id = (await createPool(org, { name: "busy" })).body.data.id;
    const ws = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": id });
    expect((await api("GET", `/agent-pools/${id}`)).body.data.relationships.workspaces.data).toEqual([{ id: ws.id, type: "workspaces" }]);
    const refused = await api("DELETE", `/agent-pools/${id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toMatch(/in use/);
    await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "execution-mode": "remote" } } } });
    expect((await api("DELETE", `/agent-pools/${id}`)).status).toBe(204);
    expect((await api("GET", `/agent-pools/${id}`)).status).toBe(404);
  });

  it("refuses to delete the organisation's default pool or a project's default pool", async () => {
    const org = await createOrg();
    const orgPool = (await createPool(org, { name: "org-default" })).body.data.id;
    const setDefault = await api("PATCH", `/organizations/${org}`, {
      body: {
        data: {
          type: "organizations",
          attributes: { "default-execution-mode": "agent" },
          relationships: { "default-agent-pool": { data: { type: "agent-pools", id: orgPool } } },
        },
      },
    });
    expect(setDefault.status).toBe(200);
    expect((await api("DELETE", `/agent-pools/${orgPool}`)).status).toBe(422);
    const prjPool = (await createPool(org, { name: "prj-default" })).body.data.id;
    const prj = await api("POST", `/organizations/${org}/projects`, {
      body: { data: { type: "projects", attributes: { name: "Agents", "default-execution-mode": "agent", "default-agent-pool-id": prjPool } } },
    });
    expect(prj.status).toBe(201);
    expect((await api("DELETE", `/agent-pools/${prjPool}`)).status).toBe(422);
    expect((await api("GET", `/agent-pools/${prjPool}`)).status).toBe(200);
  });

  it("writes need owners, the org token or manage-agent-pools; any member reads; other organisations get 404", async () => {
    const org = await createOrg();
    const [plain, vcs, manager] = await makeTeams(org, {}, { "manage-vcs-settings": true }, { "manage-agent-pools": true });
    const orgToken = await makeOrgToken(org);
    for (const t of [plain, vcs]) expect((await createPool(org, { name: uniqueName("p") }, undefined, t.token)).status).toBe(404);
    expect((await createPool(org, { name: "by-manager" }, undefined, manager.token)).status).toBe(201);
    const id = (await createPool(org, { name: "by-org-token" }, undefined, orgToken.token)).body.data.id;
    expect((await api("GET", `/agent-pools/${id}`, { token: plain.token })).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/agent-pools`, { token: plain.token })).body.data).toHaveLength(2);
    expect((await patchPool(id, { name: "renamed" }, undefined, plain.token)).status).toBe(404);
    expect((await api("DELETE", `/agent-pools/${id}`, { token: plain.token })).status).toBe(404);
    expect((await patchPool(id, { name: "renamed" }, undefined, manager.token)).status).toBe(200);

    const outsider = await makeUser({ ownerOf: await createOrg() });
    expect((await api("GET", `/agent-pools/${id}`, { token: outsider.token })).status).toBe(404);
    expect((await patchPool(id, { name: "stolen" }, undefined, outsider.token)).status).toBe(404);
    expect((await api("DELETE", `/agent-pools/${id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/agent-pools`, { token: outsider.token })).status).toBe(404);
    expect((await createPool(org, { name: "intruder" }, undefined, outsider.token)).status).toBe(404);
    expect((await api("DELETE", `/agent-pools/${id}`, { token: manager.token })).status).toBe(204);
  });
});

describe("OAuth clients and tokens", () => {
  it("takes the organisation's agent pool as its relationship; another's or none is refused with go-tfe's text", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const pool = (await createPool(org, { name: "vcs-pool" })).body.data.id;
    const foreign = (await createPool(other, { name: "elsewhere" })).body.data.id;
    const withPool = (id: string) =>
      api("POST", `/organizations/${org}/oauth-clients`, {
        body: { data: { type: "oauth-clients", attributes: GITHUB, relationships: { "agent-pool": { data: { type: "agent-pools", id } } } } },
      });
    const ok = await withPool(pool);
    expect(ok.status).toBe(201);
    expect(ok.body.data.relationships["agent-pool"].data).toEqual({ id: pool, type: "agent-pools" });
    expect((await api("GET", `/oauth-clients/${ok.body.data.id}`)).body.data.relationships["agent-pool"].data).toEqual({ id: pool, type: "agent-pools" });
    for (const id of [foreign, "apool-doesnotexist00"]) {
      const refused = await withPool(id);
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({
        status: "422",
        detail: "the provided agent pool does not exist or you are not authorized to use it",
        source: { pointer: "/data/relationships/agent-pool/data/id" },
      });
    }
    const listed = await api("GET", `/organizations/${org}/oauth-clients`);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([ok.body.data.id]);
  });

  it("a Bitbucket Data Center client keeps its consumer key: an empty key is refused and changes nothing", async () => {
    const org = await createOrg();
    const bbdc = { "service-provider": "bitbucket_data_center", "http-url": "https://bbdc.example", "api-url": "https://bbdc.example", key: "k1" };
    const created = await createClient(org, bbdc);
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const refused = await api("PATCH", `/oauth-clients/${id}`, { body: { data: { type: "oauth-clients", attributes: { key: "" } } } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({
      detail: "The Consumer Key for Bitbucket Data Center must be present. Please add a value for `key`.",
      source: { pointer: "/data/attributes/key" },
    });
    expect((await api("GET", `/oauth-clients/${id}`)).body.data.attributes.key).toBe("k1");
    const changed = await api("PATCH", `/oauth-clients/${id}`, { body: { data: { type: "oauth-clients", attributes: { key: "k2" } } } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.attributes.key).toBe("k2");
    expect((await createClient(org, { ...bbdc, key: "" })).status).toBe(422);
  });

  it("creates a client (201) with an ot- token; secrets are never returned nor stored", async () => {
    const org = await createOrg();
    const res = await createClient(org, {
      ...GITHUB,
      name: "GH",
      "oauth-token-string": "ghp_supersecret",
      secret: "client-secret-xyz",
      "private-key": "pk-material-abc",
      key: "client-id",
    });
    const oc = createdResource(res, "oauth-clients", "oc");
    expect(oc.attributes).toMatchObject({
      name: "GH",
      "service-provider": "github",
      "http-url": "https://github.com",
      "api-url": "https://api.github.com",
      key: "client-id",
    });
    expect(oc.attributes["created-at"]).toMatch(/Z$/);
    expect(oc.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    const tokens = oc.relationships["oauth-tokens"].data;
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toEqual({ id: expect.stringMatching(/^ot-[A-Za-z0-9]{16,}$/), type: "oauth-tokens" });
    for (const secret of ["ghp_supersecret", "client-secret-xyz", "pk-material-abc"]) expect(res.text).not.toContain(secret);
    expect(oc.attributes).not.toHaveProperty("secret");
    expect(oc.attributes).not.toHaveProperty("oauth-token-string");
    const shown = await api("GET", `/oauth-clients/${oc.id}`);
    expect(shown.body.data).toEqual(oc);
    const stored = await env.DB.prepare("SELECT * FROM oauth_clients WHERE id = ?").bind(oc.id).first();
    for (const secret of ["ghp_supersecret", "client-secret-xyz", "pk-material-abc"]) expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it("serves the token by id, by client and by organisation", async () => {
    const org = await createOrg();
    const oc = (await createClient(org, GITHUB)).body.data;
    const tokenId = oc.relationships["oauth-tokens"].data[0].id;
    const token = await api("GET", `/oauth-tokens/${tokenId}`);
    expect(token.status).toBe(200);
    expect(token.body.data).toMatchObject({
      id: tokenId,
      type: "oauth-tokens",
      attributes: { "has-ssh-key": false },
      relationships: { "oauth-client": { data: { id: oc.id, type: "oauth-clients" }, links: { related: `/api/v2/oauth-clients/${oc.id}` } } },
      links: { self: `/api/v2/oauth-tokens/${tokenId}` },
    });
    expect((await api("GET", `/oauth-clients/${oc.id}/oauth-tokens`)).body.data.map((t: any) => t.id)).toEqual([tokenId]);
    const second = (await createClient(org, { ...GITHUB, name: "second" })).body.data;
    const orgTokens = await api("GET", `/organizations/${org}/oauth-tokens`);
    expect(orgTokens.body.data.map((t: any) => t.id).sort()).toEqual([tokenId, second.relationships["oauth-tokens"].data[0].id].sort());
    expect((await api("GET", `/organizations/${org}/oauth-clients`)).body.data.map((c: any) => c.id)).toEqual([oc.id, second.id]);
    // A workspace can name the token in vcs-repo.
    const ws = await createWorkspace(org, { "vcs-repo": { identifier: "acme/app", "oauth-token-id": tokenId } });
    expect(ws.attributes["vcs-repo"]["oauth-token-id"]).toBe(tokenId);
  });

  it("updates public attributes, and deleting a client deletes its tokens", async () => {
    const org = await createOrg();
    const oc = (await createClient(org, GITHUB)).body.data;
    const tokenId = oc.relationships["oauth-tokens"].data[0].id;
    const upd = await api("PATCH", `/oauth-clients/${oc.id}`, {
      body: { data: { type: "oauth-clients", attributes: { name: "renamed", "oauth-token-string": "new-secret" } } },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes).toMatchObject({ name: "renamed", "service-provider": "github" });
    expect(upd.text).not.toContain("new-secret");
    expect((await api("DELETE", `/oauth-clients/${oc.id}`)).status).toBe(204);
    expect((await api("GET", `/oauth-clients/${oc.id}`)).status).toBe(404);
    expect((await api("GET", `/oauth-tokens/${tokenId}`)).status).toBe(404);
  });

  it("validates the service provider (422 pointer)", async () => {
    const org = await createOrg();
    const r = await createClient(org, { ...GITHUB, "service-provider": "sourceforge" });
    expect(r.status).toBe(422);
    expect(r.body.errors[0].source.pointer).toBe("/data/attributes/service-provider");
    const missing = await createClient(org, { name: "no provider" });
    expect(missing.status).toBe(422);
  });

  it("writes need owners, the org token or manage-vcs-settings; members read; other organisations get 404", async () => {
    const org = await createOrg();
    const plain = await makeTeam(org);
    const vcs = await makeTeam(org, { "manage-vcs-settings": true });
    const pools = await makeTeam(org, { "manage-agent-pools": true });
    for (const t of [plain, pools]) expect((await createClient(org, GITHUB, t.token)).status).toBe(404);
    const oc = (await createClient(org, GITHUB, vcs.token)).body.data;
    expect(oc.id).toMatch(/^oc-/);
    expect((await createClient(org, GITHUB, (await makeOrgToken(org)).token)).status).toBe(201);
    const tokenId = oc.relationships["oauth-tokens"].data[0].id;
    expect((await api("GET", `/oauth-clients/${oc.id}`, { token: plain.token })).status).toBe(200);
    expect((await api("GET", `/oauth-tokens/${tokenId}`, { token: plain.token })).status).toBe(200);
    expect(
      (await api("PATCH", `/oauth-clients/${oc.id}`, { token: plain.token, body: { data: { type: "oauth-clients", attributes: { name: "x" } } } })).status,
    ).toBe(404);
    expect((await api("DELETE", `/oauth-clients/${oc.id}`, { token: plain.token })).status).toBe(404);

    const outsider = await makeUser({ ownerOf: await createOrg() });
    for (const path of [
      `/oauth-clients/${oc.id}`,
      `/oauth-tokens/${tokenId}`,
      `/oauth-clients/${oc.id}/oauth-tokens`,
      `/organizations/${org}/oauth-clients`,
      `/organizations/${org}/oauth-tokens`,
    ]) {
      expect((await api("GET", path, { token: outsider.token })).status).toBe(404);
    }
    expect((await api("DELETE", `/oauth-clients/${oc.id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/oauth-clients/${oc.id}`)).status).toBe(200);
  });
});

describe("SSH keys", () => {
  it("creates a key (201) returning only its name; the value is never returned nor stored", async () => {
    const org = await createOrg();
    const res = await createKey(org, { name: "Deploy key", value: KEY });
    expect(res.status).toBe(201);
    const k = res.body.data;
    expect(k).toEqual({
      id: expect.stringMatching(/^sshkey-[A-Za-z0-9]{16,}$/),
      type: "ssh-keys",
      attributes: { name: "Deploy key" },
      links: { self: `/api/v2/ssh-keys/${k.id}` },
    });
    expect(res.text).not.toContain("secretmaterial");
    const shown = await api("GET", `/ssh-keys/${k.id}`);
    expect(shown.body.data).toEqual(k);
    expect(shown.text).not.toContain("secretmaterial");
    const stored = await env.DB.prepare("SELECT * FROM ssh_keys WHERE id = ?").bind(k.id).first();
    expect(JSON.stringify(stored)).not.toContain("secretmaterial");
  });

  it("requires name and value (422 pointers)", async () => {
    const org = await createOrg();
    const noName = await createKey(org, { value: KEY });
    expect(noName.status).toBe(422);
    expect(noName.body.errors[0].source.pointer).toBe("/data/attributes/name");
    const noValue = await createKey(org, { name: "k" });
    expect(noValue.status).toBe(422);
    expect(noValue.body.errors[0].source.pointer).toBe("/data/attributes/value");
  });

  it("lists with pagination, renames, and deletes", async () => {
    const org = await createOrg();
    const ids: string[] = [];
    for (const n of ["one", "two", "three"]) ids.push((await createKey(org, { name: n, value: KEY })).body.data.id);
    const list = await api("GET", `/organizations/${org}/ssh-keys`);
    expect(list.body.data.map((k: any) => k.id)).toEqual(ids);
    expect(list.text).not.toContain("secretmaterial");
    const page = await api("GET", `/organizations/${org}/ssh-keys?page%5Bsize%5D=2&page%5Bnumber%5D=2`);
    expect(page.body.data.map((k: any) => k.id)).toEqual([ids[2]]);
    expect(page.body.meta.pagination["total-count"]).toBe(3);
    const upd = await api("PATCH", `/ssh-keys/${ids[0]}`, {
      body: { data: { type: "ssh-keys", attributes: { name: "renamed", value: "ignored-secret-value" } } },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes).toEqual({ name: "renamed" });
    expect(upd.text).not.toContain("ignored-secret-value");
    expect((await api("DELETE", `/ssh-keys/${ids[0]}`)).status).toBe(204);
    expect((await api("GET", `/ssh-keys/${ids[0]}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/ssh-keys`)).body.data).toHaveLength(2);
  });

  it("an organisation token cannot create keys; writes need owners or manage-vcs-settings; members read; others 404", async () => {
    const org = await createOrg();
    const orgToken = await makeOrgToken(org);
    const plain = await makeTeam(org);
    const vcs = await makeTeam(org, { "manage-vcs-settings": true });
    expect((await createKey(org, { name: "k", value: KEY }, orgToken.token)).status).toBe(404);
    expect((await createKey(org, { name: "k", value: KEY }, plain.token)).status).toBe(404);
    const id = (await createKey(org, { name: "by-vcs", value: KEY }, vcs.token)).body.data.id;
    expect((await createKey(org, { name: "by-owner", value: KEY }, (await makeUser({ ownerOf: org })).token)).status).toBe(201);
    expect((await api("GET", `/ssh-keys/${id}`, { token: plain.token })).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/ssh-keys`, { token: plain.token })).body.data).toHaveLength(2);
    expect((await api("PATCH", `/ssh-keys/${id}`, { token: plain.token, body: { data: { type: "ssh-keys", attributes: { name: "x" } } } })).status).toBe(404);
    expect((await api("DELETE", `/ssh-keys/${id}`, { token: plain.token })).status).toBe(404);

    const outsider = await makeUser({ ownerOf: await createOrg() });
    expect((await api("GET", `/ssh-keys/${id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/ssh-keys`, { token: outsider.token })).status).toBe(404);
    expect((await api("PATCH", `/ssh-keys/${id}`, { token: outsider.token, body: { data: { type: "ssh-keys", attributes: { name: "x" } } } })).status).toBe(
      404,
    );
    expect((await api("DELETE", `/ssh-keys/${id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/ssh-keys/${id}`)).body.data.attributes.name).toBe("by-vcs");
  });
});

describe("agent pools and workspaces; concurrent registry updates", () => {
  it("a workspace in agent mode takes a pool of its organisation; another organisation's pool is a 422", async () => {
    const org = await createOrg();
    const own = (await createPool(org, { name: "own" })).body.data.id;
    const foreign = (await createPool(await createOrg(), { name: "foreign" })).body.data.id;
    const ws = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": own });
    expect(ws.attributes["execution-mode"]).toBe("agent");
    expect(ws.relationships["agent-pool"].data).toEqual({ id: own, type: "agent-pools" });
    const refused = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), "execution-mode": "agent", "agent-pool-id": foreign } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ title: "invalid attribute", source: { pointer: "/data/attributes/agent-pool-id" } });
    const moved = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "agent-pool-id": foreign } } } });
    expect(moved.status).toBe(422);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships["agent-pool"].data.id).toBe(own);
  });

  it("lists each pool with the workspaces using it", async () => {
    const org = await createOrg();
    const a = (await createPool(org, { name: "a-pool" })).body.data.id;
    const b = (await createPool(org, { name: "b-pool" })).body.data.id;
    await createPool(org, { name: "c-pool" });
    const w1 = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": a });
    const w2 = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": b });
    const w3 = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": a });
    const list = await api("GET", `/organizations/${org}/agent-pools`);
    const using = Object.fromEntries(list.body.data.map((p: any) => [p.attributes.name, p.relationships.workspaces.data.map((w: any) => w.id)]));
    expect(using).toEqual({ "a-pool": [w1.id, w3.id], "b-pool": [w2.id], "c-pool": [] });
    // LIKE wildcards in q are literal.
    expect((await api("GET", `/organizations/${org}/agent-pools?q=%25`)).body.data).toEqual([]);
  });

  it("says why a pool cannot be deleted", async () => {
    const org = await createOrg();
    const id = (await createPool(org, { name: "everywhere" })).body.data.id;
    await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": id });
    await api("POST", `/organizations/${org}/projects`, {
      body: { data: { type: "projects", attributes: { name: "Agents", "default-execution-mode": "agent", "default-agent-pool-id": id } } },
    });
    await api("PATCH", `/organizations/${org}`, {
      body: {
        data: {
          type: "organizations",
          attributes: { "default-execution-mode": "agent" },
          relationships: { "default-agent-pool": { data: { type: "agent-pools", id } } },
        },
      },
    });
    const refused = await api("DELETE", `/agent-pools/${id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].title).toBe("invalid attribute");
    expect(refused.body.errors[0].detail).toBe(
      "Agent pool cannot be deleted while in use: it is the organization's default agent pool; it is the default agent pool of 1 project(s); 1 workspace(s) use it",
    );
  });

  it("concurrent PATCHes of different fields all land (agent pools, OAuth clients)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const id = (await createPool(org, { name: "before" })).body.data.id;
    const pools = await Promise.all([
      patchPool(id, { name: "after" }),
      patchPool(id, { "organization-scoped": false }),
      patchPool(id, {}, { "allowed-workspaces": ref("workspaces", [ws.id]) }),
    ]);
    expect(pools.map((r) => r.status)).toEqual([200, 200, 200]);
    const pool = (await api("GET", `/agent-pools/${id}`)).body.data;
    expect(pool.attributes).toMatchObject({ name: "after", "organization-scoped": false });
    expect(pool.relationships["allowed-workspaces"].data).toEqual([{ id: ws.id, type: "workspaces" }]);

    const oc = (await createClient(org, GITHUB)).body.data.id;
    const patch = (attributes: Record<string, unknown>) => api("PATCH", `/oauth-clients/${oc}`, { body: { data: { type: "oauth-clients", attributes } } });
    const clients = await Promise.all([patch({ name: "named" }), patch({ key: "client-key" }), patch({ "organization-scoped": false })]);
    expect(clients.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await api("GET", `/oauth-clients/${oc}`)).body.data.attributes).toMatchObject({
      name: "named",
      key: "client-key",
      "organization-scoped": false,
      "service-provider": "github",
    });
    // A null clears an attribute.
    expect((await patch({ name: null })).body.data.attributes.name).toBeNull();
  });

  it("OAuth clients show the provider's display name", async () => {
    const org = await createOrg();
    for (const [provider, display] of [
      ["github", "GitHub"],
      ["gitlab_hosted", "GitLab.com"],
      ["ado_services", "Azure DevOps Services"],
    ]) {
      const oc = await createClient(org, { ...GITHUB, "service-provider": provider });
      expect(oc.body.data.attributes).toMatchObject({ "service-provider": provider, "service-provider-display-name": display });
    }
  });
});

describe("OAuth tokens: SSH key and delete (PATCH/DELETE /oauth-tokens/:id)", () => {
  const KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIICXgIBAAKBgQDIF0s2yX7dSQQL1grdTbai1Mb7sEco6RIOz8iqrHTGqmESpu5n\n-----END RSA PRIVATE KEY-----";

  it("records that a key is set (never the key), refuses an invalid one, needs VCS management, and deletes", async () => {
    const org = await createOrg();
    const client = await api("POST", `/organizations/${org}/oauth-clients`, {
      body: { data: { type: "oauth-clients", attributes: { "service-provider": "github" } } },
    });
    const tokenId = client.body.data.relationships["oauth-tokens"].data[0].id as string;
    expect((await api("GET", `/oauth-tokens/${tokenId}`)).body.data.attributes["has-ssh-key"]).toBe(false);
    const unchanged = await api("PATCH", `/oauth-tokens/${tokenId}`, { body: { data: { type: "oauth-tokens", attributes: {} } } });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data.attributes["has-ssh-key"]).toBe(false);
    const invalid = await api("PATCH", `/oauth-tokens/${tokenId}`, { body: { data: { type: "oauth-tokens", attributes: { "ssh-key": "not a key" } } } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors[0]).toMatchObject({ detail: "Ssh key is invalid", source: { pointer: "/data/attributes/ssh-key" } });
    const set = await api("PATCH", `/oauth-tokens/${tokenId}`, { body: { data: { type: "oauth-tokens", attributes: { "ssh-key": KEY } } } });
    expect(set.status).toBe(200);
    expect(set.body.data.attributes["has-ssh-key"]).toBe(true);
    expect(JSON.stringify(await env.DB.prepare("SELECT * FROM oauth_tokens WHERE id = ?").bind(tokenId).first())).not.toContain("PRIVATE KEY");
    // A member without manage-vcs-settings may read the token but not change or delete it.
    const member = await makeTeam(org);
    expect((await api("GET", `/oauth-tokens/${tokenId}`, { token: member.token })).status).toBe(200);
    expect((await api("DELETE", `/oauth-tokens/${tokenId}`, { token: member.token })).status).toBe(404);
    expect((await api("DELETE", `/oauth-tokens/${tokenId}`)).status).toBe(204);
    expect((await api("GET", `/oauth-tokens/${tokenId}`)).status).toBe(404);
    expect((await api("DELETE", `/oauth-tokens/${tokenId}`)).status).toBe(404);
  });
});
