// The organisation's audit trail in a browser: changes made through the API (a workspace created, locked and unlocked,
// a variable with a sensitive value, a team) are listed on the owners' page, newest first, with no variable's value;
// the page reads at 1280 and 360 px; a member who is not an owner is refused it. Everything happens in an organisation
// of its own.

const ORG = "auditui";

export default async function (h) {
  const { step, check, api, audit, signedIn, service } = h;
  const base = service.base;
  const SECRET = "audit-ui-secret-value-0001";

  await step("audit: the owners' page lists the organisation's changes newest first, with no variable's value", async () => {
    await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "auditui@example.com" } } });
    const ws = (await api("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: "audited" } } })).data;
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { reason: "audit" });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    await api("POST", `/workspaces/${ws.id}/vars`, {
      data: { type: "vars", attributes: { key: "db_password", value: SECRET, category: "terraform", sensitive: true } },
    });
    await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: "audit-readers" } } });

    const owner = await signedIn(service.token);
    await owner.goto(`${base}/app/${ORG}/settings`);
    await Promise.all([owner.waitForURL(`${base}/app/${ORG}/settings/audit-trail`), owner.click(`a[href="/app/${ORG}/settings/audit-trail"]`)]);
    const items = await owner.$$eval("ol.audit-events > li strong", (els) => els.map((e) => e.textContent.replace(/\s+/g, " ").trim()));
    for (const want of ["workspace create", "workspace lock", "workspace unlock", "variable create", "team create"]) {
      check(items.includes(want), `"${want}" is not listed: ${items.join(", ")}`);
    }
    check(items.indexOf("team create") < items.indexOf("workspace create"), `not newest first: ${items.join(", ")}`);
    check(!(await owner.content()).includes(SECRET), "a sensitive variable's value is on the page");
    await audit(owner, "audit-trail");
    const phone = await signedIn(service.token, { width: 360, height: 740 });
    await phone.goto(`${base}/app/${ORG}/settings/audit-trail`);
    await audit(phone, "audit-trail");
    await owner.context().close();
    await phone.context().close();
  });

  await step("audit: a member who is not an owner is refused the page", async () => {
    const team = (await api("GET", `/organizations/${ORG}/teams?q=audit-readers`)).data[0];
    const token = (await api("POST", `/teams/${team.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data.attributes
      .token;
    const member = await signedIn(token);
    const res = await member.request.get(`${base}/app/${ORG}/settings/audit-trail`, { failOnStatusCode: false });
    check([403, 404].includes(res.status()), `a non-owner's request answered ${res.status()}`);
    check(!(await res.text()).includes("workspace create"), "the refused answer shows events");
    await member.context().close();
  });
}
