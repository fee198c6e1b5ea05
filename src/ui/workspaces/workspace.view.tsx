/** @jsxImportSource hono/jsx */
/** The workspace page: plain data in, HTML out (src/ui/workspaces/workspace.routes.tsx calls the services). */
import type { PermissionFlags } from "../../auth/permissions";
import type { Principal } from "../../auth/principal";
import { WS_LEVELS } from "../../team-access/team-access.rules";
import type { VariableView } from "../../variables/variables.types";
import type { BindingEntry, LockState } from "../../workspaces/workspace.types";
import { wsPath } from "../context";
import { Layout } from "../layout";
import { holderText } from "./workspaces.view";
import { Reasons, Submit, Table } from "../parts";
import { OutputsTable, StateVersionsTable } from "../states/states.view";

/** The page's forms whose input the services may refuse (the page is shown again with their reasons). */
export type FormName = "settings" | "consumers" | "team-access";

/** A refused form: what was sent, and the API's reasons. */
export interface Refusal {
  form: FormName;
  values: Record<string, string>;
  errors: string[];
}

export interface WorkspaceView {
  id: string;
  name: string;
  organization: string;
  project: string;
  attributes: Record<string, unknown>;
  lock: LockState;
  /** The lock holder's username or team name (null: unlocked, or the holder no longer exists). */
  holderName: string | null;
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
  consumers: Array<{ id: string; name: string }>;
  teamAccess: Array<{ id: string; team: string; access: string }>;
  /** Teams that may be given access (the organisation's teams the caller sees, less those that have it). */
  teamsWithout: Array<{ id: string; name: string }>;
  /** The effective agent pool, and those the settings form offers (the pools this workspace may use). */
  agentPoolId: string | null;
  agentPools: Array<{ id: string; name: string }>;
  /** The workspace's project, and the projects the settings form offers to move it to (those the caller reads). */
  projectId: string;
  projectOptions: Array<{ id: string; name: string }>;
  /** The run at the head of the workspace's queue (kept once it is over), from the workspace's record. */
  currentRun: { id: string; status: string; createdAt: string } | null;
  refusal?: Refusal;
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

/** The reasons a form was refused, next to it. */
function Refused(props: { refusal?: Refusal; form: FormName; what: string }) {
  const r = props.refusal;
  if (!r || r.form !== props.form || !r.errors.length) return null;
  return <Reasons id={`${props.form}-errors`} what={props.what} errors={r.errors} />;
}

const EXECUTION_MODES = ["remote", "local", "agent"];
const OPTION_LABELS = [
  ["allow-destroy-plan", "Allow destroy plans"],
  ["structured-run-output-enabled", "Structured run output"],
] as const;

function SettingsSection(props: { ws: WorkspaceView; base: string }) {
  const a = props.ws.attributes;
  const sent = props.ws.refusal?.form === "settings" ? props.ws.refusal : undefined;
  const v = (k: string, current: unknown) => (sent ? (sent.values[k] ?? "") : current === null || current === undefined ? "" : String(current));
  const autoApply = sent ? sent.values["auto-apply"] === "true" : a["auto-apply"] === true;
  const pool = v("agent-pool-id", props.ws.agentPoolId);
  return (
    <section aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <Refused refusal={props.ws.refusal} form="settings" what="The settings were not saved:" />
      <form class="settings" method="post" action={`${props.base}/settings`}>
        <input type="hidden" name="options" value="1" />
        <div>
          <label for="s-name">Name</label>
          <input id="s-name" name="name" required autocomplete="off" value={v("name", props.ws.name)} />
        </div>
        <div>
          <label for="s-project">Project</label>
          <select id="s-project" name="project">
            {(props.ws.projectOptions.some((p) => p.id === props.ws.projectId)
              ? props.ws.projectOptions
              : [{ id: props.ws.projectId, name: props.ws.project }, ...props.ws.projectOptions]
            ).map((p) => (
              <option value={p.id} selected={v("project", props.ws.projectId) === p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
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
          <label for="s-pool">Agent pool (agent mode only)</label>
          <select id="s-pool" name="agent-pool-id">
            <option value="">None</option>
            {props.ws.agentPools.map((p) => (
              <option value={p.id} selected={pool === p.id}>
                {p.name}
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
        {OPTION_LABELS.map(([k, label]) => (
          <div class="check">
            <input id={`s-${k}`} name={k} type="checkbox" checked={sent ? sent.values[k] === "true" : a[k] === true} />
            <label for={`s-${k}`}>{label}</label>
          </div>
        ))}
        <Submit text="Save settings" />
      </form>
    </section>
  );
}

function ConsumersSection(props: { ws: WorkspaceView; base: string }) {
  const ws = props.ws;
  const a = ws.attributes;
  // The consumer list is fixed while global or project sharing is on (the API refuses changes).
  const sharing = a["global-remote-state"] === true ? "global" : a["project-remote-state"] === true ? "project" : null;
  const editable = ws.flags["can-update"] && sharing === null;
  const sent = ws.refusal?.form === "consumers" ? ws.refusal.values : {};
  return (
    <section aria-labelledby="consumers-h">
      <h2 id="consumers-h">Remote state consumers</h2>
      {sharing === "global" ? <p class="muted">Every workspace of the organisation may read this workspace's state.</p> : null}
      {sharing === "project" ? <p class="muted">Every workspace of this workspace's project may read its state.</p> : null}
      {ws.consumers.length ? (
        <ul id="consumers" class="consumers">
          {ws.consumers.map((w) => (
            <li>
              <a href={wsPath(ws.organization, w.name)}>{w.name}</a>
              {editable ? (
                <form method="post" action={`${props.base}/consumers/delete`}>
                  <input type="hidden" name="id" value={w.id} />
                  <button type="submit" aria-label={`Remove consumer ${w.name}`}>
                    Remove
                  </button>
                </form>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No consumers you can see.</p>
      )}
      {editable ? (
        <>
          <Refused refusal={ws.refusal} form="consumers" what="The consumer was not added:" />
          <form class="actions" method="post" action={`${props.base}/consumers`}>
            <div>
              <label for="c-name">Workspace name</label>
              <input id="c-name" name="name" required autocomplete="off" value={sent.name ?? ""} />
            </div>
            <button type="submit">Add consumer</button>
          </form>
        </>
      ) : null}
    </section>
  );
}

function AccessSelect(props: { id: string; current?: string; label?: string }) {
  return (
    <select id={props.id} name="access" aria-label={props.label}>
      {WS_LEVELS.map((l) => (
        <option value={l} selected={props.current === l}>
          {l}
        </option>
      ))}
    </select>
  );
}

function TeamAccessSection(props: { ws: WorkspaceView; base: string }) {
  const ws = props.ws;
  // Managing a workspace's team access needs admin on it, as POST/PATCH/DELETE /team-workspaces do.
  const editable = ws.flags["can-update"];
  const sent = ws.refusal?.form === "team-access" ? ws.refusal.values : {};
  return (
    <section aria-labelledby="team-access-h">
      <h2 id="team-access-h">Team access</h2>
      <Refused refusal={ws.refusal} form="team-access" what="The team access was not changed:" />
      {ws.teamAccess.length ? (
        <Table id="team-access" columns={editable ? ["Team", "Access", "Change"] : ["Team", "Access"]}>
          {ws.teamAccess.map((t) => (
            <tr data-team-access={t.id}>
              <td>{t.team}</td>
              <td>{t.access}</td>
              {editable ? (
                <td>
                  <div class="actions">
                    <form method="post" action={`${props.base}/team-access/${encodeURIComponent(t.id)}`}>
                      <AccessSelect id={`ta-${t.id}`} current={t.access} label={`Access of team ${t.team}`} />
                      <button type="submit" aria-label={`Update the access of team ${t.team}`}>
                        Update
                      </button>
                    </form>
                    <form method="post" action={`${props.base}/team-access/${encodeURIComponent(t.id)}/delete`}>
                      <button class="danger" type="submit" aria-label={`Remove the access of team ${t.team}`}>
                        Remove
                      </button>
                    </form>
                  </div>
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No team has access to this workspace.</p>
      )}
      {editable && ws.teamsWithout.length ? (
        <form class="actions" method="post" action={`${props.base}/team-access`}>
          <div>
            <label for="ta-team">Team</label>
            <select id="ta-team" name="team">
              {ws.teamsWithout.map((t) => (
                <option value={t.id} selected={sent.team === t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="ta-access">Access</label>
            <AccessSelect id="ta-access" current={sent.access ?? "read"} />
          </div>
          <button type="submit">Give access</button>
        </form>
      ) : null}
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

      {ws.flags["can-read-run"] ? (
        <section aria-labelledby="runs-h">
          <h2 id="runs-h">Runs</h2>
          <p id="current-run">
            {ws.currentRun ? (
              <>
                Current run{" "}
                <a href={`${base}/runs/${encodeURIComponent(ws.currentRun.id)}`}>
                  <code>{ws.currentRun.id}</code>
                </a>{" "}
                <span class="badge">{ws.currentRun.status.replace(/_/g, " ")}</span>{" "}
                <span class="muted">
                  created <time datetime={ws.currentRun.createdAt}>{ws.currentRun.createdAt.slice(0, 16).replace("T", " ")}</time>
                </span>
              </>
            ) : (
              <span class="muted">No current run.</span>
            )}
          </p>
          <p>
            <a href={`${base}/runs`} id="all-runs">
              All runs
            </a>
            {ws.flags["can-queue-run"] ? (
              <>
                {" · "}
                <a href={`${base}/runs?new-run#new-run`} id="new-run-link">
                  New run
                </a>
              </>
            ) : null}
          </p>
        </section>
      ) : null}

      <h2>Lock</h2>
      <p id="lock-state">
        {ws.lock.locked ? (
          <>
            <span class="badge locked">locked</span> by <strong id="lock-holder">{holderText(ws.lock, ws.holderName)}</strong>
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
      <p>
        <a id="tags-page" href={`${base}/tags`}>
          {ws.flags["can-manage-tags"] ? "Edit tags and tag bindings" : "Tags and tag bindings"}
        </a>
      </p>
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
        <Table id="tag-bindings" columns={["Key", "Value", "Source"]}>
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
        </Table>
      ) : (
        <p class="muted">No tag bindings.</p>
      )}

      <h2>Version control</h2>
      <p>
        <a id="version-control-page" href={`${base}/version-control`}>
          {ws.attributes["vcs-repo-identifier"] ? `Runs from ${String(ws.attributes["vcs-repo-identifier"])}` : "Not connected to a repository"}
        </a>
      </p>

      {ws.variables ? (
        <>
          <h2>Variables</h2>
          <p>
            <a id="variables-page" href={`${base}/variables`}>
              {ws.flags["can-update-variable"] ? "Edit variables" : "Variables and variable sets"}
            </a>
          </p>
          {ws.variables.length ? (
            <Table columns={["Key", "Value", "Category"]}>
              {ws.variables.map((v) => (
                <tr>
                  <td>
                    <code>{v.key}</code>
                  </td>
                  <td>{v.sensitive ? <span class="muted">(sensitive)</span> : <code>{v.value ?? ""}</code>}</td>
                  <td>{v.category}</td>
                </tr>
              ))}
            </Table>
          ) : (
            <p class="muted">No variables.</p>
          )}
        </>
      ) : null}

      <h2>Run triggers, run tasks and notifications</h2>
      <p>
        <a id="run-triggers-page" href={`${base}/run-triggers`}>
          Run triggers
        </a>
        {" · "}
        <a id="run-tasks-page" href={`${base}/run-tasks`}>
          Run tasks
        </a>
        {ws.flags["can-update"] ? (
          <>
            {" · "}
            <a id="notifications-page" href={`${base}/notifications`}>
              Notifications
            </a>
          </>
        ) : null}
      </p>

      {ws.stateVersions ? (
        <>
          <h2>State versions</h2>
          {ws.stateVersions.length ? (
            <StateVersionsTable organization={ws.organization} workspace={ws.name} rows={ws.stateVersions} />
          ) : (
            <p class="muted">No state versions.</p>
          )}
          <p>
            <a href={`${base}/states`} id="all-states">
              All state versions and the resource chart
            </a>
          </p>
        </>
      ) : null}

      {ws.outputs ? (
        <>
          <h2>Outputs</h2>
          {ws.outputs.length ? <OutputsTable outputs={ws.outputs} /> : <p class="muted">The current state has no outputs.</p>}
        </>
      ) : null}

      <ConsumersSection ws={ws} base={base} />
      <TeamAccessSection ws={ws} base={base} />

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
