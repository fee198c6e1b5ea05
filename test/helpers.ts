import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import schema from "./jsonapi/schema-1.0-relaxed.json";
import { assertDocumented } from "./openapi-responses";

export const ADMIN = "test-admin-token";
const BASE = "http://localhost/api/v2";

const validator = new Validator(schema as object, "7", false);

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test documents are checked structurally
  text: string;
}

/**
 * Sends a request to the Worker; bodies are JSON:API unless `raw`/`contentType` say otherwise. `edition`:
 * the Worker with EDITION set to it (the tests' wrangler.toml runs the self-hosted edition), same stores.
 */
export async function api(
  method: string,
  path: string,
  opts: {
    token?: string | null;
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    contentType?: string;
    edition?: "hosted" | "self-hosted";
  } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { Accept: "application/vnd.api+json", ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/vnd.api+json";
  const url = path.startsWith("http") ? path : `${BASE}${path}`;
  const req = new Request(url, { method, headers, body });
  const res = opts.edition ? await (await import("../src/index")).app.fetch(req, { ...env, EDITION: opts.edition }) : await exports.default.fetch(req);
  const text = await res.text();
  let parsed: unknown = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  const out = { status: res.status, headers: res.headers, body: parsed, text };
  // Every JSON:API response of every test is checked against the relaxed 1.0 schema.
  if ((res.headers.get("Content-Type") ?? "").startsWith("application/vnd.api+json")) {
    assertJsonApi(out);
    // ... and every 2xx one against its route's response schema in openapi.json.
    assertDocumented(method, url, out);
  }
  return out;
}

/** Every API response with a body must be a valid JSON:API document (relaxed 1.0 schema). */
export function assertJsonApi(res: ApiResponse): void {
  if (res.text.length === 0) return;
  const result = validator.validate(res.body);
  if (!result.valid) {
    throw new Error(`not a JSON:API document (${res.status}): ${JSON.stringify(result.errors.slice(0, 3))}\n${res.text.slice(0, 500)}`);
  }
}

let counter = 0;
export function uniqueName(prefix = "t"): string {
  counter++;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export async function createOrg(token: string = ADMIN, name = uniqueName("org")): Promise<string> {
  const res = await api("POST", "/organizations", {
    token,
    body: { data: { type: "organizations", attributes: { name, email: "owner@example.com" } } },
  });
  if (res.status !== 201) throw new Error(`createOrg: ${res.status} ${res.text}`);
  return name;
}

export async function createWorkspace(org: string, attributes: Record<string, unknown> = {}, token: string = ADMIN, relationships?: unknown) {
  const res = await api("POST", `/organizations/${org}/workspaces`, {
    token,
    body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), ...attributes }, ...(relationships ? { relationships } : {}) } },
  });
  if (res.status !== 201) throw new Error(`createWorkspace: ${res.status} ${res.text}`);
  return res.body.data as { id: string; attributes: Record<string, any>; relationships: Record<string, any> };
}
