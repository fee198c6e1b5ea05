/** @jsxImportSource hono/jsx */
/**
 * A workspace's daily work in the web UI: creating one in a project, its variables and its tags. Each form
 * calls the service its API endpoint calls (POST /organizations/:name/workspaces, /workspaces/:id/vars,
 * /workspaces/:id/relationships/tags, /workspaces/:id/tag-bindings, PATCH /workspaces/:id), which authorises
 * again; a refusal of the input shows the API's reasons next to the form (422), any other refusal is the
 * API's answer as an error page (404 for a caller who may not act).
 */
import { Hono } from "hono";
import { projectRights } from "../../auth/access";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { addWorkspaceFlatTags, removeWorkspaceFlatTags, upsertWorkspaceTagBindings, workspaceEffectiveTagBindings } from "../../tags/tags.service";
import { createVariableBody, updateVariableBody } from "../../variables/variables.schemas";
import {
  createWorkspaceVariable,
  deleteWorkspaceVariable,
  listWorkspaceVariables,
  readWorkspaceVariable,
  updateWorkspaceVariable,
} from "../../variables/variables.service";
import type { VariableView } from "../../variables/variables.types";
import { listWorkspaceVarsets } from "../../varsets/varsets.service";
import { workspaceCreateBody } from "../../workspaces/workspaces.schemas";
import { readByName, type Readable, type WorkspaceScope } from "../../workspaces/workspaces.service";
import { createWorkspace, projectsForNewWorkspace, updateWorkspace } from "../../workspaces/workspaces.write.service";
import { callerOf, type Ctx, orgPath, wsPath } from "../context";
import { type FormRefusal, NewWorkspacePage, TagsPage, VariableEditPage, VariablesPage, type VarsetRow } from "./variables.view";
import { definePage } from "../define-page";

export const workspaceFormsUi = new Hono<AppEnv>();

type Form = Record<string, string | File | (string | File)[]>;
const text = (form: Form, k: string) => (typeof form[k] === "string" ? (form[k] as string) : "");
const ticked = (form: Form, k: string) => text(form, k) === "on";

/** A refusal of the input: a 400 or 422, or a 404 naming a field (an unknown project), never one of the target. */
const refusesInput = (e: unknown): e is ApiError =>
  e instanceof ApiError && (e.status === 400 || e.status === 422 || (e.status === 404 && e.errors.some((x) => !!x.source && "pointer" in x.source)));
const reasons = (e: ApiError) => e.errors.map((x) => x.detail ?? x.title);

const orgOf = (c: Ctx) => c.req.param("organization") ?? "";
const nameOf = (c: Ctx) => c.req.param("name") ?? "";
const flagsOf = (r: Readable) => (r.scope.serialize(r.record).attributes as { permissions: Record<string, boolean> }).permissions;

// ---- a new workspace: as POST /organizations/:name/workspaces ----

/**
 * Whether the list page links the new-workspace form, from what its one batch already read (no extra round
 * trip): creation everywhere (owners, manage-workspaces), or a grant allowing it on a project of the listed
 * workspaces. Only a link: the form's page and the create authorise again.
 */
export function mayCreateWorkspaces(scope: WorkspaceScope): boolean {
  const { access, grants } = scope;
  if (projectRights(access, access.organization.defaultProjectId, []).createWorkspaces) return true;
  return grants.projects.some((g) => projectRights(access, g.targetId, grants.projects).createWorkspaces);
}

async function newWorkspacePage(c: Ctx, refusal?: FormRefusal): Promise<Response> {
  const caller = callerOf(c);
  const organization = orgOf(c);
  // Also the authorisation: a caller who may create in no project is refused as the API's create refuses it.
  const projects = await projectsForNewWorkspace(caller, organization);
  return c.html(<NewWorkspacePage principal={caller.principal} organization={organization} projects={projects} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(workspaceFormsUi, "get", "/:organization/workspaces/new", "workspace.create", (c) => newWorkspacePage(c));

definePage(workspaceFormsUi, "post", "/:organization/workspaces/new", "workspace.create", async (c) => {
  const form = await c.req.parseBody();
  const fields = ["name", "project", "description", "execution-mode", "terraform-version"];
  const values: Record<string, string> = { ...Object.fromEntries(fields.map((k) => [k, text(form, k)])), "auto-apply": ticked(form, "auto-apply") ? "on" : "" };
  const attributes: Record<string, unknown> = { name: values.name.trim(), description: values.description, "auto-apply": ticked(form, "auto-apply") };
  if (values["execution-mode"]) attributes["execution-mode"] = values["execution-mode"];
  if (values["terraform-version"].trim()) attributes["terraform-version"] = values["terraform-version"].trim();
  const data = {
    type: "workspaces",
    attributes,
    ...(values.project ? { relationships: { project: { data: { type: "projects", id: values.project } } } } : {}),
  };
  const refused = (e: ApiError) => newWorkspacePage(c, { form: "new-workspace", values, errors: reasons(e) });
  const parsed = workspaceCreateBody.safeParse({ data });
  if (!parsed.success) return refused(validationError(parsed.error, "json"));
  try {
    const created = await createWorkspace(callerOf(c), orgOf(c), parsed.data.data);
    return c.redirect(wsPath(orgOf(c), created.workspace.name), 303);
  } catch (e) {
    if (refusesInput(e)) return refused(e);
    throw e;
  }
});

// ---- variables: as GET, POST, PATCH and DELETE /workspaces/:id/vars ----

const varsPath = (c: Ctx) => `${wsPath(orgOf(c), nameOf(c))}/variables`;

async function variablesPage(c: Ctx, refusal?: FormRefusal): Promise<Response> {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c));
  const flags = flagsOf(readable);
  const { record } = readable;
  const [variables, sets] = await Promise.all([listWorkspaceVariables(caller, record.id), listWorkspaceVarsets(caller, record.id, { number: 1, size: 100 })]);
  const varsets: VarsetRow[] = sets.items.map((s) => ({
    id: s.id,
    name: s.name,
    scope: s.global ? "global" : s.workspaceIds.includes(record.id) ? "workspace" : "project",
    priority: s.priority,
  }));
  return c.html(
    <VariablesPage
      principal={caller.principal}
      ws={{ organization: readable.scope.access.organization.name, name: record.name }}
      canWrite={flags["can-update-variable"] === true}
      variables={variables}
      varsets={varsets}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

/** The variable form's fields as the API's attributes; a sensitive variable's value only when a new one is typed. */
function variableAttributes(form: Form, current?: VariableView): Record<string, unknown> {
  const attributes: Record<string, unknown> = {
    key: text(form, "key").trim(),
    category: text(form, "category"),
    description: text(form, "description"),
    hcl: ticked(form, "hcl"),
    sensitive: ticked(form, "sensitive"),
  };
  const value = text(form, "value");
  if (!current?.sensitive || value !== "") attributes.value = value;
  return attributes;
}

/** What a refused variable form shows again: never a value that was (or was to become) sensitive. */
function sentVariable(form: Form, current?: VariableView): Record<string, string> {
  const sensitive = ticked(form, "sensitive") || current?.sensitive === true;
  return {
    key: text(form, "key"),
    category: text(form, "category"),
    description: text(form, "description"),
    hcl: ticked(form, "hcl") ? "on" : "",
    sensitive: ticked(form, "sensitive") ? "on" : "",
    value: sensitive ? "" : text(form, "value"),
  };
}

definePage(workspaceFormsUi, "get", "/:organization/workspaces/:name/variables", "variables.read", (c) => variablesPage(c));

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/variables", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const refusal = (e: ApiError): FormRefusal => ({ form: "add-variable", values: sentVariable(form), errors: reasons(e) });
  const parsed = createVariableBody.safeParse({ data: { type: "vars", attributes: variableAttributes(form) } });
  if (!parsed.success) {
    // Only a caller who may write variables learns why (others get the API's 404).
    await readByName(caller, orgOf(c), nameOf(c), "variables.write");
    return variablesPage(c, refusal(validationError(parsed.error, "json")));
  }
  const { record } = await readByName(caller, orgOf(c), nameOf(c));
  try {
    await createWorkspaceVariable(caller, record.id, parsed.data.data.attributes);
  } catch (e) {
    if (refusesInput(e)) return variablesPage(c, refusal(e));
    throw e;
  }
  return c.redirect(varsPath(c), 303);
});

/** The workspace and one of its variables, for a caller who may write its variables (404 otherwise). */
async function writableVariable(caller: Caller, c: Ctx): Promise<{ readable: Readable; variable: VariableView }> {
  const readable = await readByName(caller, orgOf(c), nameOf(c), "variables.write");
  const variable = await readWorkspaceVariable(caller, readable.record.id, c.req.param("var_id") ?? "");
  return { readable, variable };
}

function editPage(c: Ctx, caller: Caller, readable: Readable, variable: VariableView, refusal?: FormRefusal): Response | Promise<Response> {
  const ws = { organization: readable.scope.access.organization.name, name: readable.record.name };
  return c.html(<VariableEditPage principal={caller.principal} ws={ws} variable={variable} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(workspaceFormsUi, "get", "/:organization/workspaces/:name/variables/:var_id/edit", "variables.write", async (c) => {
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  return editPage(c, caller, readable, variable);
});

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/variables/:var_id", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  const refusal = (e: ApiError): FormRefusal => ({ form: "edit-variable", values: sentVariable(form, variable), errors: reasons(e) });
  const parsed = updateVariableBody.safeParse({ data: { type: "vars", attributes: variableAttributes(form, variable) } });
  if (!parsed.success) return editPage(c, caller, readable, variable, refusal(validationError(parsed.error, "json")));
  try {
    await updateWorkspaceVariable(caller, readable.record.id, variable.id, parsed.data.data.attributes ?? {});
  } catch (e) {
    if (refusesInput(e)) return editPage(c, caller, readable, variable, refusal(e));
    throw e;
  }
  return c.redirect(varsPath(c), 303);
});

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/variables/:var_id/delete", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  if (!ticked(form, "confirm")) {
    return editPage(c, caller, readable, variable, { form: "delete-variable", values: {}, errors: ["Tick the box to confirm the deletion."] });
  }
  await deleteWorkspaceVariable(caller, readable.record.id, variable.id);
  return c.redirect(varsPath(c), 303);
});

// ---- tags: as POST/DELETE /workspaces/:id/relationships/tags, PATCH /workspaces/:id/tag-bindings and PATCH /workspaces/:id ----

const tagsPath = (c: Ctx) => `${wsPath(orgOf(c), nameOf(c))}/tags`;

async function tagsPage(c: Ctx, refusal?: FormRefusal): Promise<Response> {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c));
  const { record, scope } = readable;
  const attributes = scope.serialize(record).attributes as Record<string, unknown>;
  const effective = await workspaceEffectiveTagBindings(caller, record.id);
  const project = scope.projects.get(record.projectId)?.name ?? record.projectId;
  const direct = new Set(effective.record.tagBindings.map((b) => b.key));
  return c.html(
    <TagsPage
      principal={caller.principal}
      ws={{ organization: scope.access.organization.name, name: record.name }}
      canManage={flagsOf(readable)["can-manage-tags"] === true}
      tags={attributes["tag-names"] as string[]}
      bindings={effective.record.tagBindings.map((b) => ({ key: b.key, value: b.value }))}
      inherited={effective.inherited.filter((b) => !direct.has(b.key)).map((b) => ({ key: b.key, value: b.value, project }))}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

/** Runs a tag form's service call on the named workspace: back to the tags page, or the page with the API's reasons. */
async function tagForm(c: Ctx, formName: string, values: Record<string, string>, run: (caller: Caller, readable: Readable) => Promise<unknown>) {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c));
  try {
    await run(caller, readable);
  } catch (e) {
    if (refusesInput(e)) return tagsPage(c, { form: formName, values, errors: reasons(e) });
    throw e;
  }
  return c.redirect(tagsPath(c), 303);
}

definePage(workspaceFormsUi, "get", "/:organization/workspaces/:name/tags", "workspace.read", (c) => tagsPage(c));

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/tags", "workspace.manage-tags", async (c) => {
  const name = text(await c.req.parseBody(), "name").trim();
  return tagForm(c, "flat-tags", { name }, (caller, r) => addWorkspaceFlatTags(caller, r.record.id, [{ attributes: { name } }]));
});

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/tags/delete", "workspace.manage-tags", async (c) => {
  const name = text(await c.req.parseBody(), "name");
  return tagForm(c, "flat-tags", {}, (caller, r) => removeWorkspaceFlatTags(caller, r.record.id, [{ attributes: { name } }]));
});

definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/tags/bindings", "workspace.manage-tags", async (c) => {
  const form = await c.req.parseBody();
  const values = { key: text(form, "key").trim(), value: text(form, "value") };
  return tagForm(c, "tag-bindings", values, (caller, r) => upsertWorkspaceTagBindings(caller, r.record.id, [values]));
});

// Removing one binding is PATCH /workspaces/:id with the bindings that stay (the API's only way to remove one).
definePage(workspaceFormsUi, "post", "/:organization/workspaces/:name/tags/bindings/delete", "workspace.update", async (c) => {
  const key = text(await c.req.parseBody(), "key");
  return tagForm(c, "tag-bindings", {}, (caller, r) =>
    updateWorkspace(caller, r.record.id, {
      type: "workspaces",
      relationships: {
        "tag-bindings": {
          data: r.record.tagBindings.filter((b) => b.key !== key).map((b) => ({ type: "tag-bindings" as const, attributes: { key: b.key, value: b.value } })),
        },
      },
    }),
  );
});

export const newWorkspacePath = (organization: string) => `${orgPath(organization, "workspaces")}/new`;
