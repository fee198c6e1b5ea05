// The web UI as a browser reaches it, for HTTP tests: form posts from the page's origin, cookies by hand.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "./fixtures";

export const ORIGIN = "http://localhost";

export async function ui(method: string, path: string, opts: { cookie?: string; form?: Record<string, string>; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.Cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    body = new URLSearchParams(opts.form).toString();
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  if (method !== "GET" && opts.origin !== null) headers.Origin = opts.origin ?? ORIGIN;
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Signs in by pasting a token; the session cookie to send. */
export async function signIn(token: string): Promise<string> {
  const res = await ui("POST", "/app/session", { form: { token } });
  expect(res.status).toBe(303);
  const m = /ws_session=([^;]+)/.exec(res.headers.get("Set-Cookie") ?? "");
  if (!m) throw new Error("no session cookie");
  return `ws_session=${m[1]}`;
}

/**
 * A workspace of a new owner's organisation and a team that may only read it, signed in: the reader's cookie and the
 * path of the workspace's page `tab`.
 */
export async function workspaceReaderPage(tab: string) {
  const owner = await makeUser();
  const org = await createOrg(owner.token);
  const ws = await createWorkspace(org, {}, owner.token);
  const reader = await makeTeam(org);
  await grantWorkspace(reader.id, ws.id, "read");
  const cookie = await signIn(reader.token);
  return { org, ws, cookie, path: `/app/${org}/workspaces/${ws.attributes.name}/${tab}` };
}
