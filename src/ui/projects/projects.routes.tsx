/** @jsxImportSource hono/jsx */
/** The organisation's projects, listed by the API's own query parser and service (GET /organizations/:name/projects). */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { parseProjectQuery } from "../../projects/projects.filters";
import { listProjectsFor } from "../../projects/projects.service";
import { callerOf } from "../context";
import { definePage } from "../define-page";
import { ProjectsPage } from "./projects.view";

export const projectsUi = new Hono<AppEnv>();

definePage(projectsUi, "get", "/:organization/projects", "organization.read", async (c) => {
  const organization = c.req.param("organization");
  // The filter form sends its empty fields too; an empty field is no filter (the API reads `filter[names]=` as
  // "none of no names", which no one filling a form means).
  const query = new URLSearchParams([...new URL(c.req.url).searchParams].filter(([, v]) => v !== ""));
  const page = pageOf(c.req.query());
  const caller = callerOf(c);
  // The API's own parser and list (GET /organizations/:name/projects): the same query gives the same projects.
  const { projects: found, matching, total, access } = await listProjectsFor(caller, organization, parseProjectQuery(Object.fromEntries(query)), page);
  const projects = found.map((p) => ({ id: p.id, name: p.name, description: p.description, workspaceCount: p.workspaceCount, isDefault: p.isDefault }));
  return c.html(
    <ProjectsPage
      principal={caller.principal}
      organization={organization}
      projects={projects}
      matching={matching}
      total={total}
      page={page}
      query={query}
      access={access}
    />,
  );
});
