/** @jsxImportSource hono/jsx */
/**
 * A workspace's run triggers in the web UI: each form calls the service its API endpoint calls (GET, POST
 * /workspaces/:id/run-triggers, DELETE /run-triggers/:id), which authorises again; a refused input shows the API's
 * reasons next to the form (422), any other refusal is the API's answer as an error page.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { createRunTrigger, listWorkspaceRunTriggers, removeRunTrigger, showRunTrigger } from "../../run-triggers/run-triggers.service";
import { idByName, readByName } from "../../workspaces/workspaces.service";
import { callerOf, type Ctx, flagsOf, nameOf, orgOf } from "../context";
import { definePage } from "../define-page";
import { attempt, formOf, type Refusal, text } from "../forms";
import { RunTriggersPage, triggersPath } from "./run-triggers.view";

export const runTriggersUi = new Hono<AppEnv>();

async function page(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c));
  const id = readable.record.id;
  const [inbound, outbound] = await Promise.all([
    listWorkspaceRunTriggers(caller, id, { type: "inbound", include: undefined }),
    listWorkspaceRunTriggers(caller, id, { type: "outbound", include: undefined }),
  ]);
  const ws = { organization: readable.scope.access.organization.name, name: readable.record.name };
  return c.html(
    <RunTriggersPage
      principal={caller.principal}
      ws={ws}
      canManage={flagsOf(readable)["can-update"] === true}
      autoApply={readable.record.settings["auto-apply-run-trigger"]}
      inbound={inbound.triggers}
      outbound={outbound.triggers}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

const here = (c: Ctx) => triggersPath({ organization: orgOf(c), name: nameOf(c) });

definePage(runTriggersUi, "get", "/:organization/workspaces/:name/run-triggers", "workspace.read", (c) => page(c));

definePage(runTriggersUi, "post", "/:organization/workspaces/:name/run-triggers", "workspace.update", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const source = text(form, "source").trim();
  return attempt(
    c,
    async () => {
      const sourceId = await idByName(caller, orgOf(c), source).catch((e) => {
        throw e instanceof ApiError && e.status === 404
          ? ApiError.of("not_found", { detail: `No workspace named ${source} in this organisation`, pointer: "/data/relationships/sourceable/data/id" })
          : e;
      });
      return createRunTrigger(caller, record.id, sourceId);
    },
    here(c),
    (errors) => page(c, { form: "add-source", values: { source }, errors }),
  );
});

definePage(runTriggersUi, "post", "/:organization/workspaces/:name/run-triggers/:run_trigger_id/delete", "workspace.update", async (c) => {
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const { trigger } = await showRunTrigger(caller, c.req.param("run_trigger_id") ?? "", undefined);
  // A trigger of another workspace is not this page's to remove.
  if (trigger.workspaceId !== record.id) throw ApiError.of("not_found");
  await removeRunTrigger(caller, trigger.id);
  return c.redirect(here(c), 303);
});
