// The workspace resource's attribute rules, one test (or more) per rule.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeAgentPool, makeOAuthToken } from "../fixtures";
import { api, assertJsonApi, uniqueName } from "../helpers";

const create = (org: string, attributes: Record<string, unknown>, relationships?: unknown) =>
  api("POST", `/organizations/${org}/workspaces`, {
    body: { data: { type: "workspaces", attributes, ...(relationships ? { relationships } : {}) } },
  });
const patch = (id: string, attributes: Record<string, unknown>, relationships?: unknown) =>
  api("PATCH", `/workspaces/${id}`, { body: { data: { type: "workspaces", attributes, ...(relationships ? { relationships } : {}) } } });

function expect422(res: Awaited<ReturnType<typeof api>>, pointer: string, detail?: string | RegExp) {
  assertJsonApi(res);
  expect(res.status).toBe(422);
  expect(res.body.errors[0].status).toBe("422");
  expect(res.body.errors[0].title).toBe("invalid attribute");
  expect(res.body.errors[0].source).toEqual({ pointer });
  if (detail) expect(res.body.errors[0].detail).toMatch(detail);
}

describe("name", () => {
  it("is required on create", async () => {
    const org = await createOrg();
    expect422(await create(org, {}), "/data/attributes/name");
  });

  it("allows only letters, numbers, - and _", async () => {
    const org = await createOrg();
    for (const bad of ["has space", "slash/name", "dot.name", "ünï", ""]) expect422(await create(org, { name: bad }), "/data/attributes/name");
    expect((await create(org, { name: "Ok_name-1" })).status).toBe(201);
  });

  it("is unique within the organisation, compared case-insensitively, and looked up the same way", async () => {
    const org = await createOrg();
    const name = uniqueName("Prod");
    expect((await create(org, { name })).status).toBe(201);
    expect422(await create(org, { name: name.toUpperCase() }), "/data/attributes/name", "Name has already been taken");
    const other = await createOrg();
    expect((await create(other, { name })).status).toBe(201); // another organisation may reuse it
    const byLower = await api("GET", `/organizations/${org}/workspaces/${name.toLowerCase()}`);
    expect(byLower.status).toBe(200);
    expect(byLower.body.data.attributes.name).toBe(name);
  });

  it("renaming changes the workspace's URL and frees the old name", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const next = uniqueName("next");
    const res = await patch(ws.id, { name: next });
    expect(res.status).toBe(200);
    expect(res.body.data.links.self).toBe(`/api/v2/organizations/${org}/workspaces/${next}`);
    expect((await create(org, { name: ws.attributes.name })).status).toBe(201);
  });

  it("a rename to a taken name is refused and changes nothing", async () => {
    const org = await createOrg();
    const a = await createWorkspace(org);
    const b = await createWorkspace(org);
    expect422(await patch(b.id, { name: a.attributes.name }), "/data/attributes/name", "Name has already been taken");
    expect((await api("GET", `/workspaces/${b.id}`)).body.data).toEqual(b);
  });
});

describe("defaults and plain attributes", () => {
  it("applies the documented create defaults", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const a = ws.attributes;
    expect(a["allow-destroy-plan"]).toBe(true);
    expect(a["auto-apply"]).toBe(false);
    expect(a["auto-apply-run-trigger"]).toBe(false);
    expect(a["auto-destroy-at"]).toBeNull();
    expect(a["auto-destroy-activity-duration"]).toBeNull();
    expect(a.description).toBeNull();
    expect(a["file-triggers-enabled"]).toBe(true);
    expect(a["global-remote-state"]).toBe(false);
    expect(a["queue-all-runs"]).toBe(false);
    expect(a["speculative-enabled"]).toBe(true);
    expect(a["trigger-patterns"]).toEqual([]);
    expect(a["trigger-prefixes"]).toEqual([]);
    expect(a["working-directory"]).toBeNull();
    expect(a["vcs-repo"]).toBeNull();
    expect(a["engine-version"]).toBe("1.14.0");
    expect(a["terraform-version"]).toBe("1.14.0");
    expect(a.operations).toBe(true);
    expect(a.locked).toBe(false);
    expect(a.source).toBe("tfe-api");
    expect(a["resource-count"]).toBe(0);
    expect(a["latest-change-at"]).toBe(a["created-at"]);
    expect(a.actions).toEqual({ "is-destroyable": true });
    expect(Object.keys(a.permissions)).toHaveLength(21);
    expect(ws.relationships.project.data.type).toBe("projects");
    expect(ws.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    expect(ws.relationships["locked-by"]).toEqual({ data: null });
  });

  it("round-trips every writable attribute and keeps omitted ones on update", async () => {
    const org = await createOrg();
    const attrs = {
      name: uniqueName("full"),
      "allow-destroy-plan": false,
      "auto-apply": true,
      "auto-apply-run-trigger": true,
      "auto-destroy-at": "2020-01-01T00:00:00Z", // in the past: accepted
      "auto-destroy-activity-duration": "14d",
      description: "desc",
      "file-triggers-enabled": false,
      "global-remote-state": true,
      "queue-all-runs": true,
      "source-name": "my-portal",
      "source-url": "https://portal.example/x",
      "speculative-enabled": false,
      "structured-run-output-enabled": false,
      "terraform-version": "~> 1.5.0",
      "trigger-patterns": ["/modules/**/*"],
      "trigger-prefixes": [],
      "working-directory": "infra/prod",
    };
    const res = await create(org, attrs);
    expect(res.status).toBe(201);
    const a = res.body.data.attributes;
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "auto-destroy-at") expect(a[k]).toBe("2020-01-01T00:00:00.000Z");
      else expect(a[k]).toEqual(v);
    }
    expect(a["engine-version"]).toBe("~> 1.5.0");
    const upd = await patch(res.body.data.id, { description: "changed" });
    expect(upd.status).toBe(200);
    for (const [k, v] of Object.entries(attrs)) if (k !== "auto-destroy-at" && k !== "description") expect(upd.body.data.attributes[k]).toEqual(v);
    expect(upd.body.data.attributes.description).toBe("changed");
    const cleared = await patch(res.body.data.id, { "auto-destroy-at": null, "auto-destroy-activity-duration": null });
    expect(cleared.body.data.attributes["auto-destroy-at"]).toBeNull();
    expect(cleared.body.data.attributes["auto-destroy-activity-duration"]).toBeNull();
  });

  it("reads never change the representation (updated-at included)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const a = await api("GET", `/workspaces/${ws.id}`);
    const b = await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}?foo=bar&TagBindings=%7B+k1+v1%7D`);
    expect(a.body.data).toEqual(ws);
    expect(b.body.data).toEqual(ws);
  });

  it("rejects wrong types with a pointer to the member", async () => {
    const org = await createOrg();
    expect422(await create(org, { name: uniqueName(), "auto-apply": "yes" }), "/data/attributes/auto-apply");
    expect422(await create(org, { name: uniqueName(), "trigger-prefixes": "x" }), "/data/attributes/trigger-prefixes");
    expect422(await create(org, { name: uniqueName(), "execution-mode": "cloud" }), "/data/attributes/execution-mode");
  });
});

describe("engine-version", () => {
  it("accepts exact versions, constraints, `latest` and the engine_version / terraform-version aliases", async () => {
    const org = await createOrg();
    for (const v of ["1.6.0", "~> 1.0.0", ">= 1.2, < 2.0", "latest", "1.10.0-beta1"]) {
      const res = await create(org, { name: uniqueName(), "engine-version": v });
      expect(res.status).toBe(201);
      expect(res.body.data.attributes["engine-version"]).toBe(v);
    }
    const alias = await create(org, { name: uniqueName(), engine_version: "1.3.0" });
    expect(alias.body.data.attributes["terraform-version"]).toBe("1.3.0");
  });

  it("rejects a value that is neither and conflicting aliases", async () => {
    const org = await createOrg();
    expect422(await create(org, { name: uniqueName(), "terraform-version": "nonexisting" }), "/data/attributes/engine-version");
    expect422(await create(org, { name: uniqueName(), "engine-version": "1.0.0", "terraform-version": "1.1.0" }), "/data/attributes/terraform-version");
    expect((await create(org, { name: uniqueName(), "engine-version": "1.0.0", "terraform-version": "1.0.0" })).status).toBe(201);
  });
});

describe("execution mode, operations and agent pools", () => {
  it("inherits the organisation default while setting-overwrites is false", async () => {
    const org = await createOrg();
    await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "default-execution-mode": "local" } } } });
    const ws = await createWorkspace(org);
    expect(ws.attributes["execution-mode"]).toBe("local");
    expect(ws.attributes.operations).toBe(false);
    expect(ws.attributes["setting-overwrites"]).toEqual({ "execution-mode": false, "agent-pool": false });
    const own = await createWorkspace(org, { "execution-mode": "remote" });
    expect(own.attributes["execution-mode"]).toBe("remote");
    expect(own.attributes["setting-overwrites"]["execution-mode"]).toBe(true);
    const back = await patch(own.id, { "setting-overwrites": { "execution-mode": false } });
    expect(back.body.data.attributes["execution-mode"]).toBe("local");
  });

  it("requires execution-mode when setting-overwrites.execution-mode is true", async () => {
    const org = await createOrg();
    expect422(await create(org, { name: uniqueName(), "setting-overwrites": { "execution-mode": true } }), "/data/attributes/execution-mode");
    const ok = await create(org, { name: uniqueName(), "execution-mode": "local", "setting-overwrites": { "execution-mode": true } });
    expect(ok.body.data.attributes["execution-mode"]).toBe("local");
  });

  it("refuses operations together with execution-mode; operations false means local", async () => {
    const org = await createOrg();
    expect422(await create(org, { name: uniqueName(), operations: true, "execution-mode": "remote" }), "/data/attributes/operations");
    const res = await create(org, { name: uniqueName(), operations: false });
    expect(res.body.data.attributes["execution-mode"]).toBe("local");
  });

  it("ties agent-pool-id to execution-mode agent", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    expect422(await create(org, { name: uniqueName(), "execution-mode": "agent" }), "/data/attributes/agent-pool-id");
    expect422(await create(org, { name: uniqueName(), "execution-mode": "remote", "agent-pool-id": pool }), "/data/attributes/agent-pool-id");
    expect422(await create(org, { name: uniqueName(), operations: true, "agent-pool-id": pool }), "/data/attributes/agent-pool-id");
    const otherPool = await makeAgentPool(await createOrg());
    expect422(await create(org, { name: uniqueName(), "execution-mode": "agent", "agent-pool-id": otherPool }), "/data/attributes/agent-pool-id");
    const ok = await create(org, { name: uniqueName(), "execution-mode": "agent", "agent-pool-id": pool });
    expect(ok.status).toBe(201);
    expect(ok.body.data.relationships["agent-pool"].data).toEqual({ id: pool, type: "agent-pools" });
    const remote = await patch(ok.body.data.id, { "execution-mode": "remote" });
    expect(remote.body.data.relationships["agent-pool"].data).toBeNull();
  });
});

describe("auto-destroy-activity-duration", () => {
  it("accepts up to four digits greater than zero with unit d or h", async () => {
    const org = await createOrg();
    for (const ok of ["1d", "14d", "9999h", "24h"]) expect((await create(org, { name: uniqueName(), "auto-destroy-activity-duration": ok })).status).toBe(201);
    for (const bad of ["0d", "10000d", "5m", "d", "14", "-1d", "1.5d"]) {
      expect422(
        await create(org, { name: uniqueName(), "auto-destroy-activity-duration": bad }),
        "/data/attributes/auto-destroy-activity-duration",
        "Auto destroy activity duration has an incorrect format",
      );
    }
  });
});

describe("trigger patterns and prefixes", () => {
  it("setting one replaces the other; both in one request is a 422 naming trigger-patterns", async () => {
    const org = await createOrg();
    const res = await create(org, { name: uniqueName(), "trigger-prefixes": ["/modules"] });
    expect(res.status).toBe(201);
    const upd = await patch(res.body.data.id, { "trigger-patterns": ["/modules/**/*"] });
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes).toMatchObject({ "trigger-patterns": ["/modules/**/*"], "trigger-prefixes": [] });
    expect422(await patch(res.body.data.id, { "trigger-patterns": ["/a/*"], "trigger-prefixes": ["/b"] }), "/data/attributes/trigger-patterns");
  });
});

describe("vcs-repo", () => {
  it("needs oauth-token-id and identifier on create, modifies only given keys, and null removes it", async () => {
    const org = await createOrg();
    const ot = await makeOAuthToken(org);
    expect422(await create(org, { name: uniqueName(), "vcs-repo": { identifier: "acme/app" } }), "/data/attributes/vcs-repo/oauth-token-id");
    expect422(await create(org, { name: uniqueName(), "vcs-repo": { "oauth-token-id": ot } }), "/data/attributes/vcs-repo/identifier");
    const res = await create(org, { name: uniqueName(), "vcs-repo": { identifier: "acme/app", "oauth-token-id": ot, branch: "main" } });
    expect(res.status).toBe(201);
    const v = res.body.data.attributes["vcs-repo"];
    expect(v.identifier).toBe("acme/app");
    expect(v["oauth-token-id"]).toBe(ot);
    expect(v.branch).toBe("main");
    expect(res.body.data.attributes["vcs-repo-identifier"]).toBe("acme/app");
    const upd = await patch(res.body.data.id, { "vcs-repo": { branch: "dev" } });
    expect(upd.body.data.attributes["vcs-repo"].identifier).toBe("acme/app");
    expect(upd.body.data.attributes["vcs-repo"].branch).toBe("dev");
    const removed = await patch(res.body.data.id, { "vcs-repo": null });
    expect(removed.body.data.attributes["vcs-repo"]).toBeNull();
    // Adding a repo to a workspace without one needs both keys again.
    expect422(await patch(res.body.data.id, { "vcs-repo": { branch: "x" } }), "/data/attributes/vcs-repo/identifier");
  });

  it("refuses oauth-token-id with vcs-app-installation-id, and unknown or foreign tokens", async () => {
    const org = await createOrg();
    const ot = await makeOAuthToken(org);
    expect422(
      await create(org, { name: uniqueName(), "vcs-repo": { identifier: "a/b", "oauth-token-id": ot, "vcs-app-installation-id": "ghain-1" } }),
      "/data/attributes/vcs-repo/oauth-token-id",
    );
    const foreign = await makeOAuthToken(await createOrg());
    expect422(
      await create(org, { name: uniqueName(), "vcs-repo": { identifier: "a/b", "oauth-token-id": foreign } }),
      "/data/attributes/vcs-repo/oauth-token-id",
    );
    const app = await create(org, { name: uniqueName(), "vcs-repo": { identifier: "a/b", "github-app-installation-id": "ghain-1" } });
    expect(app.status).toBe(201);
    expect(app.body.data.attributes["vcs-repo"]["vcs-app-installation-id"]).toBe("ghain-1");
    expect(app.body.data.attributes["vcs-repo"]["github-app-installation-id"]).toBe("ghain-1");
  });
});

describe("editions", () => {
  it("self-hosted ignores assessments-enabled on input and never returns it", async () => {
    const org = await createOrg();
    const res = await create(org, { name: uniqueName(), "assessments-enabled": true });
    expect(res.status).toBe(201);
    expect("assessments-enabled" in res.body.data.attributes).toBe(false);
    expect(res.body.data.attributes["project-remote-state"]).toBe(false);
  });
});

describe("projects", () => {
  it("places a workspace without a project in the organisation's default project", async () => {
    const org = await createOrg();
    const o = await api("GET", `/organizations/${org}`);
    const defaultProject = o.body.data.relationships["default-project"].data.id;
    const ws = await createWorkspace(org);
    expect(ws.relationships.project.data).toEqual({ id: defaultProject, type: "projects" });
  });

  it("refuses a project of another organisation", async () => {
    const org = await createOrg();
    const other = await api("GET", `/organizations/${await createOrg()}`);
    const foreign = other.body.data.relationships["default-project"].data.id;
    expect422(await create(org, { name: uniqueName() }, { project: { data: { type: "projects", id: foreign } } }), "/data/relationships/project/data/id");
  });
});

describe("request hygiene", () => {
  it("answers 415 for a body that is not JSON:API, 400 for malformed JSON, 413 for oversized bodies", async () => {
    const org = await createOrg();
    const body = { data: { type: "workspaces", attributes: { name: uniqueName() } } };
    const r415 = await api("POST", `/organizations/${org}/workspaces`, { body, contentType: "text/plain" });
    assertJsonApi(r415);
    expect(r415.status).toBe(415);
    expect(r415.body.errors[0].detail).toBe("content-type must be application/vnd.api+json");
    const r400 = await api("POST", `/organizations/${org}/workspaces`, { raw: '{"data": {' });
    assertJsonApi(r400);
    expect(r400.status).toBe(400);
    const big = await api("POST", `/organizations/${org}/workspaces`, { raw: JSON.stringify({ ...body, pad: "x".repeat(1024 * 1024 + 10) }) });
    assertJsonApi(big);
    expect(big.status).toBe(413);
    const wrongType = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "projects", attributes: { name: "x" } } } });
    assertJsonApi(wrongType);
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors[0].source.pointer).toBe("/data/type");
    expect((await api("GET", `/organizations/${org}/workspaces`)).body.data).toHaveLength(0);
  });
});
