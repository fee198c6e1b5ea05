// Projects and the registries workspace validation refers to.
import { describe, expect, it } from "vitest";
import { serializeWorkspace } from "../../src/workspaces/workspaces.serialize";
import { defaultSettings } from "../../src/workspaces/workspace.rules";
import { initialRecord } from "../../src/workspaces/workspace.record";
import { createOrg, createWorkspace, makeTeam, postOAuthClient } from "../fixtures";
import { api } from "../helpers";

const project = (org: string, attributes: Record<string, unknown>, relationships?: unknown, token?: string) =>
  api("POST", `/organizations/${org}/projects`, { token, body: { data: { type: "projects", attributes, ...(relationships ? { relationships } : {}) } } });

describe("projects", () => {
  it("creates, finds by filter[names] and q, updates and deletes an empty project", async () => {
    const org = await createOrg();
    const res = await project(org, { name: "Platform Team", description: "infra" });
    expect(res.status).toBe(201);
    expect(res.body.data.id).toMatch(/^prj-/);
    expect(res.body.data.attributes).toMatchObject({ name: "Platform Team", description: "infra", "workspace-count": 0 });
    expect((await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Platform%20Team`)).body.data.map((p: { id: string }) => p.id)).toEqual([
      res.body.data.id,
    ]);
    expect((await api("GET", `/organizations/${org}/projects?q=platform`)).body.data).toHaveLength(1);
    const upd = await api("PATCH", `/projects/${res.body.data.id}`, { body: { data: { type: "projects", attributes: { name: "Platform" } } } });
    expect(upd.body.data.attributes.name).toBe("Platform");
    expect((await api("DELETE", `/projects/${res.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/projects/${res.body.data.id}`)).status).toBe(404);
  });

  it("validates names: 3-40 characters, letters, numbers, spaces, - and _, unique case-insensitively", async () => {
    const org = await createOrg();
    for (const bad of ["ab", "x".repeat(41), " lead", "trail ", "dot.name"]) {
      const r = await project(org, { name: bad });
      expect(r.status).toBe(422);
      expect(r.body.errors[0].source.pointer).toBe("/data/attributes/name");
    }
    expect((await project(org, { name: "Alpha" })).status).toBe(201);
    expect((await project(org, { name: "alpha" })).status).toBe(422);
  });

  it("refuses to delete the Default Project or a project with workspaces", async () => {
    const org = await createOrg();
    const o = await api("GET", `/organizations/${org}`);
    const def = o.body.data.relationships["default-project"].data.id;
    expect((await api("DELETE", `/projects/${def}`)).status).toBe(422);
    const p = (await project(org, { name: "Busy" })).body.data;
    await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p.id } } });
    const r = await api("DELETE", `/projects/${p.id}`);
    expect(r.status).toBe(409);
    expect(r.body.errors[0].title).toBe("conflict");
  });

  it("gives workspaces its execution-mode default while they inherit", async () => {
    const org = await createOrg();
    const p = (await project(org, { name: "Local Things", "default-execution-mode": "local" })).body.data;
    const ws = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p.id } } });
    expect(ws.attributes["execution-mode"]).toBe("local");
    expect(ws.attributes["setting-overwrites"]["execution-mode"]).toBe(false);
  });

  it("needs manage-projects to create; others get 404", async () => {
    const org = await createOrg();
    const plain = await makeTeam(org);
    expect((await project(org, { name: "Nope" }, undefined, plain.token)).status).toBe(404);
    const manager = await makeTeam(org, { "manage-projects": true });
    expect((await project(org, { name: "Yes" }, undefined, manager.token)).status).toBe(201);
  });
});

describe("agent pools and OAuth", () => {
  it("creates pools (unique names), shows which workspaces use them, refuses to delete one in use", async () => {
    const org = await createOrg();
    const pool = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "pool-1" } } } });
    expect(pool.status).toBe(201);
    expect(pool.body.data.attributes["organization-scoped"]).toBe(true);
    expect((await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "pool-1" } } } })).status).toBe(
      422,
    );
    const ws = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": pool.body.data.id });
    expect((await api("GET", `/agent-pools/${pool.body.data.id}`)).body.data.relationships.workspaces.data).toEqual([{ id: ws.id, type: "workspaces" }]);
    expect((await api("DELETE", `/agent-pools/${pool.body.data.id}`)).status).toBe(422);
    await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "execution-mode": "remote" } } } });
    expect((await api("DELETE", `/agent-pools/${pool.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/agent-pools/${pool.body.data.id}`, {})).status).toBe(404);
  });

  it("creates an OAuth client with its token; secrets are never returned", async () => {
    const org = await createOrg();
    const res = await postOAuthClient(org, {
      "service-provider": "github",
      "http-url": "https://github.com",
      "api-url": "https://api.github.com",
      "oauth-token-string": "secret-token",
      secret: "s",
    });
    expect(res.status).toBe(201);
    expect(res.text).not.toContain("secret-token");
    const tokenId = res.body.data.relationships["oauth-tokens"].data[0].id;
    expect(tokenId).toMatch(/^ot-/);
    expect((await api("GET", `/oauth-tokens/${tokenId}`)).body.data.relationships["oauth-client"].data.id).toBe(res.body.data.id);
    const ws = await createWorkspace(org, { "vcs-repo": { identifier: "acme/app", "oauth-token-id": tokenId } });
    expect(ws.attributes["vcs-repo"]["oauth-token-id"]).toBe(tokenId);
    expect((await api("GET", `/oauth-tokens/${tokenId}`, { token: (await makeTeam(await createOrg())).token })).status).toBe(404);
  });
});

describe("editions", () => {
  it("the hosted edition returns assessments-enabled and no retention relationship; self-hosted the reverse", () => {
    const record = initialRecord({
      id: "ws-x",
      organizationId: "org-x",
      projectId: "prj-x",
      name: "n",
      now: "2026-01-01T00:00:00.000Z",
      settings: defaultSettings("1.0.0"),
      tags: [],
    });
    const ctx = { organization: "o", flags: {}, defaults: { executionMode: "remote" as const, agentPoolId: null } };
    const hosted = serializeWorkspace(record, { ...ctx, edition: "hosted" });
    const self = serializeWorkspace(record, { ...ctx, edition: "self-hosted" });
    expect(hosted.attributes).toHaveProperty("assessments-enabled", false);
    expect(hosted.relationships).not.toHaveProperty("data-retention-policy");
    expect(self.attributes).not.toHaveProperty("assessments-enabled");
    expect(self.relationships).toHaveProperty("data-retention-policy");
  });
});
