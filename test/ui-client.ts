// The web UI as a browser reaches it, for HTTP tests: form posts from the page's origin, cookies by hand.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "./fixtures";
import type { ApiResponse } from "./helpers";

export const ORIGIN = "http://localhost";

export async function ui(method: string, path: string, opts: { cookie?: string; form?: Record<string, string | string[]>; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.Cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    // A field given several values is sent once for each (checkboxes, multiple selects).
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.form)) for (const one of [v].flat()) params.append(k, one);
    body = params.toString();
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  if (method !== "GET" && opts.origin !== null) headers.Origin = opts.origin ?? ORIGIN;
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return {
    status: res.status,
    headers: res.headers,
    location: res.headers.get("Location"),
    cookie: res.headers.get("Set-Cookie") ?? "",
    text: await res.text(),
  };
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

/** Signs in a user of a new team of `org` that holds these workspace grants (workspace id → access); the cookie. */
export async function memberCookie(org: string, grants: Record<string, string>): Promise<string> {
  const team = await makeTeam(org);
  for (const [ws, access] of Object.entries(grants)) await grantWorkspace(team.id, ws, access);
  const user = await makeUser({ teams: [team.id] });
  return signIn(user.token);
}

/** Text as a page shows it in HTML (`&`, `<`, `>` and quotes escaped). */
export const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/**
 * A form post the API's rules refuse: the API answered `fromApi` with 422, and the page refuses `form` posted to
 * `path` with 422 too, showing the API's detail (in the box `errorsId` when given). The page, for more checks.
 */
export async function refusedAsTheApi(cookie: string, fromApi: ApiResponse, path: string, form: Record<string, string>, errorsId?: string) {
  expect(fromApi.status).toBe(422);
  const page = await ui("POST", path, { cookie, form });
  expect(page.status).toBe(422);
  if (errorsId) expect(page.text).toContain(`id="${errorsId}"`);
  expect(page.text).toContain(escapeHtml(fromApi.body.errors[0].detail));
  return page;
}
