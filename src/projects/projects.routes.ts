/** Projects (HCP Terraform API docs: Projects): every workspace belongs to one; every organisation has a "Default Project". */
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { includeQuery, listDocument, orgParam, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { withBindings } from "./projects.include";
import { parseProjectQuery } from "./projects.filters";
import { createProjectBody, listProjectsQuery, projectParam, projectResource, updateProjectBody } from "./projects.schemas";
import { serializeProject } from "./projects.serialize";
import { createProject, deleteProject, listProjectsFor, showProject, updateProject } from "./projects.service";
import { defineRoutes } from "../jsonapi/define-route";

const defineRoute = defineRoutes({ tags: ["Projects"] });
export const projects = router();

projects.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/projects",
    action: "projects.manage",
    summary: "Create a project",
    request: { params: orgParam, body: jsonBody(createProjectBody) },
    responses: ok("The project", resourceDocument(projectResource), 201),
  }),
  async (c) => {
    const { project, access } = await createProject(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data);
    return jsonapi(c, { data: serializeProject(project, access) }, 201);
  },
);

projects.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/projects",
    action: "organization.read",
    summary: "List projects",
    request: { params: orgParam, query: listProjectsQuery },
    responses: ok("A page of projects", listDocument(projectResource)),
  }),
  async (c) => {
    const caller = callerOf(c);
    const query = c.req.valid("query");
    const page = pageOf(query);
    const result = await listProjectsFor(caller, c.req.valid("param").organization_name, parseProjectQuery(query), page);
    const data = result.projects.map((p) => serializeProject(p, result.access));
    const inc = await withBindings(caller.db, data, query.include);
    return jsonapi(c, paginated(c, data, page, result.matching, { ...inc, meta: { "status-counts": { total: result.total, matching: result.matching } } }));
  },
);

projects.openapi(
  defineRoute({
    method: "get",
    path: "/projects/{project_id}",
    action: "project.read",
    summary: "Show a project",
    request: { params: projectParam, query: includeQuery },
    responses: ok("The project", resourceDocument(projectResource)),
  }),
  async (c) => {
    const caller = callerOf(c);
    const { project, access } = await showProject(caller, c.req.valid("param").project_id);
    const data = serializeProject(project, access);
    return jsonapi(c, { data, ...(await withBindings(caller.db, [data], c.req.valid("query").include)) });
  },
);

projects.openapi(
  defineRoute({
    method: "patch",
    path: "/projects/{project_id}",
    action: "projects.manage",
    summary: "Update a project",
    request: { params: projectParam, body: jsonBody(updateProjectBody) },
    responses: ok("The project", resourceDocument(projectResource)),
  }),
  async (c) => {
    const { project, access } = await updateProject(callerOf(c), c.req.valid("param").project_id, c.req.valid("json").data);
    return jsonapi(c, { data: serializeProject(project, access) });
  },
);

projects.openapi(
  defineRoute({
    method: "delete",
    path: "/projects/{project_id}",
    action: "projects.manage",
    summary: "Delete an empty project (never the Default Project)",
    description:
      "A project that still contains workspaces is refused with 409; the Default Project with 422. Team access and tag bindings of the project are deleted with it.",
    request: { params: projectParam },
    responses: { ...noContentResponse, 409: { description: "The project still contains workspaces" } },
  }),
  async (c) => {
    await deleteProject(callerOf(c), c.req.valid("param").project_id);
    return noContent(c);
  },
);
