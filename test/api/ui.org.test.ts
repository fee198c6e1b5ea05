import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeProject, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api, uniqueName } from "../helpers";
import { escapeHtml, refusedAsTheApi, signIn, ui } from "../ui-client";

/** A user who is a member of a new team with the given organisation permissions, signed in. */
async function member(org: string, orgAccess: Record<string, boolean> = {}) {
  const team = await makeTeam(org, orgAccess);
  const user = await makeUser({ teams: [team.id] });
  return { ...user, team: team.id, cookie: await signIn(user.token) };
}

/** The page at `base` saves `form` (303) and the API then shows `attributes` at `apiPath`; its delete form deletes it. */
async function savedThenDeleted(cookie: string, base: string, form: Record<string, string>, apiPath: string, attributes: Record<string, unknown>) {
  expect((await ui("POST", base, { cookie, form })).status).toBe(303);
  expect((await api("GET", apiPath)).body.data.attributes).toMatchObject(attributes);
  expect((await ui("POST", `${base}/delete`, { cookie })).status).toBe(303);
  expect((await api("GET", apiPath)).status).toBe(404);
}

const varsetsOf = async (org: string) =>
  (await api("GET", `/organizations/${org}/varsets`)).body.data as Array<{ id: string; attributes: Record<string, any>; relationships: any }>;

describe("UI organisation navigation", () => {
  it("offers variable sets and settings only to callers who may open them", async () => {
    const org = await createOrg();
    const admin = await signIn(ADMIN);
    const list = await ui("GET", `/app/${org}/workspaces`, { cookie: admin });
    for (const p of ["workspaces", "projects", "varsets", "teams", "members", "settings"]) expect(list.text).toContain(`href="/app/${org}/${p}"`);
    const plain = await member(org);
    for (const path of [`/app/${org}/workspaces`, `/app/${org}/projects`, `/app/${org}/teams`, `/app/${org}/members`]) {
      const page = await ui("GET", path, { cookie: plain.cookie });
      expect(page.status, path).toBe(200);
      expect(page.text).toContain(`href="/app/${org}/teams"`);
      expect(page.text).not.toContain(`href="/app/${org}/varsets"`);
      expect(page.text).not.toContain(`href="/app/${org}/settings"`);
    }
    expect((await ui("GET", `/app/${org}/varsets`, { cookie: plain.cookie })).status).toBe(404);
    expect((await ui("GET", `/app/${org}/settings`, { cookie: plain.cookie })).status).toBe(404);
    const reader = await member(org, { "read-workspaces": true });
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: reader.cookie })).text).toContain(`href="/app/${org}/varsets"`);
  });
});

describe("UI variable sets", () => {
  it("creates a set, edits its variables (sensitive ones write-only) and where it applies; the API shows each change", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const projectName = uniqueName("prj");
    const projectId = await makeProject(org, projectName);
    const cookie = await signIn(ADMIN);
    const created = await ui("POST", `/app/${org}/varsets`, { cookie, form: { name: "shared", description: "for all", priority: "on" } });
    expect(created.status).toBe(303);
    const [set] = await varsetsOf(org);
    expect(set.attributes).toMatchObject({ name: "shared", description: "for all", priority: true, global: false });
    const base = `/app/${org}/varsets/${set.id}`;
    expect(created.location).toBe(base);

    const plainVar = { key: "region", value: "eu-west-1", category: "terraform", description: "" };
    expect((await ui("POST", `${base}/vars`, { cookie, form: plainVar })).status).toBe(303);
    expect((await ui("POST", `${base}/vars`, { cookie, form: { key: "TOKEN", value: "s3cr3t-value", category: "env", sensitive: "on" } })).status).toBe(303);
    let vars = (await api("GET", `/varsets/${set.id}/relationships/vars`)).body.data as Array<{ id: string; attributes: Record<string, any> }>;
    const region = vars.find((v) => v.attributes.key === "region")!;
    const token = vars.find((v) => v.attributes.key === "TOKEN")!;
    expect(region.attributes).toMatchObject({ value: "eu-west-1", category: "terraform", sensitive: false });
    expect(token.attributes).toMatchObject({ value: null, category: "env", sensitive: true });
    const page = await ui("GET", base, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("eu-west-1");
    expect(page.text).not.toContain("s3cr3t-value");

    // Editing the sensitive variable with an empty value keeps its value; its key changes.
    expect((await ui("POST", `${base}/vars/${token.id}`, { cookie, form: { key: "API_TOKEN", value: "", category: "env", description: "" } })).status).toBe(
      303,
    );
    expect((await ui("POST", `${base}/vars/${region.id}`, { cookie, form: { ...plainVar, value: "us-east-1", hcl: "on" } })).status).toBe(303);
    vars = (await api("GET", `/varsets/${set.id}/relationships/vars`)).body.data;
    expect(vars.find((v) => v.id === token.id)!.attributes).toMatchObject({ key: "API_TOKEN", sensitive: true });
    expect(vars.find((v) => v.id === region.id)!.attributes).toMatchObject({ value: "us-east-1", hcl: true });

    // A key the API refuses: the API's reason next to the form, with what was sent.
    const apiRefusal = await api("POST", `/varsets/${set.id}/relationships/vars`, {
      body: { data: { type: "vars", attributes: { key: "region", value: "x", category: "terraform" } } },
    });
    await refusedAsTheApi(cookie, apiRefusal, `${base}/vars`, { ...plainVar, value: "x" }, "add-var-errors");

    expect((await ui("POST", `${base}/vars/${token.id}/delete`, { cookie })).status).toBe(303);
    expect((await api("GET", `/varsets/${set.id}/relationships/vars`)).body.data.map((v: { id: string }) => v.id)).toEqual([region.id]);

    // Where it applies: a workspace and a project by name, then removed.
    expect((await ui("POST", `${base}/workspaces`, { cookie, form: { name: ws.attributes.name } })).status).toBe(303);
    expect((await ui("POST", `${base}/projects`, { cookie, form: { name: projectName } })).status).toBe(303);
    let shown = (await api("GET", `/varsets/${set.id}`)).body.data.relationships;
    expect(shown.workspaces.data.map((w: { id: string }) => w.id)).toEqual([ws.id]);
    expect(shown.projects.data.map((p: { id: string }) => p.id)).toEqual([projectId]);
    const applied = await ui("GET", base, { cookie });
    expect(applied.text).toContain(`data-target="${ws.attributes.name}"`);
    expect(applied.text).toContain(`data-target="${projectName}"`);
    const unknown = await ui("POST", `${base}/workspaces`, { cookie, form: { name: "no-such-workspace" } });
    expect(unknown.status).toBe(422);
    expect(unknown.text).toContain('id="add-workspace-errors"');
    expect(unknown.text).toContain("Workspace no-such-workspace not found");
    expect((await ui("POST", `${base}/workspaces/delete`, { cookie, form: { id: ws.id } })).status).toBe(303);
    expect((await ui("POST", `${base}/projects/delete`, { cookie, form: { id: projectId } })).status).toBe(303);
    shown = (await api("GET", `/varsets/${set.id}`)).body.data.relationships;
    expect(shown.workspaces.data).toEqual([]);
    expect(shown.projects.data).toEqual([]);

    // Settings, then delete.
    await savedThenDeleted(cookie, base, { name: "shared-2", description: "", global: "on" }, `/varsets/${set.id}`, {
      name: "shared-2",
      global: true,
      priority: false,
    });
  });

  it("refusals come from the API's rules, shown next to the form", async () => {
    const org = await createOrg();
    const cookie = await signIn(ADMIN);
    const blank = await api("POST", `/organizations/${org}/varsets`, { body: { data: { type: "varsets", attributes: { name: " " } } } });
    const refused = await refusedAsTheApi(cookie, blank, `/app/${org}/varsets`, { name: " ", description: "kept" }, "create-errors");
    expect(refused.text).toContain('value="kept"');
    // The API's schema: a name longer than it allows.
    const long = "n".repeat(500);
    const tooLong = await api("POST", `/organizations/${org}/varsets`, { body: { data: { type: "varsets", attributes: { name: long } } } });
    await refusedAsTheApi(cookie, tooLong, `/app/${org}/varsets`, { name: long });
    expect(await varsetsOf(org)).toEqual([]);
  });

  it("a reader sees no forms; its forged POSTs are refused and change nothing", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const set = (await api("POST", `/organizations/${org}/varsets`, { body: { data: { type: "varsets", attributes: { name: "locked" } } } })).body.data;
    await api("POST", `/varsets/${set.id}/relationships/vars`, {
      body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "terraform" } } },
    });
    const reader = await member(org, { "read-workspaces": true });
    const list = await ui("GET", `/app/${org}/varsets`, { cookie: reader.cookie });
    expect(list.status).toBe(200);
    expect(list.text).toContain('data-varset="locked"');
    expect(list.text).not.toContain('<form class="settings"');
    const base = `/app/${org}/varsets/${set.id}`;
    const page = await ui("GET", base, { cookie: reader.cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`method="post" action="/app/${org}/varsets/`);
    const forged: Array<[string, Record<string, string>]> = [
      [`/app/${org}/varsets`, { name: "forged" }],
      [`/app/${org}/varsets`, { name: " " }],
      [base, { name: "renamed" }],
      [`${base}/vars`, { key: "x", value: "y", category: "terraform" }],
      [`${base}/vars`, { key: "x", value: "y", category: "bogus" }],
      [`${base}/workspaces`, { name: ws.attributes.name }],
      [`${base}/delete`, {}],
    ];
    for (const [path, form] of forged) expect((await ui("POST", path, { cookie: reader.cookie, form })).status, path).toBe(404);
    const after = await varsetsOf(org);
    expect(after.map((s) => s.attributes.name)).toEqual(["locked"]);
    expect(after[0].relationships.workspaces.data).toEqual([]);
    expect(after[0].attributes["var-count"]).toBe(1);
    // A cross-origin POST from a manager is refused before anything runs.
    const admin = await signIn(ADMIN);
    expect((await ui("POST", `${base}/delete`, { cookie: admin, origin: "https://evil.example" })).status).toBe(403);
    expect((await api("GET", `/varsets/${set.id}`)).status).toBe(200);
  });
});

describe("UI teams", () => {
  it("creates a team, changes its organisation permissions, members and settings; the API shows each change", async () => {
    const org = await createOrg();
    const cookie = await signIn(ADMIN);
    const name = uniqueName("devs");
    const created = await ui("POST", `/app/${org}/teams`, { cookie, form: { name, visibility: "organization" } });
    expect(created.status).toBe(303);
    const teams = (await api("GET", `/organizations/${org}/teams?filter[names]=${name}`)).body.data;
    expect(teams).toHaveLength(1);
    const team = teams[0];
    expect(team.attributes.visibility).toBe("organization");
    const base = `/app/${org}/teams/${team.id}`;
    expect(created.location).toBe(base);

    expect(
      (await ui("POST", `${base}/access`, { cookie, form: { "manage-workspaces": "on", "read-workspaces": "on", "manage-membership": "on" } })).status,
    ).toBe(303);
    const access = (await api("GET", `/teams/${team.id}`)).body.data.attributes["organization-access"];
    expect(access).toMatchObject({ "manage-workspaces": true, "read-workspaces": true, "manage-membership": true, "manage-teams": false });
    const page = await ui("GET", base, { cookie });
    expect(page.text).toMatch(/id="oa-manage-workspaces" name="manage-workspaces" type="checkbox" checked/);

    const user = await makeUser();
    const username = (await api("GET", `/users/${user.id}`)).body.data.attributes.username;
    expect((await ui("POST", `${base}/members`, { cookie, form: { username } })).status).toBe(303);
    expect((await api("GET", `/teams/${team.id}`)).body.data.relationships.users.data.map((u: { id: string }) => u.id)).toEqual([user.id]);
    expect((await ui("GET", base, { cookie })).text).toContain(`data-member="${username}"`);
    expect((await ui("POST", `${base}/members/delete`, { cookie, form: { id: user.id } })).status).toBe(303);
    expect((await api("GET", `/teams/${team.id}`)).body.data.relationships.users.data).toEqual([]);

    const renamed = uniqueName("ops");
    await savedThenDeleted(cookie, base, { name: renamed, visibility: "secret" }, `/teams/${team.id}`, { name: renamed, visibility: "secret" });
  });

  it("refusals come from the API's rules: a bad name, a permission missing what it needs, an unknown user", async () => {
    const org = await createOrg();
    const cookie = await signIn(ADMIN);
    const apiName = await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name: "bad name!" } } } });
    await refusedAsTheApi(cookie, apiName, `/app/${org}/teams`, { name: "bad name!", visibility: "secret" }, "create-errors");
    const badVisibility = await ui("POST", `/app/${org}/teams`, { cookie, form: { name: "fine", visibility: "public" } });
    expect(badVisibility.status).toBe(422);
    expect(badVisibility.text).toContain("visibility:");

    const team = await makeTeam(org);
    const base = `/app/${org}/teams/${team.id}`;
    const apiAccess = await api("PATCH", `/teams/${team.id}`, {
      body: { data: { type: "teams", attributes: { "organization-access": { "manage-teams": true, "manage-membership": false } } } },
    });
    await refusedAsTheApi(cookie, apiAccess, `${base}/access`, { "manage-teams": "on" }, "access-errors");
    expect((await api("GET", `/teams/${team.id}`)).body.data.attributes["organization-access"]["manage-teams"]).toBe(false);

    const unknown = await ui("POST", `${base}/members`, { cookie, form: { username: "nobody-here" } });
    expect(unknown.status).toBe(422);
    expect(unknown.text).toContain("User not found: nobody-here");
  });

  it("a member without the permissions sees no forms; forged POSTs change nothing; the owners team cannot be deleted", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    await api("PATCH", `/teams/${team.id}`, { body: { data: { type: "teams", attributes: { visibility: "organization" } } } });
    const plain = await member(org);
    const list = await ui("GET", `/app/${org}/teams`, { cookie: plain.cookie });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(`action="/app/${org}/teams"`);
    const base = `/app/${org}/teams/${team.id}`;
    const page = await ui("GET", base, { cookie: plain.cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`method="post" action="${base}`);
    const user = await makeUser();
    const forged: Array<[string, Record<string, string>]> = [
      [`/app/${org}/teams`, { name: "forged", visibility: "secret" }],
      [`/app/${org}/teams`, { name: "bad name!", visibility: "secret" }],
      [base, { name: "renamed", visibility: "secret" }],
      [base, { name: "bad name!", visibility: "secret" }],
      [`${base}/access`, { "manage-workspaces": "on", "read-workspaces": "on" }],
      [`${base}/members`, { username: user.id }],
      [`${base}/delete`, {}],
    ];
    for (const [path, form] of forged) expect((await ui("POST", path, { cookie: plain.cookie, form })).status, path).toBe(404);
    const after = (await api("GET", `/teams/${team.id}`)).body.data;
    expect(after.attributes["organization-access"]["manage-workspaces"]).toBe(false);
    expect(after.relationships.users.data).toEqual([]);
    expect((await api("GET", `/organizations/${org}/teams?q=forged`)).body.data).toEqual([]);

    const admin = await signIn(ADMIN);
    const owners = (await api("GET", `/organizations/${org}/teams?filter[names]=owners`)).body.data[0];
    const ownersPage = await ui("GET", `/app/${org}/teams/${owners.id}`, { cookie: admin });
    expect(ownersPage.text).not.toContain(`/teams/${owners.id}/delete`);
    expect(ownersPage.text).not.toContain(`/teams/${owners.id}/access`);
    expect((await ui("POST", `/app/${org}/teams/${owners.id}/delete`, { cookie: admin })).status).toBe(422);
    expect((await api("GET", `/teams/${owners.id}`)).status).toBe(200);
  });
});

describe("UI members and invitations", () => {
  it("invites by e-mail with teams, links the invitation, cancels it; the API shows each change", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const cookie = await signIn(ADMIN);
    const email = `${uniqueName("invitee")}@example.com`;
    const invited = await ui("POST", `/app/${org}/members`, { cookie, form: { email, teams: [team.id] } });
    expect(invited.status).toBe(303);
    expect(invited.location).toBe(`/app/${org}/members`);
    const found = (await api("GET", `/organizations/${org}/organization-memberships?filter[email]=${encodeURIComponent(email)}`)).body.data;
    expect(found).toHaveLength(1);
    expect(found[0].attributes.status).toBe("invited");
    expect(found[0].relationships.teams.data.map((t: { id: string }) => t.id)).toEqual([team.id]);
    const page = await ui("GET", `/app/${org}/members`, { cookie });
    expect(page.text).toContain(`href="/app/${org}/invitations/${found[0].id}"`);
    expect(page.text).toContain(escapeHtml(email));

    const apiRefusal = await api("POST", `/organizations/${org}/organization-memberships`, {
      body: { data: { type: "organization-memberships", attributes: { email: "not-an-address" } } },
    });
    expect(apiRefusal.status).toBe(422);
    const refused = await ui("POST", `/app/${org}/members`, { cookie, form: { email: "not-an-address" } });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('id="invite-errors"');
    expect(refused.text).toContain(escapeHtml(apiRefusal.body.errors[0].detail));
    expect(refused.text).toContain('value="not-an-address"');

    expect((await ui("POST", `/app/${org}/members/${found[0].id}/delete`, { cookie })).status).toBe(303);
    expect((await api("GET", `/organization-memberships/${found[0].id}`)).status).toBe(404);
  });

  it("a member without manage-membership sees no invite or remove forms, and its forged POSTs change nothing", async () => {
    const org = await createOrg();
    const plain = await member(org);
    const other = await member(org);
    const page = await ui("GET", `/app/${org}/members`, { cookie: plain.cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`action="/app/${org}/members`);
    const memberships = (await api("GET", `/organizations/${org}/organization-memberships`)).body.data as Array<{ id: string; relationships: any }>;
    const target = memberships.find((m) => m.relationships.user.data.id === other.id)!;
    expect((await ui("POST", `/app/${org}/members`, { cookie: plain.cookie, form: { email: "forged@example.com" } })).status).toBe(404);
    expect((await ui("POST", `/app/${org}/members/${target.id}/delete`, { cookie: plain.cookie })).status).toBe(404);
    const after = (await api("GET", `/organizations/${org}/organization-memberships`)).body.data;
    expect(after.map((m: { id: string }) => m.id).sort()).toEqual(memberships.map((m) => m.id).sort());
  });
});

describe("UI organisation settings", () => {
  const form = (over: Record<string, string> = {}) => ({
    email: "ops@example.com",
    "session-timeout": "30",
    "session-remember": "",
    "default-execution-mode": "local",
    "allow-force-delete-workspaces": "on",
    // Not on the form (they change nothing here): sent all the same, they are not taken from it.
    "collaborator-auth-policy": "two_factor_mandatory",
    "cost-estimation-enabled": "on",
    ...over,
  });

  it("owners save the API's attributes; refusals come from the API's rules", async () => {
    const org = await createOrg();
    const cookie = await signIn(ADMIN);
    const page = await ui("GET", `/app/${org}/settings`, { cookie });
    expect(page.status).toBe(200);
    const saved = await ui("POST", `/app/${org}/settings`, { cookie, form: form({ name: org }) });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/app/${org}/settings`);
    const a = (await api("GET", `/organizations/${org}`)).body.data.attributes;
    expect(a).toMatchObject({
      email: "ops@example.com",
      "session-timeout": 30,
      "session-remember": null,
      "collaborator-auth-policy": "password",
      "default-execution-mode": "local",
      "cost-estimation-enabled": false,
      "assessments-enforced": false,
      "allow-force-delete-workspaces": true,
    });
    for (const absent of ["collaborator-auth-policy", "cost-estimation-enabled", "assessments-enforced", "speculative-plan-management-enabled"]) {
      expect(page.text).not.toContain(`name="${absent}"`);
    }
    for (const [bad, sent] of <Array<[Record<string, unknown>, Record<string, string>]>>[
      [{ email: "nobody" }, { email: "nobody" }],
      [{ "session-timeout": "soon" }, { "session-timeout": "soon" }],
      [{ "session-timeout": 0 }, { "session-timeout": "0" }],
      [{ "default-execution-mode": "agent" }, { "default-execution-mode": "agent" }],
    ]) {
      const apiRefusal = await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: bad } } });
      expect(apiRefusal.status, JSON.stringify(bad)).toBe(422);
      const refused = await ui("POST", `/app/${org}/settings`, { cookie, form: form({ name: org, ...sent }) });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
      expect(refused.text).toContain('id="settings-errors"');
      expect(refused.text).toContain(escapeHtml(apiRefusal.body.errors[0].detail));
    }
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes.email).toBe("ops@example.com");
    // A rename leads to the settings under the new name.
    const renamed = uniqueName("org");
    const moved = await ui("POST", `/app/${org}/settings`, { cookie, form: form({ name: renamed }) });
    expect(moved.status).toBe(303);
    expect(moved.location).toBe(`/app/${renamed}/settings`);
    expect((await api("GET", `/organizations/${renamed}`)).status).toBe(200);
  });

  it("a member who is not an owner gets no settings page, and its forged POSTs change nothing", async () => {
    const org = await createOrg();
    const manager = await member(org, { "manage-workspaces": true, "read-workspaces": true, "manage-membership": true, "manage-teams": true });
    expect((await ui("GET", `/app/${org}/settings`, { cookie: manager.cookie })).status).toBe(404);
    expect((await ui("POST", `/app/${org}/settings`, { cookie: manager.cookie, form: form({ name: org }) })).status).toBe(404);
    expect((await ui("POST", `/app/${org}/settings`, { cookie: manager.cookie, form: form({ name: org, email: "nobody" }) })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes.email).toBe("owner@example.com");
  });
});
