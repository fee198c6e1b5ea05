// The `tfe` provider (terraform-provider-tfe): its resources and data sources checked against the API, a second plan
// with no changes, a changed configuration, destroy; variables and a variable set.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { check } from "../lib/harness.mjs";
import { canon, planProblem, sameSet } from "./context.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { fixtures, ORG, proxy, tfOk, api, apiOk, fixture, planChanges, stateResources, step } = ctx;
  // ---------------------------------------------------------------- tfe provider
  const provDir = fixture("provider/v1", "provider");
  let ids = {};
  const getWs = async (id) => (await apiOk("GET", `/workspaces/${id}`)).json.data;

  // The provider's own exchanges about its workspace: shown when a provider step fails without an HTTP error.
  let provApplyMark = 0; // proxy mark before the last provider apply
  const wsRelated = () => [
    {
      label: "the provider's writes of its workspace during the last apply",
      since: provApplyMark,
      all: true,
      match: (x) =>
        x.method !== "GET" &&
        (x.path.split("?")[0] === `/api/v2/organizations/${ORG}/workspaces` || (ids.workspace && x.path.startsWith(`/api/v2/workspaces/${ids.workspace}`))),
    },
    {
      label: "the provider's last read of the workspace",
      since: 0,
      match: (x) => x.method === "GET" && ids.workspace && x.path.split("?")[0] === `/api/v2/workspaces/${ids.workspace}`,
      pick: ["tag-names", "execution-mode", "terraform-version"],
    },
  ];

  // Checks the API against the configuration `v` (the attributes v1 / v2 set).
  async function checkProviderObjects(v) {
    const res = await stateResources(provDir);
    ids = {
      project: res["tfe_project.main"]?.id,
      workspace: res["tfe_workspace.main"]?.id,
      writers: res["tfe_team.writers"]?.id,
      custom: res["tfe_team.custom"]?.id,
      accessWriters: res["tfe_team_access.writers"]?.id,
      accessCustom: res["tfe_team_access.custom"]?.id,
      projectAccess: res["tfe_team_project_access.writers"]?.id,
    };
    for (const [k, id] of Object.entries(ids)) check(id, `no ${k} id in the provider's state`);
    const problems = [];
    const expect = (what, got, want) => {
      if (canon(got) !== canon(want)) problems.push(`${what}: API has ${JSON.stringify(got)}, configuration says ${JSON.stringify(want)}`);
    };
    const project = (await apiOk("GET", `/projects/${ids.project}`)).json.data;
    expect("project name", project.attributes.name, v.projectName);
    expect("project description", project.attributes.description, v.projectDescription);
    const ws = await getWs(ids.workspace);
    const a = ws.attributes;
    expect("workspace description", a.description, v.description);
    expect("workspace auto-apply", a["auto-apply"], v.autoApply);
    expect("workspace working-directory", a["working-directory"], v.workingDirectory);
    expect("workspace terraform-version", a["terraform-version"], v.terraformVersion);
    expect("workspace project", ws.relationships?.project?.data?.id, ids.project);
    expect("workspace execution-mode", a["execution-mode"], v.executionMode);
    expect("workspace tag-names (sorted)", [...(a["tag-names"] ?? [])].sort(), [...v.tagNames].sort());
    const bindings = (await apiOk("GET", `/workspaces/${ids.workspace}/tag-bindings`)).json.data.map((x) => x.attributes);
    const kv = Object.fromEntries(bindings.filter((b) => b.value !== undefined && b.value !== null && b.value !== "").map((b) => [b.key, b.value]));
    expect("workspace tag bindings with a value", kv, v.tags);
    const ta = (await apiOk("GET", `/team-workspaces/${ids.accessWriters}`)).json.data.attributes;
    expect("team access (writers) access", ta.access, v.writersAccess);
    const tc = (await apiOk("GET", `/team-workspaces/${ids.accessCustom}`)).json.data.attributes;
    expect("team access (custom) access", tc.access, "custom");
    for (const [k, want] of Object.entries(v.custom)) expect(`team access (custom) ${k}`, tc[k], want);
    const tp = (await apiOk("GET", `/team-projects/${ids.projectAccess}`)).json.data.attributes;
    expect("team project access", tp.access, v.projectAccess);
    check(problems.length === 0, `the API disagrees with the applied configuration: ${problems.join("; ")}`, undefined, wsRelated());
  }
  const V1 = {
    projectName: "clients-provider",
    projectDescription: "Project managed by terraform-provider-tfe",
    description: "Workspace managed by terraform-provider-tfe",
    autoApply: true,
    workingDirectory: "infra/app",
    terraformVersion: "1.11.4",
    executionMode: "local",
    tagNames: ["clients-prov", "blue"],
    tags: { stage: "prov-dev", owner: "clients" },
    writersAccess: "write",
    custom: { runs: "plan", variables: "read", "state-versions": "read-outputs", "sentinel-mocks": "none", "workspace-locking": false, "run-tasks": false },
    projectAccess: "maintain",
  };
  const V2 = {
    ...V1,
    projectName: "clients-provider-2",
    projectDescription: "Project managed by terraform-provider-tfe, changed",
    description: "Workspace managed by terraform-provider-tfe, changed",
    autoApply: false,
    workingDirectory: "infra/app2",
    terraformVersion: "~> 1.10.0",
    executionMode: "remote",
    tagNames: ["clients-prov", "green"],
    tags: { stage: "prov-dev", owner: "platform" },
    writersAccess: "read",
    custom: { runs: "apply", variables: "write", "state-versions": "read", "sentinel-mocks": "read", "workspace-locking": true, "run-tasks": false },
    projectAccess: "write",
  };

  await step("provider: apply (project, workspace, settings, teams, team access, project access, data sources)", async () => {
    // With dev_overrides there is nothing for `terraform init` to install: plan and apply run without it.
    provApplyMark = proxy.mark();
    await tfOk(provDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  });

  await step("provider: every resource matches the API", async () => {
    await checkProviderObjects(V1);
  });

  await step("provider: data sources (tfe_workspace, tfe_workspace_ids, tfe_project, tfe_outputs)", async () => {
    const r = await tfOk(provDir, ["output", "-json"]);
    const o = JSON.parse(r.out);
    const problems = [];
    const d = o.data_workspace?.value ?? {};
    if (d.id !== ids.workspace) problems.push(`data.tfe_workspace id ${d.id} != ${ids.workspace}`);
    if (d.description !== V1.description) problems.push(`data.tfe_workspace description ${JSON.stringify(d.description)}`);
    if (d.project_id !== ids.project) problems.push(`data.tfe_workspace project_id ${d.project_id}`);
    if (d.working_directory !== V1.workingDirectory) problems.push(`data.tfe_workspace working_directory ${d.working_directory}`);
    if (!sameSet(d.tag_names ?? [], V1.tagNames)) problems.push(`data.tfe_workspace tag_names ${JSON.stringify(d.tag_names)}`);
    const all = (await apiOk("GET", `/organizations/${ORG}/workspaces?page%5Bsize%5D=100`)).json.data;
    const wantAll = Object.fromEntries(all.map((w) => [w.attributes.name, w.id]));
    if (JSON.stringify(Object.entries(o.all_ids?.value ?? {}).sort()) !== JSON.stringify(Object.entries(wantAll).sort())) {
      problems.push(`tfe_workspace_ids names=["*"]: ${JSON.stringify(o.all_ids?.value)}, the API lists ${JSON.stringify(wantAll)}`);
    }
    if (JSON.stringify(o.by_tag_ids?.value) !== JSON.stringify({ "prov-main": ids.workspace }))
      problems.push(`tfe_workspace_ids tag_names=["clients-prov"]: ${JSON.stringify(o.by_tag_ids?.value)}`);
    if (JSON.stringify(o.by_binding_ids?.value) !== JSON.stringify({ "prov-main": ids.workspace }))
      problems.push(`tfe_workspace_ids tag_filters stage=prov-dev: ${JSON.stringify(o.by_binding_ids?.value)}`);
    const p = o.data_project?.value ?? {};
    if (p.id !== ids.project) problems.push(`data.tfe_project id ${p.id} != ${ids.project}`);
    if (!sameSet(p.workspace_ids ?? [], [ids.workspace])) problems.push(`data.tfe_project workspace_ids ${JSON.stringify(p.workspace_ids)}`);
    const other = o.other_outputs?.value ?? {};
    if (other.answer !== 42 || other.migrated !== "local-first") problems.push(`data.tfe_outputs (cb-migrated) values ${JSON.stringify(other)}`);
    check(problems.length === 0, problems.join("; "), r, wsRelated());
  });

  await step("provider: a second plan shows no changes", async () => {
    const p = await planChanges(provDir);
    check(p.code === 0 && p.changes.length === 0, `the second plan is not empty: ${planProblem(p)}`, p.result, wsRelated());
  });

  await step("provider: a changed configuration applied and checked against the API", async () => {
    cpSync(join(fixtures, "provider", "v2", "main.tf"), join(provDir, "main.tf"));
    provApplyMark = proxy.mark();
    await tfOk(provDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
    await checkProviderObjects(V2);
    const p = await planChanges(provDir);
    check(p.code === 0 && p.changes.length === 0, `the plan after the change is not empty: ${planProblem(p)}`, p.result, wsRelated());
  });

  await step("provider: destroy, with every resource gone afterwards", async () => {
    await tfOk(provDir, ["destroy", "-auto-approve", "-input=false", "-no-color"]);
    const paths = {
      project: `/projects/${ids.project}`,
      workspace: `/workspaces/${ids.workspace}`,
      "team writers": `/teams/${ids.writers}`,
      "team custom": `/teams/${ids.custom}`,
      "team access writers": `/team-workspaces/${ids.accessWriters}`,
      "team access custom": `/team-workspaces/${ids.accessCustom}`,
      "team project access": `/team-projects/${ids.projectAccess}`,
    };
    const missing = Object.entries(ids)
      .filter(([, id]) => !id)
      .map(([k]) => k);
    check(missing.length === 0, `the provider's state never held ids for: ${missing.join(", ")} (an earlier provider step failed)`);
    const left = [];
    for (const [what, path] of Object.entries(paths)) {
      const r = await api("GET", path);
      if (r.status !== 404) left.push(`${what} (GET /api/v2${path} -> ${r.status})`);
    }
    check(left.length === 0, `still there after destroy: ${left.join(", ")}`);
  });

  // ---------------------------------------------------------------- tfe provider: variables and variable sets
  const varsDir = fixture("provider/variables", "provider-variables");
  const varsIds = {};

  await step("provider: variables and a variable set applied and checked against the API (sensitive value never shown)", async () => {
    await tfOk(varsDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
    const res = await stateResources(varsDir);
    varsIds.workspace = res["tfe_workspace.vars"]?.id;
    varsIds.set = res["tfe_variable_set.shared"]?.id;
    check(varsIds.workspace && varsIds.set, "no workspace or variable set id in the provider's state");
    const vars = (await apiOk("GET", `/workspaces/${varsIds.workspace}/vars`)).json.data.map((v) => v.attributes);
    const byKey = Object.fromEntries(vars.map((v) => [v.key, v]));
    const problems = [];
    const want = {
      region: ["eu-west-1", "terraform", false, false],
      TF_LOG: ["info", "env", false, false],
      sizes: ["[1, 2, 3]", "terraform", true, false],
      db_password: [null, "terraform", false, true],
    };
    for (const [key, [value, category, hcl, sensitive]] of Object.entries(want)) {
      const v = byKey[key];
      if (!v) problems.push(`variable ${key} missing`);
      else if (v.value !== value || v.category !== category || v.hcl !== hcl || v.sensitive !== sensitive)
        problems.push(`variable ${key}: ${JSON.stringify(v)}`);
    }
    if (vars.length !== 4) problems.push(`${vars.length} workspace variables, want 4`);
    const set = (await apiOk("GET", `/varsets/${varsIds.set}`)).json.data;
    if (set.attributes.name !== "clients-shared") problems.push(`variable set name ${set.attributes.name}`);
    const applied = (await apiOk("GET", `/workspaces/${varsIds.workspace}/varsets`)).json.data.map((x) => x.id);
    if (!applied.includes(varsIds.set)) problems.push(`the set is not applied to the workspace: ${JSON.stringify(applied)}`);
    const setVars = (await apiOk("GET", `/varsets/${varsIds.set}/relationships/vars`)).json.data.map((v) => `${v.attributes.key}=${v.attributes.value}`);
    if (JSON.stringify(setVars) !== JSON.stringify(["SHARED_FLAG=yes"])) problems.push(`the set's variables: ${JSON.stringify(setVars)}`);
    const raw = JSON.stringify((await apiOk("GET", `/workspaces/${varsIds.workspace}/all-vars`)).json);
    if (raw.includes("clients-s3cret-value")) problems.push("the sensitive value appears in /all-vars");
    check(problems.length === 0, problems.join("; "));
  });

  await step("provider: variables, a second plan shows no changes", async () => {
    const p = await planChanges(varsDir);
    check(p.code === 0 && p.changes.length === 0, `the second plan is not empty: ${planProblem(p)}`, p.result);
  });

  await step("provider: variables destroyed, the workspace and the set gone", async () => {
    await tfOk(varsDir, ["destroy", "-auto-approve", "-input=false", "-no-color"]);
    const left = [];
    for (const path of [`/workspaces/${varsIds.workspace}`, `/varsets/${varsIds.set}`]) {
      const r = await api("GET", path);
      if (r.status !== 404) left.push(`GET /api/v2${path} -> ${r.status}`);
    }
    check(left.length === 0, `still there after destroy: ${left.join(", ")}`);
  });
}
