import { describe, expect, it } from "vitest";
import committed from "../../openapi.json";
import { app } from "../../src/index";
import { openApiDocument } from "../../src/jsonapi/openapi";
import { UI_ROUTE_ACTIONS } from "../../src/ui/define-page";
import { api } from "../helpers";

/** Routes served outside the documented API on purpose. */
const UNDOCUMENTED = new Set([
  "GET /.well-known/terraform.json",
  "GET /api/v2/openapi.json",
  // `terraform login`'s token endpoint (login.v1): OAuth 2.0, form-encoded, no token.
  "POST /oauth/token",
  // Signed state-blob URLs: raw bytes, no token; handed out inside state-version documents.
  "PUT /_blobs/:ws/:sv/:kind",
  "GET /_blobs/:ws/:sv/:kind",
  // Signed configuration-archive URLs, likewise: handed out by a configuration version's create and download.
  "PUT /_slugs/:ws/:cv",
  "GET /_slugs/:ws/:cv",
  // VCS deliveries (src/vcs/): the host's own payloads, signed with the hook's secret, no token.
  "POST /webhooks/vcs/:hookId",
  // A run task integration's callback (src/run-tasks/run-tasks.signed.routes.ts): the task request's access token, no API token.
  "PATCH /api/v2/task-results/:id/callback",
  // Signed run-log and plan-artifact URLs, likewise: handed out in plans and applies and by the JSON plan redirects.
  "GET /_logs/:ws/:run/:phase/:token",
  "GET /_artifacts/:ws/:run/:kind/:token",
  // Signed registry object URLs (src/registry/): raw bytes, no token; handed out as upload links and download locations.
  "PUT /_registry/object/:kind/:id",
  "GET /_registry/object/:kind/:id",
  // The private agent protocol (docs/runs.md): agent and run tokens, plain JSON and raw bytes.
  "POST /api/agent/register",
  "POST /api/agent/agents/:agent_id/status",
  "POST /api/agent/agents/:agent_id/jobs/next",
  "GET /api/agent/jobs/:run/:phase/configuration",
  "GET /api/agent/jobs/:run/:phase/artifacts/:kind",
  "PUT /api/agent/jobs/:run/:phase/artifacts/:kind",
  "POST /api/agent/jobs/:run/:phase/logs",
  "POST /api/agent/jobs/:run/:phase/heartbeat",
  "POST /api/agent/jobs/:run/:phase/finish",
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

  it("describes every 2xx response with a body by its resource's own schema, never a generic document", () => {
    type Schema = { $ref?: string; type?: string; items?: Schema; enum?: string[]; properties?: Record<string, Schema>; additionalProperties?: unknown };
    const schemas = committed.components.schemas as unknown as Record<string, Schema>;
    const deref = (s: Schema | undefined) => (s?.$ref ? schemas[s.$ref.replace("#/components/schemas/", "")] : s);
    const generic: string[] = [];
    let described = 0;
    for (const [path, ops] of Object.entries(
      committed.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>,
    )) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (!status.startsWith("2")) continue;
          const key = `${method.toUpperCase()} ${path} ${status}`;
          if (status === "204") {
            if (response.content) generic.push(`${key}: a 204 with a body`);
            continue;
          }
          // An accepted action with no body (the real API's 202s: archive, run actions).
          if (status === "202" && !response.content) continue;
          // Terraform's registry protocols answer plain JSON documents of their own, each described by a closed schema.
          const plain = deref(response.content?.["application/json"]?.schema);
          if (plain && !response.content?.["application/vnd.api+json"]) {
            if (plain.additionalProperties !== false || !Object.keys(plain.properties ?? {}).length) generic.push(key);
            else described++;
            continue;
          }
          const document = deref(response.content?.["application/vnd.api+json"]?.schema);
          const data = deref(document?.properties?.data);
          const resource = deref(data?.type === "array" ? data.items : data);
          const attributes = resource?.properties?.attributes;
          // A resource schema names its type and exactly its attributes (test/openapi-responses.ts holds responses to them).
          if (!resource?.properties?.type?.enum?.length || attributes?.additionalProperties !== false || !Object.keys(attributes.properties ?? {}).length) {
            generic.push(key);
          } else described++;
        }
      }
    }
    expect(generic).toEqual([]);
    expect(described).toBeGreaterThan(100);
  });

  it("is served publicly at /api/v2/openapi.json", async () => {
    const res = await api("GET", "/openapi.json", { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
  });
});
