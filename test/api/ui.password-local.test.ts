// Failed password sign-ins on a local run, where every client shares one address (the connection is loopback and the
// CF-Connecting-IP header is the client's to choose): a browser that signed in to an account before keeps a budget of
// its own, so no other client's failures lock it out, while every other client is held back as before. Its own file:
// it spends the one local address's budget.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const ORIGIN = "http://localhost";

async function ui(method: string, path: string, opts: { cookie?: string; form?: Record<string, string>; ip?: string } = {}) {
  const headers: Record<string, string> = {};
  // Locally the header proves nothing: clients may send any, and all share one budget whatever they send.
  if (opts.ip) headers["CF-Connecting-IP"] = opts.ip;
  if (opts.cookie) headers.Cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    body = new URLSearchParams(opts.form).toString();
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  if (method !== "GET") headers.Origin = ORIGIN;
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The cookies a response set, as a Cookie header (name=value; ...). */
const cookiesOf = (res: { headers: Headers }) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

const signIn = (login: string, password: string, opts: { cookie?: string; ip?: string } = {}) =>
  ui("POST", "/app/session/password", { form: { username: login, password }, ...opts });

async function personWithPassword(password: string) {
  const user = await makeUser();
  const admin = cookiesOf(await ui("POST", "/app/session", { form: { token: "test-admin-token" } }));
  const made = await ui("POST", `/app/admin/users/${user.id}/reset-link`, { cookie: admin });
  const link = /<code id="new-link">http:\/\/localhost(\/app\/password\/[A-Za-z0-9]+)<\/code>/.exec(made.text)![1];
  expect((await ui("POST", link, { form: { password, password_confirmation: password } })).status).toBe(303);
  const username = (await api("GET", "/account/details", { token: user.token })).body.data.attributes.username as string;
  return { ...user, username };
}

describe("failed sign-ins on a local run", () => {
  it("lock out neither a browser that signed in before nor its account there; everyone else waits as before", async () => {
    const p = await personWithPassword("local password");
    // Alice's browser signed in before: it keeps the cookies it was given.
    const first = await signIn(p.username, "local password");
    expect(first.status).toBe(303);
    const alice = cookiesOf(first);

    // Another local client guesses: five failures on the account, then twenty on others, whatever address it claims.
    for (let i = 0; i < 5; i++) expect((await signIn(p.username, `guess ${i}`, { ip: `10.0.0.${i}` })).status).toBe(401);
    const guessed = await signIn(p.username, "local password", { ip: "10.0.1.1" });
    expect(guessed.status).toBe(429);
    expect(guessed.headers.getSetCookie()).toEqual([]);
    for (let i = 0; i < 20; i++) await signIn(`nobody-${uniqueName("x")}`, "guess", { ip: `10.0.2.${i}` });
    const other = await personWithPassword("other password");
    expect((await signIn(other.username, "other password")).status).toBe(429);

    // Alice's browser still signs in, by username and by e-mail.
    const back = await signIn(p.username, "local password", { cookie: alice });
    expect(back.status).toBe(303);
    expect(back.headers.get("Location")).toBe("/app");
    expect((await ui("GET", "/app", { cookie: cookiesOf(back) })).status).toBe(200);
    expect((await signIn(`${p.id}@example.com`, "local password", { cookie: alice })).status).toBe(303);

    // The guesser gained nothing: the account and the address still wait for it, even with the right password.
    expect((await signIn(p.username, "local password")).status).toBe(429);
    // Nor does another account's device cookie help it.
    expect((await signIn(other.username, "other password", { cookie: alice })).status).toBe(429);
    // Alice's browser has a budget of its own, which its own failures spend: five, and it waits too.
    for (let i = 0; i < 5; i++) expect((await signIn(p.username, `typo ${i}`, { cookie: alice })).status).toBe(401);
    const own = await signIn(p.username, "local password", { cookie: alice });
    expect(own.status).toBe(429);
    expect(own.text).toContain("Too many failed sign-ins");
    // What made it known: a device cookie scripts cannot read, sent to this site's pages only.
    const device = first.headers.getSetCookie().find((c) => c.startsWith("ws_device="));
    expect(device).toMatch(/HttpOnly/i);
    expect(device).toMatch(/SameSite=Strict/i);
    expect(device).toMatch(/Path=\/app/);
  });
});
