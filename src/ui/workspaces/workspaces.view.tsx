/** @jsxImportSource hono/jsx */
/** The UI's organisation-level pages: plain data in, HTML out (the routes call the services). */
import type { OrgAccess } from "../../auth/access";
import type { Principal } from "../../auth/principal";
import type { LockState } from "../../workspaces/workspace.types";
import { orgPath, wsPath } from "../context";
import { Layout } from "../layout";
import { OrgNav } from "../organizations/organizations.parts";
import { Choice, Field, FilterForm, Pager, Table } from "../parts";

/**
 * Sign in: with a username or e-mail and a password (`#username`, `#password`, `#password-sign-in`), or by pasting an
 * API token (`#token`, the page's first `button[type=submit]`). `next`: the page to return to afterwards.
 */
export function SignInPage(props: { error?: string; passwordError?: string; login?: string; next?: string }) {
  const next = props.next ? <input type="hidden" name="next" value={props.next} /> : null;
  return (
    <Layout title="Sign in">
      <div class="signin">
        <h1>Sign in</h1>
        {props.passwordError ? (
          <p class="error" role="alert" id="password-error">
            {props.passwordError}
          </p>
        ) : null}
        <form method="post" action="/app/session/password">
          <div>
            <label for="username">Username or e-mail</label>
            <input id="username" name="username" autocomplete="username" value={props.login ?? ""} required />
          </div>
          <div>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </div>
          {next}
          {/* An input, not a button: the token form's button stays the page's first `button[type=submit]`. */}
          <input class="primary" type="submit" id="password-sign-in" value="Sign in" />
        </form>
        <h2>Or with an API token</h2>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/app/session">
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="off" required />
          {next}
          <button class="primary" type="submit">
            Sign in with the token
          </button>
        </form>
        <p class="muted">Paste a user, team or organisation token. The session ends when you sign out or the token is revoked.</p>
      </div>
    </Layout>
  );
}

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

export interface ListItem {
  name: string;
  project: string;
  lock: LockState;
  /** The lock holder's username or team name (null: unlocked, or the holder no longer exists). */
  holderName: string | null;
  tags: string[];
  latestChangeAt: string;
  resourceCount: number;
  executionMode: string;
}

/** Every `sort` the workspace list API accepts. */
const SORT_LABELS: Array<[string, string]> = [
  ["", "Default (creation)"],
  ["name", "Name (A–Z)"],
  ["-name", "Name (Z–A)"],
  ["latest-change-at", "Latest change (oldest first)"],
  ["-latest-change-at", "Latest change (newest first)"],
  ["current-run.created-at", "Latest run (oldest first)"],
  ["-current-run.created-at", "Latest run (newest first)"],
];

/** "alice", "team owners", "api-org-acme": whom the lock is held by, as the real UI names them; the id when the holder is gone. */
export function holderText(lock: LockState, name: string | null): string {
  const h = lock.holder;
  if (!h) return "unknown";
  if (name === null) return `${h.type.replace(/s$/, "")} ${h.id}`;
  return h.type === "teams" ? `team ${name}` : name;
}

function LockBadge(props: { lock: LockState; holderName: string | null }) {
  if (!props.lock.locked) return <span class="badge">unlocked</span>;
  return <span class="badge locked">locked by {holderText(props.lock, props.holderName)}</span>;
}

export function WorkspaceListPage(props: {
  principal: Principal;
  organization: string;
  rows: ListItem[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  projects: Array<{ id: string; name: string }>;
  /** Whether to offer the new-workspace form (the caller may create workspaces in some project). */
  canCreate?: boolean;
  /** The caller's standing: which of the organisation's pages the navigation offers. */
  access?: OrgAccess;
}) {
  const q = props.query;
  const val = (k: string) => q.get(k) ?? "";
  return (
    <Layout title={`Workspaces of ${props.organization}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / {props.organization}
      </nav>
      <OrgNav organization={props.organization} current="workspaces" access={props.access} />
      <h1>Workspaces</h1>
      {props.canCreate ? (
        <p>
          <a id="new-workspace" href={`/app/${encodeURIComponent(props.organization)}/workspaces/new`}>
            New workspace
          </a>
        </p>
      ) : null}
      <FilterForm label="Filter workspaces" sizeId="f-size" size={props.page.size}>
        <Field id="f-name" name="search[name]" label="Name contains" query={q} />
        <Field id="f-wild" name="search[wildcard-name]" label="Name pattern (* at either end)" query={q} />
        <Field id="f-tags" name="search[tags]" label="Tags (all of, comma-separated)" query={q} />
        <Field id="f-xtags" name="search[exclude-tags]" label="Exclude tags" query={q} />
        <Field id="f-tkey" name="filter[tagged][0][key]" label="Tag binding key" query={q} />
        <Field id="f-tvalue" name="filter[tagged][0][value]" label="Tag binding value (empty: any)" query={q} />
        <div>
          <label for="f-project">Project</label>
          <select id="f-project" name="filter[project][id]">
            <option value="">Any project</option>
            {props.projects.map((p) => (
              <option value={p.id} selected={val("filter[project][id]") === p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <Choice id="f-sort" name="sort" label="Sort" options={SORT_LABELS} query={q} />
      </FilterForm>
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "workspace" : "workspaces"}
      </p>
      <Table columns={["Name", "Project", "Lock"]} optional={["Tags", "Latest change", "Resources", "Execution"]}>
        {props.rows.map((r) => (
          <tr data-workspace={r.name}>
            <td>
              <a href={wsPath(props.organization, r.name)}>{r.name}</a>
            </td>
            <td>{r.project}</td>
            <td>
              <LockBadge lock={r.lock} holderName={r.holderName} />
            </td>
            <td class="opt">
              {r.tags.map((t) => (
                <span class="tag">{t}</span>
              ))}
            </td>
            <td class="opt">
              <time datetime={r.latestChangeAt}>{r.latestChangeAt.slice(0, 16).replace("T", " ")}</time>
            </td>
            <td class="opt">{r.resourceCount}</td>
            <td class="opt">{r.executionMode}</td>
          </tr>
        ))}
      </Table>
      <Pager page={props.page} total={props.total} query={q} />
    </Layout>
  );
}

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
