/** @jsxImportSource hono/jsx */
/**
 * The organisation's workspaces, listed by the API's own query schema and service (GET /organizations/:name/workspaces),
 * and a new one created as POST /organizations/:name/workspaces creates it (a refused input: the API's reasons next
 * to the form, 422).
 */
import { Hono } from "hono";
import { projectRights } from "../../auth/access";
import type { AppEnv } from "../../env";
import type { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { parseListQuery } from "../../workspaces/workspaces.filters";
import { listWorkspacePage } from "../../workspaces/workspaces.list.service";
import { workspaceCreateBody } from "../../workspaces/workspaces.schemas";
import type { WorkspaceScope } from "../../workspaces/workspaces.service";
import { createWorkspace, projectsForNewWorkspace } from "../../workspaces/workspaces.write.service";
import { callerOf, type Ctx, orgOf, wsPath } from "../context";
import { definePage } from "../define-page";
import { reasonsOf, type Refusal, refusesInput, text, ticked } from "../forms";
import { type ListItem, NewWorkspacePage, WorkspaceListPage } from "./workspaces.view";

export const workspacesUi = new Hono<AppEnv>();

definePage(workspacesUi, "get", "/:organization/workspaces", "organization.read", async (c) => {
  const organization = c.req.param("organization");
  const query = new URL(c.req.url).searchParams;
  // The API's own query schema and service: the same query gives the same workspaces, from the same one D1
  // batch, which also brings the project filter's options, project names and lock holders' names.
  const { spec, page } = parseListQuery(c.req.query());
  const caller = callerOf(c);
  const result = await listWorkspacePage(caller, organization, spec, { projectOptions: true });
  const rows: ListItem[] = result.records.map((r) => {
    const a = result.scope.serialize(r).attributes as Record<string, unknown>;
    return {
      name: r.name,
      project: result.scope.projects.get(r.projectId)?.name ?? r.projectId,
      lock: r.lock,
      holderName: result.holderNames.get(r.id) ?? null,
      tags: a["tag-names"] as string[],
      latestChangeAt: r.latestChangeAt,
      resourceCount: r.resourceCount,
      executionMode: String(a["execution-mode"]),
    };
  });
  return c.html(
    <WorkspaceListPage
      principal={caller.principal}
      organization={organization}
      rows={rows}
      total={result.total}
      page={page}
      query={query}
      projects={result.projectOptions ?? []}
      canCreate={mayCreateWorkspaces(result.scope)}
      access={result.scope.access}
    />,
  );
});

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

async function newWorkspacePage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const organization = orgOf(c);
  // Also the authorisation: a caller who may create in no project is refused as the API's create refuses it.
  const projects = await projectsForNewWorkspace(caller, organization);
  return c.html(<NewWorkspacePage principal={caller.principal} organization={organization} projects={projects} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(workspacesUi, "get", "/:organization/workspaces/new", "workspace.create", (c) => newWorkspacePage(c));

definePage(workspacesUi, "post", "/:organization/workspaces/new", "workspace.create", async (c) => {
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
  const refused = (e: ApiError) => newWorkspacePage(c, { form: "new-workspace", values, errors: reasonsOf(e) });
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
