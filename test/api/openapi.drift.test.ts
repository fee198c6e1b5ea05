import { describe, expect, it } from "vitest";
import committed from "../../openapi.json";
import { app } from "../../src/index";
import { openApiDocument } from "../../src/openapi";
import { UI_ROUTE_ACTIONS } from "../../src/ui/ui.requirements";
import { api } from "../helpers";

/** Routes served outside the documented API on purpose. */
const UNDOCUMENTED = new Set([
  "GET /.well-known/terraform.json",
  "GET /api/v2/openapi.json",
  // Signed state-blob URLs: raw bytes, no token; handed out inside state-version documents.
  "PUT /_blobs/:ws/:sv/:kind",
  "GET /_blobs/:ws/:sv/:kind",
  // The web UI's HTML pages and forms (src/ui/), declared in their own requirement table.
  ...Object.keys(UI_ROUTE_ACTIONS),
]);

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, "{$1}");

describe("OpenAPI document", () => {
  it("is the committed openapi.json (run `npm run openapi` after changing routes)", () => {
    expect(JSON.parse(JSON.stringify(openApiDocument(app)))).toEqual(committed);
  });

  it("documents every served route and serves every documented one", () => {
    const served = new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && !r.path.endsWith("*"))
        .map((r) => `${r.method} ${toOpenApiPath(r.path)}`)
        .filter((r) => !UNDOCUMENTED.has(r.replace(/\{([A-Za-z_]+)\}/g, ":$1")) && !UNDOCUMENTED.has(r)),
    );
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(committed.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...served].filter((r) => !documented.has(r)).sort()).toEqual([]);
    expect([...documented].filter((r) => !served.has(r)).sort()).toEqual([]);
  });

  it("is served publicly at /api/v2/openapi.json", async () => {
    const res = await api("GET", "/openapi.json", { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
  });
});
