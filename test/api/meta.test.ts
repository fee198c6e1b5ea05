import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg } from "../fixtures";
import { app } from "../../src/index";
import { ADMIN, api } from "../helpers";

describe("discovery and client bootstrap", () => {
  it("serves service discovery without a token, as application/json", async () => {
    const res = await exports.default.fetch(new Request("http://localhost/.well-known/terraform.json"));
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, string>;
    for (const k of ["tfe.v2", "tfe.v2.1", "tfe.v2.2", "state.v2"]) expect(body[k]).toBe("/api/v2/");
  });

  it("answers the ping with the headers go-tfe and Terraform read", async () => {
    const res = await api("GET", "/ping");
    expect(res.status).toBe(204);
    expect(Number(res.headers.get("TFP-API-Version"))).toBeGreaterThanOrEqual(2.5);
    expect(res.headers.get("TFP-AppName")).toBe("Terraform Enterprise");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("requires a token on the ping like every API request", async () => {
    const res = await api("GET", "/ping", { token: null });
    expect(res.status).toBe(401);
    expect(res.body.errors[0]).toEqual({ status: "401", title: "unauthorized" });
    // go-tfe ignores the ping's status but still needs the version header.
    expect(res.headers.get("TFP-API-Version")).toBeTruthy();
  });

  it("tells the site admin who it is", async () => {
    const res = await api("GET", "/account/details");
    expect(res.status).toBe(200);
    expect(res.body.data.type).toBe("users");
    expect(res.body.data.attributes["is-site-admin"]).toBe(true);
    expect(res.body.data.relationships["authenticated-resource"].data).toEqual({ id: res.body.data.id, type: "users" });
  });

  it("reports operations once an agent serves the default pool (AGENT_TOKEN, set in the tests' Worker)", async () => {
    const org = await createOrg();
    const res = await api("GET", `/organizations/${org}/entitlement-set`);
    expect(res.status).toBe(200);
    expect(res.body.data.type).toBe("entitlement-sets");
    expect(res.body.data.attributes.operations).toBe(true);
    expect(res.body.data.attributes["state-storage"]).toBe(true);
  });

  it("reports entitlements that make Terraform run operations locally when no agent token is configured", async () => {
    const org = await createOrg();
    const req = new Request(`http://localhost/api/v2/organizations/${org}/entitlement-set`, { headers: { Authorization: `Bearer ${ADMIN}` } });
    const res = await app.fetch(req, { ...env, AGENT_TOKEN: undefined });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { attributes: Record<string, unknown> } };
    expect(body.data.attributes.operations).toBe(false);
    expect(body.data.attributes["state-storage"]).toBe(true);
  });

  it("answers unknown paths with a JSON:API 404", async () => {
    const res = await api("GET", "/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });
});

describe("organisations", () => {
  it("creates an organisation with its owners team and Default Project, and refuses a duplicate", async () => {
    const org = await createOrg();
    const res = await api("GET", `/organizations/${org}`);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(org);
    expect(res.body.data.attributes["external-id"]).toMatch(/^org-/);
    expect(res.body.data.relationships["default-project"].data.type).toBe("projects");
    const dup = await api("POST", "/organizations", { body: { data: { type: "organizations", attributes: { name: org, email: "x@y.z" } } } });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0].detail).toBe("Name has already been taken");
  });

  it("deletes an organisation with everything in it", async () => {
    const org = await createOrg();
    const ws = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: "w1" } } } });
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    expect((await api("GET", `/organizations/${org}`)).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.body.data.id}`)).status).toBe(404);
    // The name is free again, and a new organisation of that name does not see the old workspace.
    await createOrg(undefined, org);
    expect((await api("GET", `/workspaces/${ws.body.data.id}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/w1`)).status).toBe(404);
  });

  it("validates organisation attributes", async () => {
    const bad = await api("POST", "/organizations", { body: { data: { type: "organizations", attributes: { name: "bad name", email: "x@y.z" } } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/name");
    const noEmail = await api("POST", "/organizations", { body: { data: { type: "organizations", attributes: { name: "ok-name" } } } });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.errors[0].source.pointer).toBe("/data/attributes/email");
  });
});

describe("browser clients", () => {
  it("answers CORS preflights without a token and exposes the request id", async () => {
    const res = await exports.default.fetch(
      new Request("http://localhost/api/v2/workspaces/ws-x", {
        method: "OPTIONS",
        headers: { Origin: "https://portal.example", "Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "authorization,content-type" },
      }),
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Allow-Methods")).toContain("PATCH");
    const get = await exports.default.fetch(
      new Request("http://localhost/api/v2/ping", { headers: { Origin: "https://portal.example", Authorization: "Bearer test-admin-token" } }),
    );
    expect(get.headers.get("Access-Control-Expose-Headers")).toContain("X-Request-Id");
    expect(get.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });
});
