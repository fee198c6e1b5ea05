// Two-factor authentication in the browser: a newcomer (a site admin's new user, its password set through the reset
// link made on its user page) creates an organisation at /app, enrols an authenticator (the code computed here from
// the secret the page shows), and signs in again with password and code; a wrong code is refused. Every new page is
// audited at 1280 and 360 px.
import { Secret, TOTP } from "otpauth";

const PASSWORD = "two factor pw 0001";

export default async function (h) {
  const { step, check, api, newPage, audit, submit, takeRefusalLog, takeStatusLog, passwordSignIn, signedIn, service } = h;
  const base = service.base;
  const codeAt = (secret, ms) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: ms });

  const username = `tf-${Date.now()}`;
  let user;
  let secret;
  let page;

  await step("two-factor: a site admin's new user gets a password through the link made on its user page", async () => {
    user = (await api("POST", "/admin/users", { data: { type: "users", attributes: { username, email: `${username}@example.com` } } })).data;
    const admin = await signedIn(service.token);
    await admin.goto(`${base}/app/admin/users?q=${username}`);
    check((await admin.textContent("#total")).trim() === "1 users", `search: ${await admin.textContent("#total")}`);
    await audit(admin, "tf-admin-users-search");
    await Promise.all([admin.waitForURL(`${base}/app/admin/users/${user.id}`), admin.click(`a[href="/app/admin/users/${user.id}"]`)]);
    check((await admin.textContent("#user-two-factor")) === "off", "two-factor shown on");
    await audit(admin, "tf-admin-user");
    await submit(admin, "button:has-text('Make a reset link')", `/app/admin/users/${user.id}/reset-link`);
    const link = (await admin.textContent("#new-link")).trim();
    await admin.context().close();
    page = await newPage();
    await page.goto(link);
    await page.fill("#new-password", PASSWORD);
    await page.fill("#password-confirmation", PASSWORD);
    await submit(page, "#set-password", new URL(link).pathname);
    check(page.url() === `${base}/app`, `after setting the password: ${page.url()}`);
  });

  await step("two-factor: the newcomer creates an organisation at /app", async () => {
    check((await page.textContent("main")).includes("You belong to no organisation"), "not a newcomer's page");
    await audit(page, "tf-newcomer");
    await page.fill("#new-org-name", "bad name!");
    await page.fill("#new-org-email", `${username}@example.com`);
    await submit(page, "#create-organization", "/app/organizations");
    await takeRefusalLog(page);
    check((await page.textContent("#new-organization-errors")).includes("Name is invalid"), "no reason shown");
    await page.fill("#new-org-name", `${username}-org`);
    await submit(page, "#create-organization", "/app/organizations");
    check(page.url() === `${base}/app/${username}-org/workspaces`, `after creating: ${page.url()}`);
    const org = await api("GET", `/organizations/${username}-org`);
    check(org.data.attributes.email === `${username}@example.com`, "the organisation is not there");
  });

  await step("two-factor: enrol an authenticator; the recovery codes are shown once", async () => {
    await Promise.all([page.waitForURL(`${base}/app/settings/two-factor`), page.click('a[href="/app/settings/two-factor"]')]);
    await audit(page, "tf-off");
    await submit(page, "#enrol", "/app/settings/two-factor/enrol");
    secret = (await page.textContent("#totp-secret")).trim();
    check(/^[A-Z2-7]{32}$/.test(secret), `secret: ${secret}`);
    check((await page.textContent("#totp-uri")).startsWith("otpauth://totp/"), "no otpauth URI");
    await audit(page, "tf-pending");
    await page.fill("#confirm-code", codeAt(secret, Date.now()));
    await submit(page, "#confirm-code-submit", "/app/settings/two-factor/confirm");
    const codes = await page.$$eval("#recovery-codes code", (els) => els.map((e) => e.textContent));
    check(codes.length === 10, `recovery codes: ${codes.length}`);
    await audit(page, "tf-recovery-codes");
    await page.goto(`${base}/app/settings/two-factor`);
    check(!(await page.content()).includes(secret), "the secret is shown after enrolment");
    await audit(page, "tf-on");
    const phone = await newPage({ width: 360, height: 740 });
    await passwordSignIn(phone, username, PASSWORD);
    check(phone.url() === `${base}/app/session/two-factor`, `after the password on a phone: ${phone.url()}`);
    await audit(phone, "tf-code");
    await phone.context().close();
    await page.context().close();
    const me = (await api("GET", `/users/${user.id}`)).data.attributes["two-factor"];
    check(me.enabled && me.verified, `two-factor attributes ${JSON.stringify(me)}`);
  });

  await step("two-factor: signing in asks for a code after the password; a wrong one is refused, the right one signs in", async () => {
    const p = await newPage();
    await passwordSignIn(p, username, PASSWORD);
    check(p.url() === `${base}/app/session/two-factor`, `after the password: ${p.url()}`);
    check(!(await p.context().cookies()).some((c) => c.name === "ws_session"), "the password alone made a session");
    await audit(p, "tf-code");
    const next = codeAt(secret, Date.now() + 30_000);
    await p.fill("#code", next === "000000" ? "111111" : "000000");
    await submit(p, "#code-sign-in", "/app/session/two-factor");
    await takeStatusLog(p, 401);
    check((await p.textContent("#code-error")).includes("That code is not valid"), "no refusal shown");
    await audit(p, "tf-code-refused");
    await p.fill("#code", next);
    await submit(p, "#code-sign-in", "/app/session/two-factor");
    check(p.url() === `${base}/app`, `after the code: ${p.url()}`);
    check((await p.textContent("header")).includes(username), "signed in as someone else");
    await p.context().close();
  });
}
