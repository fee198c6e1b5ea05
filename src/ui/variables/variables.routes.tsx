/** @jsxImportSource hono/jsx */
/**
 * A workspace's variables in the web UI: each form calls the service its API endpoint calls (GET, POST, PATCH and
 * DELETE /workspaces/:id/vars), which authorises again; a refusal of the input shows the API's reasons next to the
 * form (422), any other refusal is the API's answer as an error page (404 for a caller who may not act).
 */
import { Hono } from "hono";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import type { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
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
import { readByName, type Readable } from "../../workspaces/workspaces.service";
import { callerOf, type Ctx, flagsOf, nameOf, orgOf, wsPath } from "../context";
import { definePage } from "../define-page";
import { type Form, reasonsOf, type Refusal, refusesInput, text, ticked } from "../forms";
import { VariableEditPage, VariablesPage, type VarsetRow } from "./variables.view";

export const variablesUi = new Hono<AppEnv>();

// ---- variables: as GET, POST, PATCH and DELETE /workspaces/:id/vars ----

const varsPath = (c: Ctx) => `${wsPath(orgOf(c), nameOf(c))}/variables`;

async function variablesPage(c: Ctx, refusal?: Refusal): Promise<Response> {
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

definePage(variablesUi, "get", "/:organization/workspaces/:name/variables", "variables.read", (c) => variablesPage(c));

definePage(variablesUi, "post", "/:organization/workspaces/:name/variables", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const refusal = (e: ApiError): Refusal => ({ form: "add-variable", values: sentVariable(form), errors: reasonsOf(e) });
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

function editPage(c: Ctx, caller: Caller, readable: Readable, variable: VariableView, refusal?: Refusal): Response | Promise<Response> {
  const ws = { organization: readable.scope.access.organization.name, name: readable.record.name };
  return c.html(<VariableEditPage principal={caller.principal} ws={ws} variable={variable} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(variablesUi, "get", "/:organization/workspaces/:name/variables/:var_id/edit", "variables.write", async (c) => {
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  return editPage(c, caller, readable, variable);
});

definePage(variablesUi, "post", "/:organization/workspaces/:name/variables/:var_id", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  const refusal = (e: ApiError): Refusal => ({ form: "edit-variable", values: sentVariable(form, variable), errors: reasonsOf(e) });
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

definePage(variablesUi, "post", "/:organization/workspaces/:name/variables/:var_id/delete", "variables.write", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const { readable, variable } = await writableVariable(caller, c);
  if (!ticked(form, "confirm")) {
    return editPage(c, caller, readable, variable, { form: "delete-variable", values: {}, errors: ["Tick the box to confirm the deletion."] });
  }
  await deleteWorkspaceVariable(caller, readable.record.id, variable.id);
  return c.redirect(varsPath(c), 303);
});
