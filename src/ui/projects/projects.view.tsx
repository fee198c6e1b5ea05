/** @jsxImportSource hono/jsx */
/** The organisation's projects: plain data in, HTML out (src/ui/projects/projects.routes.tsx calls the services). */
import type { OrgAccess } from "../../auth/access";
import type { Principal } from "../../auth/principal";
import { orgPath } from "../context";
import { Layout } from "../layout";
import { OrgNav } from "../organizations/organizations.parts";
import { Choice, Field, FilterForm, Pager, Table } from "../parts";

const PROJECT_SORTS: Array<[string, string]> = [
  ["", "Default (Default Project last)"],
  ["name", "Name (A–Z)"],
  ["-name", "Name (Z–A)"],
];

export interface ProjectRowView {
  id: string;
  name: string;
  description: string | null;
  workspaceCount: number;
  isDefault: boolean;
}

export function ProjectsPage(props: {
  principal: Principal;
  organization: string;
  projects: ProjectRowView[];
  /** Projects matching the query (the API's `total-count`). */
  matching: number;
  /** Projects the caller may read, whatever the query (the API's `status-counts.total`). */
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  access?: OrgAccess;
}) {
  const org = props.organization;
  const q = props.query;
  return (
    <Layout title={`Projects of ${org}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / {org}
      </nav>
      <OrgNav organization={org} current="projects" access={props.access} />
      <h1>Projects</h1>
      <FilterForm label="Filter projects" sizeId="p-size" size={props.page.size}>
        <Field id="p-q" name="q" label="Name contains" query={q} />
        <Field id="p-names" name="filter[names]" label="Exact names (comma-separated)" query={q} />
        <Field id="p-tkey" name="filter[tagged][0][key]" label="Tag binding key" query={q} />
        <Field id="p-tvalue" name="filter[tagged][0][value]" label="Tag binding value (empty: any)" query={q} />
        <Choice id="p-sort" name="sort" label="Sort" options={PROJECT_SORTS} query={q} />
      </FilterForm>
      <p class="muted" id="total">
        {props.matching} {props.matching === 1 ? "project" : "projects"}
        {props.matching !== props.total ? ` of ${props.total}` : ""}
      </p>
      <Table columns={["Name", "Workspaces"]} optional={["Description", "ID"]}>
        {props.projects.map((p) => (
          <tr data-project={p.id}>
            <td>
              <a href={`${orgPath(org, "workspaces")}?${new URLSearchParams({ "filter[project][id]": p.id }).toString()}`}>{p.name}</a>{" "}
              {p.isDefault ? <span class="badge">default</span> : null}
            </td>
            <td>{p.workspaceCount}</td>
            <td class="opt">{p.description || "—"}</td>
            <td class="opt">
              <code>{p.id}</code>
            </td>
          </tr>
        ))}
      </Table>
      <Pager page={props.page} total={props.matching} query={q} />
    </Layout>
  );
}
