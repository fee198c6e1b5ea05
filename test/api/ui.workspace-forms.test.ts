// The web UI's workspace forms: a new workspace, variables and tags. Each form changes what the API then shows,
// each refusal carries the API's own reason (422), a read-only caller sees no form and its forged POSTs change
// nothing, and sensitive values never appear in any page.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeProject, makeTeam, makeUser } from "../fixtures";
import { type ApiResponse, api, uniqueName } from "../helpers";
import { escapeHtml, signIn, ui } from "../ui-client";

/** The reasons shown next to a refused form. */
const reasonsOf = (html: string, form: string) => new RegExp(`<div class="error" role="alert" id="${form}-errors">([\\s\\S]*?)</div>`).exec(html)?.[1] ?? "";

/** The API refused (`fromApi`, 422), and the page refuses `form` posted to `path` too, the API's reason in the box of `box`. */
async function refusedWithTheApisReason(cookie: string, fromApi: ApiResponse, path: string, form: Record<string, string>, box: string) {
  expect(fromApi.status).toBe(422);
  const page = await ui("POST", path, { cookie, form });
  expect(page.status).toBe(422);
  expect(reasonsOf(page.text, box)).toContain(escapeHtml(fromApi.body.errors[0].detail));
  return page;
}

/** An organisation, its owner (signed in), a workspace, and a reader: a team token with read access to it. */
async function setup() {
  const org = await createOrg();
  const owner = await makeUser({ ownerOf: org });
  const ws = await createWorkspace(org);
  const team = await makeTeam(org);
  await grantWorkspace(team.id, ws.id, "read");
  return {
    org,
    ws,
    base: `/app/${org}/workspaces/${ws.attributes.name}`,
    cookie: await signIn(owner.token),
    owner,
    reader: await signIn(team.token),
    readerToken: team.token,
  };
}

const vars = async (wsId: string) => (await api("GET", `/workspaces/${wsId}/vars`)).body.data as Array<{ id: string; attributes: Record<string, unknown> }>;

describe("UI: a new workspace", () => {
  it("creates it in the chosen project through the API's create, and redirects to its page", async () => {
    const { org, cookie } = await setup();
    const projectName = uniqueName("prj");
    const project = await makeProject(org, projectName);
    const list = await ui("GET", `/app/${org}/workspaces`, { cookie });
    expect(list.text).toContain(`id="new-workspace" href="/app/${org}/workspaces/new"`);
    const form = await ui("GET", `/app/${org}/workspaces/new`, { cookie });
    expect(form.status).toBe(200);
    expect(form.text).toContain(`<option value="${project}">${projectName}</option>`);
    // The organisation's Default Project comes preselected.
    expect(form.text).toMatch(/<option value="prj-[A-Za-z0-9]+" selected="">Default Project<\/option>/);

    const name = uniqueName("made");
    const made = await ui("POST", `/app/${org}/workspaces/new`, {
      cookie,
      form: { name, project, description: "from the form", "execution-mode": "local", "terraform-version": "1.6.2", "auto-apply": "on" },
    });
    expect(made.status).toBe(303);
    expect(made.headers.get("Location")).toBe(`/app/${org}/workspaces/${name}`);
    const shown = await api("GET", `/organizations/${org}/workspaces/${name}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes).toMatchObject({
      description: "from the form",
      "execution-mode": "local",
      "terraform-version": "1.6.2",
      "auto-apply": true,
    });
    expect(shown.body.data.relationships.project.data.id).toBe(project);
    expect((await ui("GET", made.headers.get("Location")!, { cookie })).status).toBe(200);
  });

  it("shows the API's reasons for a taken or bad name next to the form (422), keeping what was sent", async () => {
    const { org, ws, cookie } = await setup();
    for (const name of [ws.attributes.name as string, "bad name!"]) {
      const fromApi = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } });
      const refused = await refusedWithTheApisReason(
        cookie,
        fromApi,
        `/app/${org}/workspaces/new`,
        { name, project: "", description: "kept" },
        "new-workspace",
      );
      expect(refused.text).toContain('value="kept"');
    }
    const total = (await api("GET", `/organizations/${org}/workspaces`)).body.meta.pagination["total-count"];
    expect(total).toBe(1);
  });

  it("a reader sees no link, no form, and its forged create is refused with nothing created", async () => {
    const { org, reader } = await setup();
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: reader })).text).not.toContain("new-workspace");
    expect((await ui("GET", `/app/${org}/workspaces/new`, { cookie: reader })).status).toBe(404);
    const name = uniqueName("forged");
    const forged = await ui("POST", `/app/${org}/workspaces/new`, { cookie: reader, form: { name } });
    expect(forged.status).toBe(404);
    expect(forged.text).not.toContain("new-workspace-errors");
    // Invalid input is refused the same way: a reader learns nothing from the form.
    expect((await ui("POST", `/app/${org}/workspaces/new`, { cookie: reader, form: { name: "bad name!" } })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`)).status).toBe(404);
  });
});

describe("UI: variables", () => {
  it("adds, edits and deletes variables as the API's endpoints do; a sensitive value never shows", async () => {
    const { org, ws, base, cookie } = await setup();
    const secret = `s3cret-${uniqueName("v")}`;
    const add = (form: Record<string, string>) => ui("POST", `${base}/variables`, { cookie, form });
    expect((await add({ key: "region", value: "eu-west-1", category: "terraform", description: "where" })).status).toBe(303);
    const added = await add({ key: "TOKEN", value: secret, category: "env", sensitive: "on" });
    expect(added.status).toBe(303);
    expect(added.headers.get("Location")).toBe(`${base}/variables`);
    let listed = await vars(ws.id);
    const region = listed.find((v) => v.attributes.key === "region")!;
    const token = listed.find((v) => v.attributes.key === "TOKEN")!;
    expect(region.attributes).toMatchObject({ value: "eu-west-1", category: "terraform", description: "where", hcl: false, sensitive: false });
    expect(token.attributes).toMatchObject({ value: null, category: "env", sensitive: true });

    const page = await ui("GET", `${base}/variables`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("eu-west-1");
    expect(page.text).toContain(`${base}/variables/${token.id}/edit`);
    const edit = await ui("GET", `${base}/variables/${token.id}/edit`, { cookie });
    expect(edit.status).toBe(200);
    for (const html of [page.text, edit.text, (await ui("GET", base, { cookie })).text]) expect(html).not.toContain(secret);

    // An edit: the non-sensitive value replaced, HCL on.
    const saved = await ui("POST", `${base}/variables/${region.id}`, {
      cookie,
      form: { key: "region", value: '"us-east-1"', category: "terraform", hcl: "on" },
    });
    expect(saved.status).toBe(303);
    listed = await vars(ws.id);
    expect(listed.find((v) => v.id === region.id)!.attributes).toMatchObject({ value: '"us-east-1"', hcl: true, description: "" });
    // A sensitive variable's edit with the value left empty keeps the value: only its key changes.
    expect(
      (await ui("POST", `${base}/variables/${token.id}`, { cookie, form: { key: "API_TOKEN", value: "", category: "env", sensitive: "on" } })).status,
    ).toBe(303);
    const renamed = (await vars(ws.id)).find((v) => v.id === token.id)!;
    expect(renamed.attributes).toMatchObject({ key: "API_TOKEN", sensitive: true, value: null });

    // Delete asks for a confirmation first.
    const unconfirmed = await ui("POST", `${base}/variables/${region.id}/delete`, { cookie, form: {} });
    expect(unconfirmed.status).toBe(422);
    expect(reasonsOf(unconfirmed.text, "delete-variable")).toContain("confirm");
    expect((await vars(ws.id)).some((v) => v.id === region.id)).toBe(true);
    expect((await ui("POST", `${base}/variables/${region.id}/delete`, { cookie, form: { confirm: "on" } })).status).toBe(303);
    expect((await vars(ws.id)).map((v) => v.id)).toEqual([token.id]);
    expect(org).toBeTruthy();
  });

  it("refusals carry the API's own reasons: duplicate key, blank key, sensitive made non-sensitive", async () => {
    const { ws, base, cookie } = await setup();
    const secret = `s3cret-${uniqueName("v")}`;
    const body = (attributes: Record<string, unknown>) => ({ body: { data: { type: "vars", attributes } } });
    expect((await api("POST", `/workspaces/${ws.id}/vars`, body({ key: "dup", value: "1", category: "terraform" }))).status).toBe(201);
    const sensitive = await api("POST", `/workspaces/${ws.id}/vars`, body({ key: "hidden", value: secret, category: "terraform", sensitive: true }));

    const dupApi = await api("POST", `/workspaces/${ws.id}/vars`, body({ key: "dup", value: "2", category: "terraform" }));
    const _dup = await refusedWithTheApisReason(cookie, dupApi, `${base}/variables`, { key: "dup", value: "2", category: "terraform" }, "add-variable");

    // A refused sensitive value is not sent back to the browser.
    const blankApi = await api("POST", `/workspaces/${ws.id}/vars`, body({ key: "", value: secret, category: "env", sensitive: true }));
    const blank = await refusedWithTheApisReason(
      cookie,
      blankApi,
      `${base}/variables`,
      { key: "", value: secret, category: "env", sensitive: "on" },
      "add-variable",
    );
    expect(blank.text).not.toContain(secret);

    const id = sensitive.body.data.id;
    const unsensitiveApi = await api("PATCH", `/workspaces/${ws.id}/vars/${id}`, { body: { data: { type: "vars", attributes: { sensitive: false } } } });
    const _unsensitive = await refusedWithTheApisReason(
      cookie,
      unsensitiveApi,
      `${base}/variables/${id}`,
      { key: "hidden", value: "", category: "terraform" },
      "edit-variable",
    );
    expect((await vars(ws.id)).map((v) => [v.attributes.key, v.attributes.value])).toEqual([
      ["dup", "1"],
      ["hidden", null],
    ]);
  });

  it("lists the variable sets that apply to the workspace", async () => {
    const { org, ws, base, cookie } = await setup();
    const name = uniqueName("set");
    const set = await api("POST", `/organizations/${org}/varsets`, {
      body: { data: { type: "varsets", attributes: { name, global: false }, relationships: { workspaces: { data: [{ type: "workspaces", id: ws.id }] } } } },
    });
    expect(set.status).toBe(201);
    const page = await ui("GET", `${base}/variables`, { cookie });
    expect(page.text).toMatch(new RegExp(`<li data-varset="${set.body.data.id}">${name} <span class="muted">\\(applied to this workspace\\)`));
  });

  it("a reader sees the variables without forms, and its forged writes are refused with nothing changed", async () => {
    const { ws, base, reader } = await setup();
    const created = await api("POST", `/workspaces/${ws.id}/vars`, {
      body: { data: { type: "vars", attributes: { key: "kept", value: "v", category: "terraform" } } },
    });
    const id = created.body.data.id;
    const page = await ui("GET", `${base}/variables`, { cookie: reader });
    expect(page.status).toBe(200);
    expect(page.text).toContain("kept");
    expect(page.text).not.toContain('<form class="settings"');
    expect(page.text).not.toContain(`/variables/${id}/edit`);
    expect((await ui("GET", `${base}/variables/${id}/edit`, { cookie: reader })).status).toBe(404);
    for (const [path, form] of <Array<[string, Record<string, string>]>>[
      [`${base}/variables`, { key: "forged", value: "x", category: "terraform" }],
      [`${base}/variables`, { key: "", category: "terraform" }],
      [`${base}/variables/${id}`, { key: "changed", value: "x", category: "terraform" }],
      [`${base}/variables/${id}/delete`, { confirm: "on" }],
    ]) {
      const forged = await ui("POST", path, { cookie: reader, form });
      expect(forged.status, path).toBe(404);
      expect(forged.text).not.toContain("-errors");
    }
    expect((await vars(ws.id)).map((v) => [v.id, v.attributes.key, v.attributes.value])).toEqual([[id, "kept", "v"]]);
  });
});

describe("UI: tags and tag bindings", () => {
  const flatTags = async (wsId: string) =>
    ((await api("GET", `/workspaces/${wsId}/relationships/tags`)).body.data as Array<{ attributes: { name: string } }>).map((t) => t.attributes.name);
  const bindings = async (wsId: string) =>
    ((await api("GET", `/workspaces/${wsId}/tag-bindings`)).body.data as Array<{ attributes: { key: string; value: string } }>).map((b) => [
      b.attributes.key,
      b.attributes.value,
    ]);

  it("adds and removes flat tags and bindings as the API does; inherited bindings show their project, read-only", async () => {
    const { ws, base, cookie } = await setup();
    const projectId = ws.relationships.project.data.id;
    expect(
      (await api("PATCH", `/projects/${projectId}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: "team", value: "core" } }] } }))
        .status,
    ).toBe(200);
    const tags = `${base}/tags`;
    expect((await ui("POST", tags, { cookie, form: { name: "prod" } })).status).toBe(303);
    expect((await ui("POST", tags, { cookie, form: { name: "eu" } })).status).toBe(303);
    expect(await flatTags(ws.id)).toEqual(["prod", "eu"]);
    const removed = await ui("POST", `${tags}/delete`, { cookie, form: { name: "prod" } });
    expect(removed.status).toBe(303);
    expect(removed.headers.get("Location")).toBe(tags);
    expect(await flatTags(ws.id)).toEqual(["eu"]);

    expect((await ui("POST", `${tags}/bindings`, { cookie, form: { key: "env", value: "dev" } })).status).toBe(303);
    expect((await ui("POST", `${tags}/bindings`, { cookie, form: { key: "tier", value: "" } })).status).toBe(303);
    expect((await ui("POST", `${tags}/bindings`, { cookie, form: { key: "env", value: "prod" } })).status).toBe(303);
    expect(await bindings(ws.id)).toEqual([
      ["env", "prod"],
      ["tier", ""],
    ]);
    expect((await ui("POST", `${tags}/bindings/delete`, { cookie, form: { key: "tier" } })).status).toBe(303);
    expect(await bindings(ws.id)).toEqual([["env", "prod"]]);

    const page = await ui("GET", tags, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<tr data-binding="env">');
    // The project's binding: shown with the project's name, with no form to change it here.
    expect(page.text).toMatch(
      /<tr class="inherited" data-inherited="team"><td>team<\/td><td>core<\/td><td>inherited from project <strong>Default Project<\/strong>/,
    );
    expect(page.text).not.toContain('name="key" value="team"');
  });

  it("refusals carry the API's own reasons: a reserved prefix, a bad tag name, the binding limit", async () => {
    const { ws, base, cookie } = await setup();
    const tagsApi = await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "hc:x" } }] } });
    const _tag = await refusedWithTheApisReason(cookie, tagsApi, `${base}/tags`, { name: "hc:x" }, "flat-tags");

    const keyApi = await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, {
      body: { data: [{ type: "tag-bindings", attributes: { key: "hcp:x", value: "v" } }] },
    });
    const key = await refusedWithTheApisReason(cookie, keyApi, `${base}/tags/bindings`, { key: "hcp:x", value: "v" }, "tag-bindings");
    expect(key.text).toContain('value="hcp:x"');

    const ten = Array.from({ length: 10 }, (_, i) => ({ type: "tag-bindings", attributes: { key: `k${i}`, value: "v" } }));
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: ten } })).status).toBe(200);
    const limitApi = await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, {
      body: { data: [{ type: "tag-bindings", attributes: { key: "k10", value: "v" } }] },
    });
    const _limit = await refusedWithTheApisReason(cookie, limitApi, `${base}/tags/bindings`, { key: "k10", value: "v" }, "tag-bindings");
    expect((await bindings(ws.id)).length).toBe(10);
    expect(await flatTags(ws.id)).toEqual([]);
  });

  it("a reader sees tags without forms, and its forged changes are refused with nothing changed", async () => {
    const { ws, base, reader } = await setup();
    await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "kept" } }] } });
    await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] } });
    const page = await ui("GET", `${base}/tags`, { cookie: reader });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<span class="tag">kept</span>');
    expect(page.text).not.toContain(`action="${base}/tags`);
    for (const [path, form] of <Array<[string, Record<string, string>]>>[
      [`${base}/tags`, { name: "forged" }],
      [`${base}/tags`, { name: "hc:x" }],
      [`${base}/tags/delete`, { name: "kept" }],
      [`${base}/tags/bindings`, { key: "env", value: "dev" }],
      [`${base}/tags/bindings/delete`, { key: "env" }],
    ]) {
      const forged = await ui("POST", path, { cookie: reader, form });
      expect(forged.status, path).toBe(404);
      expect(forged.text).not.toContain("-errors");
    }
    expect(await flatTags(ws.id)).toEqual(["kept"]);
    expect(await bindings(ws.id)).toEqual([["env", "prod"]]);
  });
});

describe("UI: the settings form's name, project and options", () => {
  it("renames, moves and sets the options as PATCH /workspaces/:id does; a bad name gets the API's reason", async () => {
    const { org, ws, base, cookie } = await setup();
    const projectName = uniqueName("dest");
    const project = await makeProject(org, projectName);
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain(`<option value="${project}">${projectName}</option>`);
    const form = { options: "1", description: "", "execution-mode": "remote", "working-directory": "" };

    const badApi = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { name: "bad name!" } } } });
    const _bad = await refusedWithTheApisReason(cookie, badApi, `${base}/settings`, { ...form, name: "bad name!" }, "settings");

    const name = uniqueName("renamed");
    const saved = await ui("POST", `${base}/settings`, {
      cookie,
      form: { ...form, name, project, "queue-all-runs": "on", "structured-run-output-enabled": "on" },
    });
    // The form offers only settings that change what the service does: queue-all-runs and speculative-enabled act on
    // VCS runs, so they are neither shown nor taken from it.
    expect(page.text).not.toContain('name="queue-all-runs"');
    expect(page.text).not.toContain('name="speculative-enabled"');
    expect(saved.status).toBe(303);
    expect(saved.headers.get("Location")).toBe(`/app/${org}/workspaces/${name}`);
    const shown = (await api("GET", `/workspaces/${ws.id}`)).body.data;
    expect(shown.attributes).toMatchObject({
      name,
      "queue-all-runs": false,
      "speculative-enabled": true,
      "allow-destroy-plan": false,
      "structured-run-output-enabled": true,
    });
    expect(shown.relationships.project.data.id).toBe(project);
  });
});
