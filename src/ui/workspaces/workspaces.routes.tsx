/** @jsxImportSource hono/jsx */
/** The organisation's workspaces, listed by the API's own query schema and service (GET /organizations/:name/workspaces). */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { parseListQuery } from "../../workspaces/workspaces.filters";
import { listWorkspacePage } from "../../workspaces/workspaces.list.service";
import { callerOf } from "../context";
import { definePage } from "../define-page";
import { mayCreateWorkspaces } from "../variables/variables.routes";
import { type ListItem, WorkspaceListPage } from "./workspaces.view";

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
