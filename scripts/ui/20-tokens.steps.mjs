// Browser steps of the tokens page (/app/settings/tokens) and `terraform login`'s authorization page
// (/app/oauth/authorize): create a token and see its secret once, revoke it, a refused expiry, approve and deny.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { listen, readJson } from "../lib/harness.mjs";

const b64url = (buf) => buf.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export default async function (h) {
  const { step, check, api, newPage, audit, submit, takeRefusalLog, signedIn, post, service } = h;
  const base = service.base;
  let user = null; // { id, token }
  let page = null;

  await step("tokens: a user's tokens page (create, secret shown once, listed, revoked)", async () => {
    const username = `tokens-${Date.now().toString(36)}`;
    const created = await api("POST", "/admin/users", { data: { type: "users", attributes: { username, email: `${username}@example.com` } } });
    const id = created.data.id;
    const first = await api("POST", `/users/${id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "first" } } });
    user = { id, token: first.data.attributes.token };
    page = await signedIn(user.token);
    await page.goto(`${base}/app/settings/tokens`);
    check((await page.$$("tr[data-token]")).length === 1, "the page does not list the user's one token");
    await audit(page, "tokens");
    await page.fill("#t-description", "browser token");
    await submit(page, "#create-token", "/app/settings/tokens");
    const secret = await page.inputValue("#secret");
    check(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/.test(secret), `the answer page shows no token secret (${secret.slice(0, 20)}…)`);
    await audit(page, "token-created");
    const me = await api("GET", "/account/details", undefined, secret);
    check(me.data.id === user.id, "the new secret does not act as the user");
    await page.goto(`${base}/app/settings/tokens`);
    check(!(await page.content()).includes(secret), "the list page shows the secret again");
    const listed = (await api("GET", `/users/${user.id}/authentication-tokens`, undefined, user.token)).data;
    const browserToken = listed.find((t) => t.attributes.description === "browser token");
    check(browserToken, "the API does not list the created token");
    check((await page.$$("tr[data-token]")).length === listed.length, "the page and the API list different tokens");
    await submit(page, `tr[data-token="${browserToken.id}"] button`, `/app/settings/tokens/${browserToken.id}/delete`);
    check(!(await page.$(`tr[data-token="${browserToken.id}"]`)), "the revoked token is still listed");
    const after = await fetch(`${base}/api/v2/account/details`, { headers: { Authorization: `Bearer ${secret}` } });
    check(after.status === 401, `the revoked token still answers ${after.status}`);
  });

  await step("tokens: a past expiry is refused next to the form (422); another user's token cannot be revoked by a forged POST", async () => {
    await page.goto(`${base}/app/settings/tokens`);
    await page.fill("#t-description", "too old");
    await page.fill("#t-expires", "2001-01-01");
    await submit(page, "#create-token", "/app/settings/tokens");
    await takeRefusalLog(page);
    const reason = await page.textContent("#create-errors");
    check(reason.includes("Expired at must be a date in the future"), `the refusal says: ${reason}`);
    await audit(page, "tokens-refused");
    // Another user's token: not found for this user's session, and still working afterwards.
    const otherName = `tokens-other-${Date.now().toString(36)}`;
    const other = (await api("POST", "/admin/users", { data: { type: "users", attributes: { username: otherName, email: `${otherName}@example.com` } } })).data;
    const otherToken = (await api("POST", `/users/${other.id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: {} } })).data;
    const status = await post(page, `/app/settings/tokens/${otherToken.id}/delete`, {});
    check(status === 404, `a forged revoke of another user's token answered ${status}`);
    check((await api("GET", "/account/details", undefined, otherToken.attributes.token)).data.id === other.id, "the other user's token stopped working");
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${base}/app/settings/tokens`);
    await audit(page, "tokens");
    await page.fill("#t-expires", "2001-01-01");
    await submit(page, "#create-token", "/app/settings/tokens");
    await takeRefusalLog(page);
    await audit(page, "tokens-refused");
    await page.fill("#t-expires", "");
    await page.fill("#t-description", "phone token");
    await submit(page, "#create-token", "/app/settings/tokens");
    await audit(page, "token-created");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  await step("login: the authorization page asks, approve redirects with a code the token endpoint exchanges, deny with access_denied", async () => {
    const verifier = `${randomUUID()}.${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;
    const challenge = b64url(createHash("sha256").update(verifier).digest());
    const state = b64url(randomBytes(16));
    const redirect = "http://localhost:10007/login";
    const q = new URLSearchParams({
      client_id: "terraform-cli",
      redirect_uri: redirect,
      response_type: "code",
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    // Not signed in: through sign-in and back.
    const fresh = await newPage();
    await fresh.goto(`${base}/app/oauth/authorize?${q}`);
    check(new URL(fresh.url()).pathname === "/app/session/new", `not signed in, the page went to ${fresh.url()}`);
    await fresh.fill("#token", user.token);
    await Promise.all([fresh.waitForURL((u) => u.pathname === "/app/oauth/authorize"), fresh.press("#token", "Enter")]);
    await audit(fresh, "login-authorize");
    // A stand-in for Terraform's listener on the callback port (a redirect's target is not something a page route sees).
    /** @type {URL | null} */
    let callback = null;
    const listener = createServer((req, res) => {
      // Only the callback counts: the browser may ask this origin for /favicon.ico right after it.
      const url = new URL(req.url, "http://localhost:10007");
      if (url.pathname === "/login") callback = url;
      res.writeHead(200, { "Content-Type": "text/html" }).end("<!doctype html><html lang=en><title>ok</title><p>ok</p></html>");
    });
    await listen(listener, 10007);
    await Promise.all([fresh.waitForURL((u) => u.port === "10007"), fresh.click("#approve")]);
    check(callback?.searchParams.get("state") === state, `the callback's state is ${callback?.searchParams.get("state")}`);
    const code = callback.searchParams.get("code");
    check(code, `the callback carries no code: ${callback}`);
    const res = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: "terraform-cli", code_verifier: verifier }),
    });
    const body = await readJson(res);
    check(res.status === 200 && body.access_token, `the exchange answered ${res.status}: ${JSON.stringify(body)}`);
    check((await api("GET", "/account/details", undefined, body.access_token)).data.id === user.id, "the minted token does not act as the user");
    // Deny.
    callback = null;
    await fresh.goto(`${base}/app/oauth/authorize?${q}`);
    await Promise.all([fresh.waitForURL((u) => u.port === "10007"), fresh.click("#deny")]);
    check(callback?.searchParams.get("error") === "access_denied" && !callback.searchParams.get("code"), `deny's callback: ${callback}`);
    // A bad redirect: an error page, no redirect.
    const bad = new URLSearchParams(q);
    bad.set("redirect_uri", "http://localhost:9999/login");
    const refused = await fresh.goto(`${base}/app/oauth/authorize?${bad}`);
    check(refused.status() === 400 && new URL(fresh.url()).port !== "9999", `a port outside the range answered ${refused.status()} at ${fresh.url()}`);
    fresh.errors = fresh.errors.filter((e) => !e.includes("status of 400"));
    await audit(fresh, "login-refused");
    await fresh.context().close();
    listener.close();
    const phone = await signedIn(user.token, { width: 360, height: 740 });
    await phone.goto(`${base}/app/oauth/authorize?${q}`);
    await audit(phone, "login-authorize");
    await phone.goto(`${base}/app/oauth/authorize?${bad}`);
    phone.errors = phone.errors.filter((e) => !e.includes("status of 400"));
    await audit(phone, "login-refused");
    await phone.context().close();
    await page.context().close();
  });
}
