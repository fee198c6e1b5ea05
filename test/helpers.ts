// What every HTTP test uses: the request helper (each JSON:API response is checked against the schema), and checks
// of the state afterwards. Seeds live in test/fixtures.ts.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { expect } from "vitest";
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
/**
 * Workspaces a test connected to a repository (seen in the API's answers). Their objects keep retrying a host the test
 * has no fake for (or no longer has) from their alarms; test/no-network.ts clears those alarms when the file ends, as
 * an alarm firing after its file's storage is gone stalls the pool.
 */
export const CONNECTED_WORKSPACES = new Set<string>();

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
  const data = (parsed as { data?: { id?: unknown; type?: unknown; attributes?: Record<string, unknown> } } | null)?.data;
  if (data?.type === "workspaces" && typeof data.id === "string" && data.attributes?.["vcs-repo"]) CONNECTED_WORKSPACES.add(data.id);
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

/** The resource a create answered with: a 201, its id the prefix and at least 16 letters and digits, of `type`. */
export function createdResource(res: ApiResponse, type: string, idPrefix: string) {
  expect(res.status).toBe(201);
  const data = res.body.data;
  expect(data.id).toMatch(new RegExp(`^${idPrefix}-[A-Za-z0-9]{16,}$`));
  expect(data.type).toBe(type);
  return data;
}

let counter = 0;
export function uniqueName(prefix = "t"): string {
  counter++;
  return `${prefix}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** SHA-256 as hex, computed apart from the service's own helper, to check what it stores for a secret. */
export async function sha256(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Runs every pending outbox alarm, then walks the checker's pages and expects no difference. */
export async function expectConsistent(): Promise<number> {
  const ids = await env.DB.prepare("SELECT id FROM workspaces UNION SELECT workspace_id FROM workspace_names").all<{ id: string }>();
  for (const { id } of ids.results) await runDurableObjectAlarm(env.WORKSPACES.getByName(id));
  let cursor = "";
  let checked = 0;
  for (;;) {
    const res = await api("GET", `/admin/consistency?page%5Bsize%5D=100&cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    checked += res.body.meta.checked;
    if (!res.body.meta["next-cursor"]) return checked;
    cursor = res.body.meta["next-cursor"];
  }
}

/**
 * Waits until each workspace's object has finished the index writes it started. Lock, unlock and the state path
 * answer before their index write (docs/consistency.md), so a test that lists right after one waits here rather than
 * on timing. A write that failed stays failed (no retry here: the alarm's is tested where it matters).
 */
export async function indexSettled(...workspaceIds: string[]): Promise<void> {
  for (const id of workspaceIds) {
    await runInDurableObject(env.WORKSPACES.getByName(id), (object) => (object as unknown as { flushChain: Promise<void> }).flushChain);
  }
}
