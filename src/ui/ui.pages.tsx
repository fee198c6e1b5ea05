/** @jsxImportSource hono/jsx */
/** The UI's pages: plain data in, HTML out (the routes call the services). */
import type { Principal } from "../auth/principal";
import type { PermissionFlags } from "../auth/permissions";
import type { VariableView } from "../variables/variables.types";
import type { BindingEntry, LockState } from "../workspaces/workspace.types";
import { Layout } from "./ui.layout";

const wsPath = (org: string, name: string) => `/app/${encodeURIComponent(org)}/workspaces/${encodeURIComponent(name)}`;
const orgPath = (org: string, page: "workspaces" | "projects") => `/app/${encodeURIComponent(org)}/${page}`;

/** The organisation's pages, the current one marked. */
function OrgNav(props: { organization: string; current: "workspaces" | "projects" }) {
  return (
    <nav class="orgnav" aria-label="Organisation">
      {(["workspaces", "projects"] as const).map((p) => (
        <a href={orgPath(props.organization, p)} aria-current={props.current === p ? "page" : undefined}>
          {p === "workspaces" ? "Workspaces" : "Projects"}
        </a>
      ))}
    </nav>
  );
}

export function SignInPage(props: { error?: string }) {
  return (
    <Layout title="Sign in">
      <div class="signin">
        <h1>Sign in</h1>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/app/session">
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="off" required />
          <button class="primary" type="submit">
            Sign in
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
    </Layout>
  );
}

export interface ListRow {
  name: string;
  project: string;
  lock: LockState;
  tags: string[];
  latestChangeAt: string;
  resourceCount: number;
  executionMode: string;
}

const SORT_LABELS: Array<[string, string]> = [
  ["", "Default"],
  ["name", "Name (A–Z)"],
  ["-name", "Name (Z–A)"],
  ["current-run.created-at", "Latest run (oldest first)"],
  ["-current-run.created-at", "Latest run (newest first)"],
];

function LockBadge(props: { lock: LockState }) {
  if (!props.lock.locked) return <span class="badge">unlocked</span>;
  const h = props.lock.holder;
  return <span class="badge locked">{h ? `locked by ${h.type.replace(/s$/, "")} ${h.id}` : "locked"}</span>;
}

export function WorkspaceListPage(props: {
  principal: Principal;
  organization: string;
  rows: ListRow[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  projects: Array<{ id: string; name: string }>;
}) {
  const q = props.query;
  const pages = Math.max(1, Math.ceil(props.total / props.page.size));
  const link = (n: number) => {
    const p = new URLSearchParams(q);
    p.set("page[number]", String(n));
    return `?${p.toString()}`;
  };
  const val = (k: string) => q.get(k) ?? "";
  return (
    <Layout title={`Workspaces of ${props.organization}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / {props.organization}
      </nav>
      <OrgNav organization={props.organization} current="workspaces" />
      <h1>Workspaces</h1>
      <form class="filters" method="get" aria-label="Filter workspaces">
        <div>
          <label for="f-name">Name contains</label>
          <input id="f-name" name="search[name]" value={val("search[name]")} />
        </div>
        <div>
          <label for="f-wild">Name pattern (* at either end)</label>
          <input id="f-wild" name="search[wildcard-name]" value={val("search[wildcard-name]")} />
        </div>
        <div>
          <label for="f-tags">Tags (all of, comma-separated)</label>
          <input id="f-tags" name="search[tags]" value={val("search[tags]")} />
        </div>
        <div>
          <label for="f-xtags">Exclude tags</label>
          <input id="f-xtags" name="search[exclude-tags]" value={val("search[exclude-tags]")} />
        </div>
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
        <div>
          <label for="f-sort">Sort</label>
          <select id="f-sort" name="sort">
            {SORT_LABELS.map(([v, l]) => (
              <option value={v} selected={val("sort") === v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-size">Per page</label>
          <select id="f-size" name="page[size]">
            {[5, 20, 50, 100].map((n) => (
              <option value={String(n)} selected={props.page.size === n}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button class="primary" type="submit">
            Apply
          </button>
        </div>
      </form>
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "workspace" : "workspaces"}
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Project</th>
              <th scope="col">Lock</th>
              <th scope="col" class="opt">
                Tags
              </th>
              <th scope="col" class="opt">
                Latest change
              </th>
              <th scope="col" class="opt">
                Resources
              </th>
              <th scope="col" class="opt">
                Execution
              </th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => (
              <tr data-workspace={r.name}>
                <td>
                  <a href={wsPath(props.organization, r.name)}>{r.name}</a>
                </td>
                <td>{r.project}</td>
                <td>
                  <LockBadge lock={r.lock} />
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
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        {props.page.number > 1 ? (
          <a href={link(props.page.number - 1)} rel="prev">
            Previous
          </a>
        ) : null}
        <span>
          Page {props.page.number} of {pages}
        </span>
        {props.page.number < pages ? (
          <a href={link(props.page.number + 1)} rel="next">
            Next
          </a>
        ) : null}
      </nav>
    </Layout>
  );
}

export interface WorkspaceView {
  id: string;
  name: string;
  organization: string;
  project: string;
  attributes: Record<string, unknown>;
  lock: LockState;
  lockedByYou: boolean;
  tags: string[];
  bindings: BindingEntry[];
  /** The project's bindings the workspace inherits (those whose key it does not bind itself). */
  inherited: Array<{ key: string; value: string; project: string }>;
  flags: PermissionFlags;
  variables: VariableView[] | null;
  /** Null: the caller may not read state versions. */
  stateVersions: StateRow[] | null;
  /** Null: no current state, or the caller may not read outputs. Sensitive values are null. */
  outputs: Array<{ name: string; sensitive: boolean; type: string; value: string | null }> | null;
  consumers: string[];
  teamAccess: Array<{ team: string; access: string }>;
  /** The settings form as last sent, with the API's reasons for refusing it. */
  settings?: SettingsForm;
}

export interface StateRow {
  id: string;
  serial: number;
  status: string;
  createdAt: string;
  resourceCount: number;
  /** The API's signed download URL (null until finalised). */
  download: string | null;
}

export interface SettingsForm {
  values: Record<string, string>;
  errors: string[];
}

export interface ProjectRowView {
  id: string;
  name: string;
  description: string | null;
  workspaceCount: number;
  isDefault: boolean;
}

export function ProjectsPage(props: { principal: Principal; organization: string; projects: ProjectRowView[]; total: number }) {
  const org = props.organization;
  return (
    <Layout title={`Projects of ${org}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / {org}
      </nav>
      <OrgNav organization={org} current="projects" />
      <h1>Projects</h1>
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "project" : "projects"}
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Workspaces</th>
              <th scope="col" class="opt">
                Description
              </th>
              <th scope="col" class="opt">
                ID
              </th>
            </tr>
          </thead>
          <tbody>
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
          </tbody>
        </table>
      </div>
    </Layout>
  );
}

const EXECUTION_MODES = ["remote", "local", "agent"];

function SettingsSection(props: { ws: WorkspaceView; base: string }) {
  const a = props.ws.attributes;
  const sent = props.ws.settings;
  const v = (k: string, current: unknown) => (sent ? (sent.values[k] ?? "") : current === null || current === undefined ? "" : String(current));
  const autoApply = sent ? sent.values["auto-apply"] === "true" : a["auto-apply"] === true;
  return (
    <section aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      {sent?.errors.length ? (
        <div class="error" role="alert" id="settings-errors">
          <p>The settings were not saved:</p>
          <ul>
            {sent.errors.map((e) => (
              <li>{e}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <form class="settings" method="post" action={`${props.base}/settings`}>
        <div class="wide">
          <label for="s-description">Description</label>
          <input id="s-description" name="description" value={v("description", a.description)} />
        </div>
        <div>
          <label for="s-mode">Execution mode</label>
          <select id="s-mode" name="execution-mode">
            {EXECUTION_MODES.map((m) => (
              <option value={m} selected={v("execution-mode", a["execution-mode"]) === m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="s-version">Terraform version</label>
          <input id="s-version" name="terraform-version" value={v("terraform-version", a["terraform-version"] ?? a["engine-version"])} />
        </div>
        <div>
          <label for="s-dir">Working directory</label>
          <input id="s-dir" name="working-directory" value={v("working-directory", a["working-directory"])} />
        </div>
        <div class="check">
          <input id="s-auto" name="auto-apply" type="checkbox" checked={autoApply} />
          <label for="s-auto">Auto-apply</label>
        </div>
        <div>
          <button class="primary" type="submit">
            Save settings
          </button>
        </div>
      </form>
    </section>
  );
}

const SHOWN_ATTRIBUTES = [
  "description",
  "execution-mode",
  "engine-version",
  "working-directory",
  "auto-apply",
  "resource-count",
  "created-at",
  "latest-change-at",
  "source",
];

function show(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function WorkspacePage(props: { principal: Principal; ws: WorkspaceView }) {
  const ws = props.ws;
  const base = wsPath(ws.organization, ws.name);
  const holder = ws.lock.holder;
  return (
    <Layout title={ws.name} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / <a href={`/app/${encodeURIComponent(ws.organization)}/workspaces`}>{ws.organization}</a> / {ws.name}
      </nav>
      <h1>{ws.name}</h1>
      <dl class="attrs">
        <dt>ID</dt>
        <dd>
          <code>{ws.id}</code>
        </dd>
        <dt>Project</dt>
        <dd>{ws.project}</dd>
        {SHOWN_ATTRIBUTES.map((k) => (
          <>
            <dt>{k}</dt>
            <dd>{show(ws.attributes[k])}</dd>
          </>
        ))}
      </dl>

      <h2>Lock</h2>
      <p id="lock-state">
        {ws.lock.locked ? (
          <>
            <span class="badge locked">locked</span> by {holder ? `${holder.type.replace(/s$/, "")} ${holder.id}` : "unknown"}
            {ws.lockedByYou ? " (you)" : ""}
            {ws.lock.reason ? ` — ${ws.lock.reason}` : ""}
          </>
        ) : (
          <span class="badge">unlocked</span>
        )}
      </p>
      <div class="actions">
        {!ws.lock.locked && ws.flags["can-lock"] ? (
          <form method="post" action={`${base}/lock`}>
            <div>
              <label for="reason">Reason</label>
              <input id="reason" name="reason" maxlength={200} />
            </div>
            <button type="submit">Lock</button>
          </form>
        ) : null}
        {ws.lock.locked && ws.lockedByYou && ws.flags["can-unlock"] ? (
          <form method="post" action={`${base}/unlock`}>
            <button type="submit">Unlock</button>
          </form>
        ) : null}
        {ws.lock.locked && !ws.lockedByYou && ws.flags["can-force-unlock"] ? (
          <form method="post" action={`${base}/force-unlock`}>
            <button class="danger" type="submit">
              Force unlock
            </button>
          </form>
        ) : null}
      </div>

      <h2>Tags</h2>
      {ws.tags.length ? (
        <p>
          {ws.tags.map((t) => (
            <span class="tag">{t}</span>
          ))}
        </p>
      ) : (
        <p class="muted">No flat tags.</p>
      )}
      <h2>Tag bindings</h2>
      {ws.bindings.length || ws.inherited.length ? (
        <div class="scroll">
          <table id="tag-bindings">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
                <th scope="col">Source</th>
              </tr>
            </thead>
            <tbody>
              {ws.bindings.map((b) => (
                <tr>
                  <td>{b.key}</td>
                  <td>{b.value || "—"}</td>
                  <td>this workspace</td>
                </tr>
              ))}
              {ws.inherited.map((b) => (
                <tr class="inherited">
                  <td>{b.key}</td>
                  <td>{b.value || "—"}</td>
                  <td>
                    inherited from project <strong>{b.project}</strong>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">No tag bindings.</p>
      )}

      {ws.variables ? (
        <>
          <h2>Variables</h2>
          {ws.variables.length ? (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Value</th>
                    <th scope="col">Category</th>
                  </tr>
                </thead>
                <tbody>
                  {ws.variables.map((v) => (
                    <tr>
                      <td>
                        <code>{v.key}</code>
                      </td>
                      <td>{v.sensitive ? <span class="muted">(sensitive)</span> : <code>{v.value ?? ""}</code>}</td>
                      <td>{v.category}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No variables.</p>
          )}
        </>
      ) : null}

      {ws.stateVersions ? (
        <>
          <h2>State versions</h2>
          {ws.stateVersions.length ? (
            <div class="scroll">
              <table id="state-versions">
                <thead>
                  <tr>
                    <th scope="col">Serial</th>
                    <th scope="col">Created</th>
                    <th scope="col">Resources</th>
                    <th scope="col">Status</th>
                    <th scope="col">State</th>
                    <th scope="col" class="opt">
                      ID
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {ws.stateVersions.map((s) => (
                    <tr data-state-version={s.id}>
                      <td>{s.serial}</td>
                      <td>
                        <time datetime={s.createdAt}>{s.createdAt.slice(0, 16).replace("T", " ")}</time>
                      </td>
                      <td>{s.resourceCount}</td>
                      <td>{s.status}</td>
                      <td>
                        {s.download ? (
                          <a class="download" href={s.download} aria-label={`Download state serial ${s.serial}`}>
                            Download
                          </a>
                        ) : (
                          "—"
                        )}
                      </td>
                      <td class="opt">
                        <code>{s.id}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No state versions.</p>
          )}
        </>
      ) : null}

      {ws.outputs ? (
        <>
          <h2>Outputs</h2>
          {ws.outputs.length ? (
            <div class="scroll">
              <table id="outputs">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Type</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {ws.outputs.map((o) => (
                    <tr>
                      <td>
                        <code>{o.name}</code>
                      </td>
                      <td>{o.type}</td>
                      <td>{o.sensitive ? <span class="muted">(sensitive)</span> : <code>{o.value ?? ""}</code>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">The current state has no outputs.</p>
          )}
        </>
      ) : null}

      <h2>Remote state consumers</h2>
      {ws.attributes["global-remote-state"] === true ? <p class="muted">Every workspace of the organisation may read this workspace's state.</p> : null}
      {ws.consumers.length ? (
        <ul id="consumers">
          {ws.consumers.map((n) => (
            <li>
              <a href={wsPath(ws.organization, n)}>{n}</a>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No consumers you can see.</p>
      )}

      <h2>Team access</h2>
      {ws.teamAccess.length ? (
        <div class="scroll">
          <table id="team-access">
            <thead>
              <tr>
                <th scope="col">Team</th>
                <th scope="col">Access</th>
              </tr>
            </thead>
            <tbody>
              {ws.teamAccess.map((t) => (
                <tr>
                  <td>{t.team}</td>
                  <td>{t.access}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">No team has access to this workspace.</p>
      )}

      {ws.flags["can-update"] ? <SettingsSection ws={ws} base={base} /> : null}

      {ws.flags["can-destroy"] ? (
        <details class="danger">
          <summary>Delete this workspace</summary>
          <form method="post" action={`${base}/safe-delete`}>
            <p>Safe delete refuses while the workspace manages resources. Type the workspace's name to confirm.</p>
            <label for="confirm">Workspace name</label>
            <input id="confirm" name="confirm" required autocomplete="off" />
            <p>
              <button class="danger" type="submit">
                Delete workspace
              </button>
            </p>
          </form>
        </details>
      ) : null}
    </Layout>
  );
}
