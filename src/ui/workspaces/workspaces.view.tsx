/** @jsxImportSource hono/jsx */
/** The organisation's workspaces and the new-workspace form: plain data in, HTML out (src/ui/workspaces/workspaces.routes.tsx calls the services). */
import type { OrgAccess } from "../../auth/access";
import type { Principal } from "../../auth/principal";
import type { LockState } from "../../workspaces/workspace.types";
import { orgPath, wsPath } from "../context";
import { Check, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { OrgNav } from "../organizations/organizations.parts";
import { Choice, Crumbs, Field, FilterForm, Pager, Submit, Table } from "../parts";

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

export const EXECUTION_MODES = ["remote", "local", "agent"] as const;

export function NewWorkspacePage(props: {
  principal: Principal;
  organization: string;
  projects: Array<{ id: string; name: string; isDefault: boolean }>;
  refusal?: Refusal;
}) {
  const sent = sentOf(props.refusal, "new-workspace") ?? {};
  const chosen = sent.project ?? props.projects.find((p) => p.isDefault)?.id ?? props.projects[0]?.id;
  return (
    <Layout title="New workspace" principal={props.principal}>
      <Crumbs organization={props.organization} here="New workspace" />
      <h1>New workspace</h1>
      <Refused refusal={props.refusal} form="new-workspace" what="The workspace was not created:" />
      <form class="settings" method="post" action={`${orgPath(props.organization, "workspaces")}/new`}>
        <div>
          <label for="n-name">Name</label>
          <input id="n-name" name="name" required autocomplete="off" value={sent.name ?? ""} />
        </div>
        <div>
          <label for="n-project">Project</label>
          <select id="n-project" name="project">
            {props.projects.map((p) => (
              <option value={p.id} selected={chosen === p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div class="wide">
          <label for="n-description">Description</label>
          <input id="n-description" name="description" value={sent.description ?? ""} />
        </div>
        <div>
          <label for="n-mode">Execution mode</label>
          <select id="n-mode" name="execution-mode">
            <option value="">The project's default</option>
            {EXECUTION_MODES.map((m) => (
              <option value={m} selected={sent["execution-mode"] === m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="n-version">Terraform version (empty: the latest)</label>
          <input id="n-version" name="terraform-version" value={sent["terraform-version"] ?? ""} />
        </div>
        <Check id="n-auto" name="auto-apply" label="Auto-apply" checked={sent["auto-apply"] === "on"} />
        <Submit text="Create workspace" />
      </form>
    </Layout>
  );
}
