/** @jsxImportSource hono/jsx */
/** The organisations page: plain data in, HTML out (src/ui/organizations/organizations.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import { orgPath } from "../context";
import { Layout } from "../layout";

export function OrganizationsPage(props: { principal: Principal; organizations: Array<{ name: string; email: string; owner: boolean }> }) {
  return (
    <Layout title="Organisations" principal={props.principal}>
      <h1>Organisations</h1>
      {props.organizations.length === 0 ? (
        <p class="muted">You belong to no organisation.</p>
      ) : (
        <ul>
          {props.organizations.map((o) => (
            <li>
              <a href={orgPath(o.name, "workspaces")}>{o.name}</a> <span class="muted">(</span>
              <a href={orgPath(o.name, "projects")} aria-label={`Projects of ${o.name}`}>
                projects
              </a>
              <span class="muted">)</span> {o.owner ? <span class="badge">owner</span> : null}
            </li>
          ))}
        </ul>
      )}
      {props.principal.kind === "user" && props.principal.isSiteAdmin ? (
        <p>
          <a href="/app/admin/users">Users</a> <span class="muted">(site admin)</span>
        </p>
      ) : null}
    </Layout>
  );
}
