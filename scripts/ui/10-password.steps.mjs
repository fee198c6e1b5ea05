// Password sign-in in the browser: an invitation link made through the owner's page and used in a fresh browser,
// signing in by username and by e-mail, the site admin's reset link, and the lock-out after repeated failures.
// Every new page is audited at 1280 and 360 px.

const PASSWORD = "invited pw 0001";

export default async function (h) {
  const { step, check, api, newPage, audit, submit, takeRefusalLog, takeStatusLog, passwordSignIn, signedIn, post, service, ORG } = h;
  const base = service.base;

  let invitation;
  let invitee;
  let link;

  await step("password: the owner makes an invitation link on the invitation page", async () => {
    const email = `pw-invitee-${Date.now()}@example.com`;
    invitation = (await api("POST", `/organizations/${ORG}/organization-memberships`, { data: { type: "organization-memberships", attributes: { email } } }))
      .data;
    const owner = await signedIn(service.token);
    const path = `/app/${ORG}/invitations/${invitation.id}`;
    await owner.goto(`${base}${path}`);
    check((await owner.textContent("#invitation-email")) === email, `invitation e-mail shown: ${await owner.textContent("#invitation-email")}`);
    check((await owner.textContent("#invitation-status")) === "invited", "status not invited");
    await audit(owner, "pw-invitation");
    await submit(owner, "#create-link", `${path}/link`);
    link = (await owner.textContent("#new-link")).trim();
    check(link.startsWith(`${base}/app/password/`), `link shown: ${link}`);
    await audit(owner, "pw-invitation-link");
    const phone = await signedIn(service.token, { width: 360, height: 740 });
    await phone.goto(`${base}${path}`);
    await audit(phone, "pw-invitation");
    await phone.context().close();
    await owner.context().close();
  });

  await step("password: the invitation link sets a password, signs in and accepts the invitation", async () => {
    // The link opens the same form on a phone (only using it spends it).
    const phone = await newPage({ width: 360, height: 740 });
    await phone.goto(link);
    await audit(phone, "pw-set-password");
    await phone.context().close();

    const page = await newPage();
    await page.goto(link);
    check((await page.textContent("h1")).includes("Accept your invitation"), "not the invitation's form");
    await audit(page, "pw-set-password");
    // The API's rule, next to the form: 422.
    await page.fill("#new-password", "too short");
    await page.fill("#password-confirmation", "too short");
    await page.$eval("#new-password", (el) => el.removeAttribute("minlength"));
    await submit(page, "#set-password", new URL(link).pathname);
    await takeRefusalLog(page);
    check((await page.textContent("#password-errors")).includes("Password is too short (minimum is 10 characters)"), "no reason shown");
    await audit(page, "pw-set-password-refused");
    await page.fill("#new-password", PASSWORD);
    await page.fill("#password-confirmation", PASSWORD);
    await submit(page, "#set-password", new URL(link).pathname);
    check(page.url() === `${base}/app`, `after setting the password: ${page.url()}`);
    const shown = await api("GET", `/organization-memberships/${invitation.id}?include=user`);
    check(shown.data.attributes.status === "active", `membership status ${shown.data.attributes.status}`);
    invitee = { id: shown.included[0].id, username: shown.included[0].attributes.username, email: shown.data.attributes.email };
    check((await page.textContent("header")).includes(invitee.username), "the header does not name the invited user");
    // Once: the link now says it was used.
    await page.goto(link);
    await takeStatusLog(page, 410);
    check((await page.textContent("#link-gone")).includes("already been used"), "a used link is not refused");
    await page.context().close();
  });

  await step("password: sign in by username and by e-mail; a wrong password is refused", async () => {
    const page = await newPage();
    await page.goto(`${base}/app/session/new`);
    await audit(page, "pw-sign-in");
    await passwordSignIn(page, invitee.username, "not the password");
    await takeStatusLog(page, 401);
    check((await page.textContent("#password-error")).includes("Incorrect username, e-mail or password."), "no refusal shown");
    await audit(page, "pw-sign-in-refused");
    await passwordSignIn(page, invitee.username, PASSWORD);
    check(page.url() === `${base}/app`, `signed in at ${page.url()}`);
    await page.context().close();
    const phone = await newPage({ width: 360, height: 740 });
    await phone.goto(`${base}/app/session/new`);
    await audit(phone, "pw-sign-in");
    await passwordSignIn(phone, invitee.email.toUpperCase(), PASSWORD);
    check(phone.url() === `${base}/app`, `signed in by e-mail at ${phone.url()}`);
    check((await phone.textContent("header")).includes(invitee.username), "signed in as someone else");
    await phone.context().close();
  });

  await step("password: the site admin's reset link sets a new password", async () => {
    const admin = await signedIn(service.token);
    await admin.goto(`${base}/app`);
    await Promise.all([admin.waitForURL(`${base}/app/admin/users`), admin.click('a[href="/app/admin/users"]')]);
    check((await admin.textContent(`tr[data-user="${invitee.username}"]`)).includes("set"), "the invitee's password is not shown as set");
    await audit(admin, "pw-admin-users");
    await submit(admin, `tr[data-user="${invitee.username}"] button`, `/app/admin/users/${invitee.id}/reset-link`);
    const reset = (await admin.textContent("#new-link")).trim();
    await audit(admin, "pw-admin-users-link");
    await admin.context().close();
    const phone = await signedIn(service.token, { width: 360, height: 740 });
    await phone.goto(`${base}/app/admin/users`);
    await audit(phone, "pw-admin-users");
    await phone.context().close();

    const page = await newPage();
    await page.goto(reset);
    check((await page.textContent("h1")).includes("Set your password"), "not the reset form");
    await page.fill("#new-password", `${PASSWORD} reset`);
    await page.fill("#password-confirmation", `${PASSWORD} reset`);
    await submit(page, "#set-password", new URL(reset).pathname);
    check(page.url() === `${base}/app`, `after the reset: ${page.url()}`);
    await page.context().close();
    const again = await newPage();
    await passwordSignIn(again, invitee.username, PASSWORD);
    await takeStatusLog(again, 401);
    await passwordSignIn(again, invitee.username, `${PASSWORD} reset`);
    check(again.url() === `${base}/app`, "the new password does not sign in");
    await again.context().close();
  });

  await step("password: no invitation or admin pages for others, and their forged POSTs are refused", async () => {
    const team = (await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: "pw-readers" } } })).data;
    const token = (await api("POST", `/teams/${team.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data.attributes
      .token;
    const other = await signedIn(token);
    const res = await other.goto(`${base}/app/${ORG}/invitations/${invitation.id}`);
    check(res.status() === 404 && (await other.$("#create-link")) === null, `invitation page for a team without manage-membership: ${res.status()}`);
    check((await post(other, `/app/${ORG}/invitations/${invitation.id}/link`, {})) === 404, "a forged link POST was not refused");
    check((await other.goto(`${base}/app/admin/users`)).status() === 404, "the users page is shown to a team token");
    check((await post(other, `/app/admin/users/${invitee.id}/reset-link`, {})) === 404, "a forged reset POST was not refused");
    await other.context().close();
  });

  await step("password: five failures lock the account's password sign-in for a while", async () => {
    const page = await newPage();
    for (let i = 0; i < 5; i++) {
      await passwordSignIn(page, invitee.username, `wrong ${i}`);
      await takeStatusLog(page, 401);
    }
    await passwordSignIn(page, invitee.username, `${PASSWORD} reset`);
    await takeStatusLog(page, 429);
    check(page.url() !== `${base}/app`, "signed in while locked");
    check((await page.textContent("#password-error")).includes("Too many failed sign-ins. Try again after"), "no lock-out message");
    await audit(page, "pw-sign-in-locked");
    await page.context().close();
  });
}
