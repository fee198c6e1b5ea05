// Single sign-on in the browser, against the real OpenID Connect provider the suite starts (scripts/lib/oidc-idp.mjs):
// a person signs in through "Sign in with SSO", is made a user on the way and a member of the teams its groups name
// (by a team's SSO team id or its name); at the next sign-in its memberships follow its groups; and `terraform login`'s
// approval page, reached through SSO, hands Terraform a token that is that person's. The service's pages on the way
// are audited at 1280 and 360 px (the provider's own pages are not ours to audit).
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { readJson } from "../lib/harness.mjs";

export default async function (h) {
  const { step, check, api, newPage, audit, service, idp, ORG } = h;
  const base = service.base;
  const suffix = randomBytes(3).toString("hex");

  /** From a page on its way to the provider: the provider's login and consent forms, until the service answers again. */
  async function throughProvider(page, subject) {
    for (let i = 0; i < 10 && !page.url().startsWith(base); i++) {
      if (await page.$("input[name=login]")) {
        await page.fill("input[name=login]", subject);
        await page.fill("input[name=password]", "any");
        await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      } else if (await page.$("form button[type=submit]")) {
        await Promise.all([page.waitForNavigation(), page.click("form button[type=submit]")]);
      } else {
        await page.waitForNavigation({ timeout: 5000 }).catch(() => undefined);
      }
    }
    check(page.url().startsWith(base), `the provider did not send the browser back: at ${page.url()}`);
    // The callback answers with a page that moves on at once; wait for where it leads.
    await page.waitForURL((u) => !u.pathname.startsWith("/app/sso/"), { timeout: 10_000 });
    page.errors = []; // the provider's pages are not ours
  }

  async function ssoSignIn(subject, viewport) {
    const page = await newPage(viewport);
    await page.goto(`${base}/app/session/new`);
    await audit(page, "sso-sign-in");
    await Promise.all([page.waitForURL((u) => !u.href.startsWith(base)), page.click("#sso-sign-in")]);
    await throughProvider(page, subject);
    return page;
  }

  const memberNames = async (teamId) =>
    ((await api("GET", `/teams/${teamId}?include=users`)).included ?? []).filter((x) => x.type === "users").map((x) => x.attributes.username);
  const team = async (name, ssoTeamId) =>
    (
      await api("POST", `/organizations/${ORG}/teams`, {
        data: { type: "teams", attributes: { name, ...(ssoTeamId ? { "sso-team-id": ssoTeamId } : {}), "organization-access": { "read-workspaces": true } } },
      })
    ).data.id;

  const devsName = `sso-devs-${suffix}`;
  const opsGroup = `grp-sso-ops-${suffix}`;
  let devs;
  let ops;
  const who = `sso-erin-${suffix}`;

  await step("sso: a person signs in with SSO, is made a user and joins the teams its groups name", async () => {
    devs = await team(devsName);
    ops = await team(`sso-ops-${suffix}`, opsGroup);
    idp.people[`sub-${who}`] = { email: `${who}@corp.example`, preferred_username: who, groups: [devsName, "a-group-no-team-names"] };
    const page = await ssoSignIn(`sub-${who}`);
    check(new URL(page.url()).pathname === "/app", `after SSO the browser is at ${page.url()}`);
    check((await page.textContent("body")).includes(who), "the home page does not name the signed-in person");
    await audit(page, "sso-home");
    const phone = await ssoSignIn(`sub-${who}`, { width: 360, height: 780 });
    await audit(phone, "sso-home");
    check((await memberNames(devs)).includes(who), `${who} is not in ${devsName} (matched by name)`);
    check(!(await memberNames(ops)).includes(who), `${who} is in the ops team without its group`);
    const ws = (await api("GET", `/organizations/${ORG}/workspaces?page[size]=1`)).data;
    if (ws.length) {
      await page.goto(`${base}/app/${ORG}/workspaces`);
      check((await page.$$("tr[data-workspace]")).length > 0, "a member with read-workspaces sees no workspace");
    }
    await page.context().close();
    await phone.context().close();
  });

  await step("sso: at the next sign-in the memberships follow the groups (a team's SSO team id matched)", async () => {
    idp.people[`sub-${who}`].groups = [opsGroup];
    const page = await ssoSignIn(`sub-${who}`);
    check(!(await memberNames(devs)).includes(who), `${who} stayed in ${devsName} after leaving its group`);
    check((await memberNames(ops)).includes(who), `${who} did not join the team whose sso-team-id is ${opsGroup}`);
    await page.context().close();
  });

  await step("sso: terraform login's approval page, reached through SSO, gives Terraform that person's token", async () => {
    const dave = `sso-dave-${suffix}`;
    idp.people[`sub-${dave}`] = { email: `${dave}@corp.example`, preferred_username: dave };
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      client_id: "terraform-cli",
      redirect_uri: "",
      response_type: "code",
      state: `tf-${suffix}`,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    });
    // Terraform's own listener receives the code on one of the ports its OAuth client names (10000-10010).
    /** @type {URL | null} */
    let landed = null;
    const listener = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname === "/login") landed = url; // not the browser's favicon request that follows
      res.end("Terraform has the code.");
    });
    let port = 10000;
    for (; ; port++) {
      const bound = await new Promise((resolve) => listener.once("error", () => resolve(false)).listen(port, "127.0.0.1", () => resolve(true)));
      if (bound) break;
      check(port < 10010, "no port of 10000-10010 is free for Terraform's listener");
    }
    const redirectUri = `http://localhost:${port}/login`;
    query.set("redirect_uri", redirectUri);
    const page = await newPage();
    await page.goto(`${base}/app/oauth/authorize?${query}`);
    check(new URL(page.url()).pathname === "/app/session/new", `an unsigned visitor is at ${page.url()}`);
    await Promise.all([page.waitForURL((u) => !u.href.startsWith(base)), page.click("#sso-sign-in")]);
    await throughProvider(page, `sub-${dave}`);
    check(new URL(page.url()).pathname === "/app/oauth/authorize", `after SSO the browser is at ${page.url()}, not the approval page`);
    await audit(page, "sso-terraform-login-approval");
    await Promise.all([page.waitForURL(`http://localhost:${port}/**`), page.click("#approve")]);
    listener.close();
    check(landed?.searchParams.get("state") === `tf-${suffix}`, `Terraform's listener got ${landed}`);
    const token = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: landed.searchParams.get("code") ?? "",
        client_id: "terraform-cli",
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }).toString(),
    }).then(readJson);
    check(typeof token.access_token === "string", `the token exchange answered ${JSON.stringify(token).slice(0, 200)}`);
    const me = await api("GET", "/account/details", undefined, token.access_token);
    check(me.data.attributes.username === dave, `Terraform's token belongs to ${me.data.attributes.username}, not ${dave}`);
    await page.context().close();
  });
}
