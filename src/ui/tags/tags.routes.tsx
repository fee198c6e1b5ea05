/** @jsxImportSource hono/jsx */
/**
 * A workspace's tags in the web UI: each form calls the service its API endpoint calls (POST/DELETE
 * /workspaces/:id/relationships/tags, PATCH /workspaces/:id/tag-bindings, PATCH /workspaces/:id), which authorises
 * again; a refusal of the input shows the API's reasons next to the form (422).
 */
import { Hono } from "hono";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import { addWorkspaceFlatTags, removeWorkspaceFlatTags, upsertWorkspaceTagBindings, workspaceEffectiveTagBindings } from "../../tags/tags.service";
import { readByName, type Readable } from "../../workspaces/workspaces.service";
import { updateWorkspace } from "../../workspaces/workspaces.write.service";
import { callerOf, type Ctx, flagsOf, nameOf, orgOf, wsPath } from "../context";
import { definePage } from "../define-page";
import { reasonsOf, type Refusal, refusesInput, text } from "../forms";
import { TagsPage } from "./tags.view";

export const tagsUi = new Hono<AppEnv>();

// ---- tags: as POST/DELETE /workspaces/:id/relationships/tags, PATCH /workspaces/:id/tag-bindings and PATCH /workspaces/:id ----

const tagsPath = (c: Ctx) => `${wsPath(orgOf(c), nameOf(c))}/tags`;

async function tagsPage(c: Ctx, refusal?: Refusal): Promise<Response> {
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
    if (refusesInput(e)) return tagsPage(c, { form: formName, values, errors: reasonsOf(e) });
    throw e;
  }
  return c.redirect(tagsPath(c), 303);
}

definePage(tagsUi, "get", "/:organization/workspaces/:name/tags", "workspace.read", (c) => tagsPage(c));

definePage(tagsUi, "post", "/:organization/workspaces/:name/tags", "workspace.manage-tags", async (c) => {
  const name = text(await c.req.parseBody(), "name").trim();
  return tagForm(c, "flat-tags", { name }, (caller, r) => addWorkspaceFlatTags(caller, r.record.id, [{ attributes: { name } }]));
});

definePage(tagsUi, "post", "/:organization/workspaces/:name/tags/delete", "workspace.manage-tags", async (c) => {
  const name = text(await c.req.parseBody(), "name");
  return tagForm(c, "flat-tags", {}, (caller, r) => removeWorkspaceFlatTags(caller, r.record.id, [{ attributes: { name } }]));
});

definePage(tagsUi, "post", "/:organization/workspaces/:name/tags/bindings", "workspace.manage-tags", async (c) => {
  const form = await c.req.parseBody();
  const values = { key: text(form, "key").trim(), value: text(form, "value") };
  return tagForm(c, "tag-bindings", values, (caller, r) => upsertWorkspaceTagBindings(caller, r.record.id, [values]));
});

// Removing one binding is PATCH /workspaces/:id with the bindings that stay (the API's only way to remove one).
definePage(tagsUi, "post", "/:organization/workspaces/:name/tags/bindings/delete", "workspace.update", async (c) => {
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
