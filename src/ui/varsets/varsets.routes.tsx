/** @jsxImportSource hono/jsx */
/**
 * Variable sets in the UI: the organisation's sets and a set's page, each form calling the service its API endpoint
 * calls (src/varsets/varsets.service.ts), which authorises it again. A refused input shows the page again with the
 * API's reasons (422); input the API's schema refuses is explained only to a caller who may manage the set.
 */
import { Hono } from "hono";
import type { ZodError } from "zod";
import { requireOrgAccess } from "../../auth/access";
import { allows, authorize } from "../../auth/requirements";
import { ApiError } from "../../errors";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { validationError } from "../../jsonapi/validation";
import { parseProjectQuery } from "../../projects/projects.filters";
import { listProjectsFor } from "../../projects/projects.service";
import { createVariableBody } from "../../variables/variables.schemas";
import { createVarsetBody } from "../../varsets/varsets.schemas";
import {
  changeProjects,
  changeWorkspaces,
  createVarset,
  createVarsetVariable,
  deleteVarset,
  deleteVarsetVariable,
  listOrganizationVarsets,
  listVarsetVariables,
  manageableVarset,
  mayManageVarset,
  showVarset,
  updateVarset,
  updateVarsetVariable,
} from "../../varsets/varsets.service";
import { readByName } from "../../workspaces/workspaces.service";
import { callerOf, type Ctx, orgOf } from "../context";
import { attempt, type Form, formOf, reasonsOf, type Refusal, text, ticked } from "../forms";
import { orgPage, standingIn } from "../organizations/organizations.parts";
import { definePage } from "../define-page";
import { VarsetListPage, VarsetPage } from "./varsets.view";

export const varsetsUi = new Hono<AppEnv>();

const setAttributes = createVarsetBody.shape.data.shape.attributes;
const variableAttributes = createVariableBody.shape.data.shape.attributes;

const idOf = (c: Ctx) => c.req.param("id") ?? "";
const setPath = (c: Ctx) => orgPage(orgOf(c), "varsets", idOf(c));

async function listPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const organization = orgOf(c);
  const caller = callerOf(c);
  const query = new URL(c.req.url).searchParams;
  const page = pageOf(c.req.query());
  const [{ items, total }, access] = await Promise.all([
    listOrganizationVarsets(caller, organization, undefined, page),
    requireOrgAccess(caller, { name: organization }),
  ]);
  const mayCreate = allows(access.principal, "varsets.manage", { access });
  return c.html(
    <VarsetListPage access={access} sets={items} total={total} page={page} query={query} mayCreate={mayCreate} refusal={refusal} />,
    refusal ? 422 : 200,
  );
}

definePage(varsetsUi, "get", "/:organization/varsets", "varsets.read", (c) => listPage(c));

/** The form's name, description, global and priority, as the API's attributes. */
function setFields(form: Form) {
  const values = {
    name: text(form, "name"),
    description: text(form, "description"),
    global: String(ticked(form, "global")),
    priority: String(ticked(form, "priority")),
  };
  const attributes = { name: values.name, description: values.description, global: ticked(form, "global"), priority: ticked(form, "priority") };
  return { values, parsed: setAttributes.safeParse(attributes) };
}

const schemaReasons = (error: ZodError) => reasonsOf(validationError(error, "json"));

definePage(varsetsUi, "post", "/:organization/varsets", "varsets.manage", async (c) => {
  const caller = callerOf(c);
  const organization = orgOf(c);
  const { values, parsed } = setFields(await formOf(c));
  if (!parsed.success) {
    // Only a caller who may create sets learns why its input was refused.
    authorize(caller, "varsets.manage", { access: await standingIn(c, organization) });
    return listPage(c, { form: "create", values, errors: schemaReasons(parsed.error) });
  }
  return attempt(
    c,
    () => createVarset(caller, organization, { type: "varsets", attributes: parsed.data }),
    (set) => orgPage(organization, "varsets", set.id),
    (errors) => listPage(c, { form: "create", values, errors }),
  );
});

/** A set's page: the set as GET /varsets/:id shows it with its workspaces and projects included, and its variables. */
async function setPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const { varset: set, included } = await showVarset(caller, idOf(c), ["workspaces", "projects"]);
  // Another organisation's path to the set: not found, as the API's own paths are by id.
  if (set.organization.toLowerCase() !== orgOf(c).toLowerCase()) throw ApiError.of("not_found");
  const [access, variables] = await Promise.all([requireOrgAccess(caller, { id: set.organizationId }), listVarsetVariables(caller, set.id)]);
  const named = (type: string) =>
    included.filter((r) => r.type === type).map((r) => ({ id: r.id, name: String((r.attributes as Record<string, unknown>).name) }));
  const projects = named("projects");
  const ownerProject = set.projectId ? (projects.find((p) => p.id === set.projectId)?.name ?? set.projectId) : null;
  const manage = await mayManageVarset(caller, access, set);
  return c.html(
    <VarsetPage access={access} view={{ set, variables, workspaces: named("workspaces"), projects, ownerProject, manage, refusal }} />,
    refusal ? 422 : 200,
  );
}

definePage(varsetsUi, "get", "/:organization/varsets/:id", "varsets.read", (c) => setPage(c));

/** Input the API's schema refused: explained (the page again) only to a caller who may manage the set; others get the API's 404. */
async function refuseInput(c: Ctx, refusal: Refusal): Promise<Response> {
  await manageableVarset(callerOf(c), idOf(c));
  return setPage(c, refusal);
}

const back = (c: Ctx, form: string, values: Record<string, string>, run: () => Promise<unknown>) =>
  attempt(c, run, setPath(c), (errors) => setPage(c, { form, values, errors }));

definePage(varsetsUi, "post", "/:organization/varsets/:id", "varsets.manage", async (c) => {
  const { values, parsed } = setFields(await formOf(c));
  if (!parsed.success) return refuseInput(c, { form: "settings", values, errors: schemaReasons(parsed.error) });
  // A project-owned set's form has no global box: it sends false, which such a set already is.
  return back(c, "settings", values, () => updateVarset(callerOf(c), idOf(c), { type: "varsets", attributes: parsed.data }));
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/delete", "varsets.manage", async (c) => {
  await deleteVarset(callerOf(c), idOf(c));
  return c.redirect(orgPage(orgOf(c), "varsets"), 303);
});

// ---- variables: as POST, PATCH and DELETE /varsets/:id/relationships/vars ----

function variableFields(form: Form) {
  const values = {
    key: text(form, "key"),
    value: text(form, "value"),
    description: text(form, "description"),
    category: text(form, "category"),
    hcl: String(ticked(form, "hcl")),
    sensitive: String(ticked(form, "sensitive")),
  };
  return values;
}

definePage(varsetsUi, "post", "/:organization/varsets/:id/vars", "varsets.manage", async (c) => {
  const v = variableFields(await formOf(c));
  const parsed = variableAttributes.safeParse({ ...v, hcl: v.hcl === "true", sensitive: v.sensitive === "true" });
  // The value of a refused sensitive variable is not sent back to the browser.
  const values = v.sensitive === "true" ? { ...v, value: "" } : v;
  if (!parsed.success) return refuseInput(c, { form: "add-var", values, errors: schemaReasons(parsed.error) });
  return back(c, "add-var", values, () => createVarsetVariable(callerOf(c), idOf(c), parsed.data));
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/vars/:var_id", "varsets.manage", async (c) => {
  const form = await formOf(c);
  const v = variableFields(form);
  const varId = c.req.param("var_id");
  const name = `var-${varId}`;
  // A sensitive variable's form has no sensitive box and an empty value keeps its value (it is write-only).
  const sensitiveForm = !("sensitive" in form) && text(form, "value") === "";
  const attributes: Record<string, unknown> = { key: v.key, description: v.description, category: v.category, hcl: v.hcl === "true" };
  if (!sensitiveForm) attributes.value = v.value;
  if (v.sensitive === "true") attributes.sensitive = true;
  const parsed = variableAttributes.partial().safeParse(attributes);
  const values = { ...v, value: "" };
  if (!parsed.success) return refuseInput(c, { form: name, values, errors: schemaReasons(parsed.error) });
  return back(c, name, values, () => updateVarsetVariable(callerOf(c), idOf(c), varId, parsed.data));
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/vars/:var_id/delete", "varsets.manage", async (c) => {
  await deleteVarsetVariable(callerOf(c), idOf(c), c.req.param("var_id"));
  return c.redirect(setPath(c), 303);
});

// ---- where it applies: as POST and DELETE /varsets/:id/relationships/{workspaces,projects} ----

/** A name the caller cannot resolve goes to the service as it is, which refuses it with the API's own reason. */
async function orName(find: () => Promise<string | undefined>, name: string): Promise<string> {
  try {
    return (await find()) ?? name;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return name;
    throw e;
  }
}

definePage(varsetsUi, "post", "/:organization/varsets/:id/workspaces", "varsets.manage", async (c) => {
  const name = text(await formOf(c), "name").trim();
  const caller = callerOf(c);
  return back(c, "add-workspace", { name }, async () => {
    const id = await orName(async () => (await readByName(caller, orgOf(c), name)).record.id, name);
    await changeWorkspaces(caller, idOf(c), "add", [id]);
  });
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/workspaces/delete", "varsets.manage", async (c) => {
  await changeWorkspaces(callerOf(c), idOf(c), "remove", [text(await formOf(c), "id")]);
  return c.redirect(setPath(c), 303);
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/projects", "varsets.manage", async (c) => {
  const name = text(await formOf(c), "name").trim();
  const caller = callerOf(c);
  return back(c, "add-project", { name }, async () => {
    const find = async () => (await listProjectsFor(caller, orgOf(c), parseProjectQuery({ "filter[names]": name }), { number: 1, size: 1 })).projects[0]?.id;
    await changeProjects(caller, idOf(c), "add", [name ? await orName(find, name) : name]);
  });
});

definePage(varsetsUi, "post", "/:organization/varsets/:id/projects/delete", "varsets.manage", async (c) => {
  await changeProjects(callerOf(c), idOf(c), "remove", [text(await formOf(c), "id")]);
  return c.redirect(setPath(c), 303);
});
