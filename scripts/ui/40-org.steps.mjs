// The organisation's pages in a browser: variable sets (create, a variable, applied to a workspace), teams (create,
// a permission, a member), an invitation by e-mail, the settings (saved, and refused with the API's reason), and a
// caller without the permissions (no forms; its forged POSTs refused). Each page is audited at 1280 and 360 px.
// Everything happens in an organisation of its own, so other areas' steps see none of it.

const ORG = "orgui";
const WS = "orgui-app";

export default async function (h) {
  const { step, check, api, audit, submit, takeRefusalLog, signedIn, post, service } = h;
  const base = service.base;
  const at = (path) => `${base}/app/${ORG}${path}`;
  let admin;
  let setId;
  let teamId;
  let phone;

  /** The same page at 360 px, audited under the same label. */
  async function narrow(path, label) {
    await phone.goto(at(path));
    await audit(phone, label);
  }

  await step("org: setup (an organisation of its own with a workspace and a user, through the API)", async () => {
    await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "orgui@example.com" } } });
    await api("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: WS } } });
    await api("POST", "/admin/users", { data: { type: "users", attributes: { username: "orgui-alice", email: "orgui-alice@example.com" } } });
    admin = await signedIn(service.token);
    phone = await signedIn(service.token, { width: 360, height: 740 });
  });

  await step("org: a variable set is created, given a variable and applied to a workspace", async () => {
    await admin.goto(at("/varsets"));
    await audit(admin, "org-varsets");
    await admin.fill("#c-name", "orgui-shared");
    await admin.fill("#c-description", "shared by the app");
    await submit(admin, "button:text-is('Create variable set')", `/app/${ORG}/varsets`);
    const sets = (await api("GET", `/organizations/${ORG}/varsets`)).data;
    check(sets.length === 1 && sets[0].attributes.name === "orgui-shared", `sets after create: ${JSON.stringify(sets.map((s) => s.attributes.name))}`);
    setId = sets[0].id;
    check(admin.url() === at(`/varsets/${setId}`), `after create the browser is at ${admin.url()}`);
    await admin.fill("#a-key", "region");
    await admin.fill("#a-value", "eu-west-1");
    await submit(admin, "button:text-is('Add variable')", `/varsets/${setId}/vars`);
    await admin.fill("#add-workspace-name", WS);
    await submit(admin, "button:text-is('Apply')", `/varsets/${setId}/workspaces`);
    const set = (await api("GET", `/varsets/${setId}`)).data;
    const ws = (await api("GET", `/organizations/${ORG}/workspaces/${WS}`)).data;
    check(set.relationships.workspaces.data.map((w) => w.id).join() === ws.id, `set applies to ${JSON.stringify(set.relationships.workspaces.data)}`);
    const vars = (await api("GET", `/varsets/${setId}/relationships/vars`)).data;
    check(vars.length === 1 && vars[0].attributes.value === "eu-west-1", `set variables: ${JSON.stringify(vars.map((v) => v.attributes))}`);
    check((await admin.textContent("#applied-workspaces")).includes(WS), "the page does not list the workspace");
    await audit(admin, "org-varset");
    await narrow("/varsets", "org-varsets");
    await narrow(`/varsets/${setId}`, "org-varset");
  });

  await step("org: a variable set refuses a blank name with the API's reason", async () => {
    await admin.goto(at("/varsets"));
    await admin.fill("#c-name", " ");
    await submit(admin, "button:text-is('Create variable set')", `/app/${ORG}/varsets`);
    await takeRefusalLog(admin);
    check((await admin.textContent("#create-errors")).includes("Name can't be blank"), `refusal: ${await admin.textContent("#create-errors")}`);
    check((await api("GET", `/organizations/${ORG}/varsets`)).data.length === 1, "a set was created");
  });

  await step("org: a team is created, given a permission and a member", async () => {
    await admin.goto(at("/teams"));
    await audit(admin, "org-teams");
    await admin.fill("#c-name", "orgui-devs");
    await admin.selectOption("#c-visibility", "organization");
    await submit(admin, "button:text-is('Create team')", `/app/${ORG}/teams`);
    const team = (await api("GET", `/organizations/${ORG}/teams?filter[names]=orgui-devs`)).data[0];
    check(team?.attributes.visibility === "organization", `team after create: ${JSON.stringify(team?.attributes)}`);
    teamId = team.id;
    await admin.check("#oa-manage-workspaces");
    await admin.check("#oa-read-workspaces");
    await submit(admin, "button:text-is('Save permissions')", `/teams/${teamId}/access`);
    const access = (await api("GET", `/teams/${teamId}`)).data.attributes["organization-access"];
    check(access["manage-workspaces"] === true && access["read-workspaces"] === true, `access: ${JSON.stringify(access)}`);
    await admin.fill("#m-username", "orgui-alice");
    await submit(admin, "button:text-is('Add member')", `/teams/${teamId}/members`);
    const users = (await api("GET", `/teams/${teamId}?include=users`)).included ?? [];
    check(
      users.some((u) => u.attributes.username === "orgui-alice"),
      `members: ${JSON.stringify(users)}`,
    );
    check((await admin.textContent("#team-members")).includes("orgui-alice"), "the page does not list the member");
    await audit(admin, "org-team");
    await narrow("/teams", "org-teams");
    await narrow(`/teams/${teamId}`, "org-team");
  });

  await step("org: a permission missing what it needs is refused with the API's reason", async () => {
    await admin.goto(at(`/teams/${teamId}`));
    await admin.uncheck("#oa-read-workspaces");
    await submit(admin, "button:text-is('Save permissions')", `/teams/${teamId}/access`);
    await takeRefusalLog(admin);
    check(
      (await admin.textContent("#access-errors")).includes("manage-workspaces requires read-workspaces"),
      `refusal: ${await admin.textContent("#access-errors")}`,
    );
    check((await api("GET", `/teams/${teamId}`)).data.attributes["organization-access"]["read-workspaces"] === true, "read-workspaces was taken away");
  });

  await step("org: a member is invited by e-mail into a team", async () => {
    await admin.goto(at("/members"));
    await audit(admin, "org-members");
    await admin.fill("#i-email", "orgui-bob@example.com");
    await admin.check(`#i-team-${teamId}`);
    await submit(admin, "button:text-is('Invite')", `/app/${ORG}/members`);
    const found = (await api("GET", `/organizations/${ORG}/organization-memberships?filter[email]=orgui-bob@example.com`)).data;
    check(found.length === 1 && found[0].attributes.status === "invited", `memberships: ${JSON.stringify(found.map((m) => m.attributes))}`);
    check(
      found[0].relationships.teams.data.some((t) => t.id === teamId),
      `invitation teams: ${JSON.stringify(found[0].relationships.teams)}`,
    );
    check((await admin.getAttribute(`tr[data-membership="${found[0].id}"] a`, "href")) === `/app/${ORG}/invitations/${found[0].id}`, "no invitation link");
    await audit(admin, "org-members-invited");
    await narrow("/members", "org-members");
  });

  await step("org: the settings are saved, and a bad e-mail is refused with the API's reason", async () => {
    await admin.goto(at("/settings"));
    await audit(admin, "org-settings");
    await admin.fill("#o-email", "orgui-ops@example.com");
    await admin.check("#o-allow-force-delete-workspaces");
    await submit(admin, "button:text-is('Save settings')", `/app/${ORG}/settings`);
    const a = (await api("GET", `/organizations/${ORG}`)).data.attributes;
    check(a.email === "orgui-ops@example.com" && a["allow-force-delete-workspaces"] === true, `settings: ${JSON.stringify(a)}`);
    await admin.fill("#o-email", "nobody");
    await submit(admin, "button:text-is('Save settings')", `/app/${ORG}/settings`);
    await takeRefusalLog(admin);
    check((await admin.textContent("#settings-errors")).includes("Email is invalid"), `refusal: ${await admin.textContent("#settings-errors")}`);
    check((await api("GET", `/organizations/${ORG}`)).data.attributes.email === "orgui-ops@example.com", "the bad e-mail was saved");
    await audit(admin, "org-settings-refused");
    await narrow("/settings", "org-settings");
  });

  await step("org: a caller without the permissions sees no forms, and its forged POSTs change nothing", async () => {
    const team = (
      await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: "orgui-nobody", visibility: "organization" } } })
    ).data;
    const token = (await api("POST", `/teams/${team.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data.attributes
      .token;
    const nobody = await signedIn(token);
    await nobody.goto(at("/teams"));
    check((await nobody.$$("form[action$='/teams']")).length === 0, "the team form is offered");
    check((await nobody.$$(`nav.orgnav a[href="/app/${ORG}/settings"]`)).length === 0, "the settings tab is offered");
    check((await nobody.$$(`nav.orgnav a[href="/app/${ORG}/varsets"]`)).length === 0, "the variable sets tab is offered");
    await audit(nobody, "org-teams-nobody");
    await nobody.goto(at(`/teams/${teamId}`));
    check((await nobody.$$("main form")).length === 0, "the team page offers forms");
    await nobody.goto(at("/members"));
    check((await nobody.$$("main form")).length === 0, "the members page offers forms");
    await audit(nobody, "org-members-nobody");
    const forged = [
      [`/app/${ORG}/varsets`, { name: "forged" }],
      [`/app/${ORG}/varsets/${setId}/delete`, {}],
      [`/app/${ORG}/teams`, { name: "forged", visibility: "secret" }],
      [`/app/${ORG}/teams/${teamId}/access`, { "manage-teams": "on", "manage-membership": "on" }],
      [`/app/${ORG}/teams/${teamId}/members`, { username: "orgui-alice" }],
      [`/app/${ORG}/members`, { email: "forged@example.com" }],
      [`/app/${ORG}/settings`, { email: "forged@example.com" }],
    ];
    for (const [path, form] of forged) {
      const status = await post(nobody, path, form);
      check(status === 404, `forged POST ${path} answered ${status}`);
    }
    check((await api("GET", `/organizations/${ORG}/varsets`)).data.length === 1, "the forged set exists, or the set was deleted");
    check((await api("GET", `/organizations/${ORG}/teams?q=forged`)).data.length === 0, "the forged team exists");
    check((await api("GET", `/teams/${teamId}`)).data.attributes["organization-access"]["manage-teams"] === false, "the forged permission was given");
    check(
      (await api("GET", `/organizations/${ORG}/organization-memberships?filter[email]=forged@example.com`)).data.length === 0,
      "the forged invitation exists",
    );
    check((await api("GET", `/organizations/${ORG}`)).data.attributes.email === "orgui-ops@example.com", "the forged settings were saved");
    await nobody.context().close();
    await phone.context().close();
  });
}
