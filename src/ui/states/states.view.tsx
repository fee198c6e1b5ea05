/** @jsxImportSource hono/jsx */
/** A workspace's state versions, one version's page and its rollback confirmation: plain data in, HTML out (src/ui/states/states.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import type { LockState } from "../../workspaces/workspace.types";
import { type ChartPoint, ResourceChart } from "./state-chart.view";
import { wsPath } from "../context";
import { Layout } from "../layout";
import { holderText } from "../workspaces/workspaces.view";
import { Pager, Reasons, Table } from "../parts";
import { runPath } from "../runs/runs.view";

export const statesPath = (org: string, name: string) => `${wsPath(org, name)}/states`;
export const statePath = (org: string, name: string, id: string) => `${statesPath(org, name)}/${encodeURIComponent(id)}`;

const when = (iso: string) => <time datetime={iso}>{iso.slice(0, 16).replace("T", " ")}</time>;

export interface StateListRow {
  id: string;
  serial: number;
  status: string;
  createdAt: string;
  /** Null: unknown (its raw state could not be read). */
  resourceCount: number | null;
  current: boolean;
  download: string | null;
}

function Crumbs(props: { organization: string; workspace: string; last?: string }) {
  const ws = wsPath(props.organization, props.workspace);
  return (
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href="/app">Organisations</a> / <a href={`/app/${encodeURIComponent(props.organization)}/workspaces`}>{props.organization}</a> /{" "}
      <a href={ws}>{props.workspace}</a> / {props.last ? <a href={statesPath(props.organization, props.workspace)}>States</a> : "States"}
      {props.last ? ` / ${props.last}` : ""}
    </nav>
  );
}

export function StatesPage(props: {
  principal: Principal;
  organization: string;
  workspace: string;
  rows: StateListRow[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  chart: ChartPoint[];
  /** Versions of the chart's span left out: not finalised, or resources unknown. */
  chartLeftOut: number;
}) {
  const { organization, workspace } = props;
  return (
    <Layout title={`State of ${workspace}`} principal={props.principal}>
      <Crumbs organization={organization} workspace={workspace} />
      <h1>State versions of {workspace}</h1>
      <section aria-labelledby="chart-h">
        <h2 id="chart-h">Resources over time</h2>
        <ResourceChart points={props.chart} />
        {props.chartLeftOut ? (
          <p class="muted" id="chart-left-out">
            {props.chartLeftOut} recent {props.chartLeftOut === 1 ? "version is" : "versions are"} not drawn: not finalised, or their resources could not be
            read.
          </p>
        ) : null}
      </section>
      <h2>All versions</h2>
      <p class="muted" id="total">
        {props.total} state {props.total === 1 ? "version" : "versions"}, newest first.
      </p>
      {props.rows.length ? <StateVersionsTable organization={organization} workspace={workspace} rows={props.rows} /> : <p class="muted">No state versions.</p>}
      <Pager page={props.page} total={props.total} query={props.query} />
    </Layout>
  );
}

/** A state's outputs; a sensitive one shows as such, never its value (the service hands it over as null anyway). */
export function OutputsTable(props: { outputs: Array<{ name: string; type: string; sensitive: boolean; value: string | null }> }) {
  return (
    <Table id="outputs" columns={["Name", "Type", "Value"]}>
      {props.outputs.map((o) => (
        <tr data-output={o.name}>
          <td>
            <code>{o.name}</code>
          </td>
          <td>{o.type}</td>
          <td>{o.sensitive ? <span class="muted">(sensitive)</span> : <code>{o.value ?? ""}</code>}</td>
        </tr>
      ))}
    </Table>
  );
}

/** State versions, newest first, each linking its page (and its signed download when the caller may read state). */
export function StateVersionsTable(props: {
  organization: string;
  workspace: string;
  rows: Array<{ id: string; serial: number; createdAt: string; resourceCount: number | null; status: string; download: string | null; current?: boolean }>;
}) {
  const { organization, workspace } = props;
  return (
    <Table id="state-versions" columns={["Serial", "Created", "Resources", "Status", "State"]} optional={["ID"]}>
      {props.rows.map((s) => (
        <tr data-state-version={s.id}>
          <td>
            <a href={statePath(organization, workspace, s.id)} aria-label={`State version serial ${s.serial}`}>
              {s.serial}
            </a>
            {s.current ? (
              <>
                {" "}
                <span class="badge good">current</span>
              </>
            ) : null}
          </td>
          <td>{when(s.createdAt)}</td>
          <td>{s.resourceCount ?? "unknown"}</td>
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
    </Table>
  );
}

export interface StateVersionView {
  organization: string;
  workspace: string;
  id: string;
  serial: number;
  status: string;
  createdAt: string;
  current: boolean;
  /** The workspace's current version (null: none). */
  currentId: string | null;
  runId: string | null;
  /** The creating user's username (a team's or organisation's service user by its API name). */
  createdBy: string | null;
  rollbackOf: string | null;
  /** Null: unknown (the raw state could not be read, OpenTofu's encrypted state say). */
  resourceCount: number | null;
  terraformVersion: string | null;
  lineage: string | null;
  size: number;
  /** Null: the caller may not read outputs. Sensitive values are null: never shown. */
  outputs: Array<{ name: string; type: string; sensitive: boolean; value: string | null }> | null;
  /** As the API's `resources` attribute gives them. */
  resources: Array<{ module: string; type: string; name: string; provider: string; count: number }>;
  /** The API's signed download URL (null: not finalised, or the caller may not read state). */
  download: string | null;
  /** The caller may create state versions, and this finalised version is not the current one. */
  canRollBack: boolean;
  lockedByYou: boolean;
}

/** `module.a.module.b` and `root` as Terraform writes addresses. */
const address = (r: { module: string; type: string; name: string }) => `${r.module === "root" || !r.module ? "" : `${r.module}.`}${r.type}.${r.name}`;
/** `provider["registry.terraform.io/hashicorp/aws"]` → `registry.terraform.io/hashicorp/aws`. */
const provider = (p: string) => /\["([^"]+)"\]/.exec(p)?.[1] ?? p;

export function StateVersionPage(props: { principal: Principal; sv: StateVersionView }) {
  const sv = props.sv;
  const { organization, workspace } = sv;
  return (
    <Layout title={`State serial ${sv.serial} of ${workspace}`} principal={props.principal}>
      <Crumbs organization={organization} workspace={workspace} last={`serial ${sv.serial}`} />
      <h1>
        State version serial {sv.serial} {sv.current ? <span class="badge good">current</span> : null}
      </h1>
      <dl class="attrs" id="state-attributes">
        <dt>ID</dt>
        <dd>
          <code>{sv.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>{sv.status}</dd>
        <dt>Created</dt>
        <dd>{when(sv.createdAt)}</dd>
        <dt>Run</dt>
        <dd id="state-run">
          {sv.runId ? (
            <a href={runPath(organization, workspace, sv.runId)}>
              <code>{sv.runId}</code>
            </a>
          ) : (
            "—"
          )}
        </dd>
        <dt>Created by</dt>
        <dd id="state-created-by">{sv.createdBy ?? (sv.runId ? "the run" : "—")}</dd>
        {sv.rollbackOf ? (
          <>
            <dt>Rolled back to</dt>
            <dd id="state-rollback-of">
              a copy of <a href={statePath(organization, workspace, sv.rollbackOf)}>{sv.rollbackOf}</a>
            </dd>
          </>
        ) : null}
        <dt>Resources</dt>
        <dd id="state-resource-count">{sv.resourceCount ?? "unknown"}</dd>
        <dt>Terraform version</dt>
        <dd>{sv.terraformVersion ?? "—"}</dd>
        <dt>Lineage</dt>
        <dd>
          <code>{sv.lineage ?? "—"}</code>
        </dd>
        <dt>Size</dt>
        <dd>{sv.size} bytes</dd>
      </dl>
      {sv.download ? (
        <p>
          <a class="download" id="state-download" href={sv.download}>
            Download this state
          </a>
        </p>
      ) : null}
      {!sv.current && sv.currentId ? (
        <p>
          <a href={statePath(organization, workspace, sv.currentId)}>The current state version</a>
        </p>
      ) : null}

      {sv.canRollBack ? (
        <section aria-labelledby="rollback-h">
          <h2 id="rollback-h">Roll back</h2>
          <p>
            Rolling back makes a new current version holding this version's state; no version is removed.{" "}
            {sv.lockedByYou ? null : (
              <>
                The workspace must be locked by you first: <a href={wsPath(organization, workspace)}>lock it on the workspace page</a>.
              </>
            )}
          </p>
          <p>
            <a id="rollback-link" href={`${statePath(organization, workspace, sv.id)}/rollback`}>
              Roll back to this version…
            </a>
          </p>
        </section>
      ) : null}

      {sv.outputs ? (
        <section aria-labelledby="outputs-h">
          <h2 id="outputs-h">Outputs</h2>
          {sv.outputs.length ? <OutputsTable outputs={sv.outputs} /> : <p class="muted">This state has no outputs.</p>}
        </section>
      ) : null}

      <section aria-labelledby="resources-h">
        <h2 id="resources-h">Resources</h2>
        {sv.resourceCount === null ? (
          <p class="error" id="resources-unknown">
            This state's resources are unknown: its raw state could not be read (OpenTofu's encrypted state, for one), and no JSON state came with it.
          </p>
        ) : sv.status !== "finalized" ? (
          <p class="muted">This version's state was never uploaded.</p>
        ) : sv.resources.length ? (
          <Table id="resources" columns={["Address", "Provider", "Count"]} optional={["Module", "Type", "Name"]}>
            {sv.resources.map((r) => (
              <tr>
                <td>
                  <code>{address(r)}</code>
                </td>
                <td>
                  <code>{provider(r.provider)}</code>
                </td>
                <td>{r.count}</td>
                <td class="opt">{r.module}</td>
                <td class="opt">{r.type}</td>
                <td class="opt">{r.name}</td>
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">This state has no managed resources.</p>
        )}
      </section>
    </Layout>
  );
}

export interface RollbackView {
  organization: string;
  workspace: string;
  id: string;
  serial: number;
  createdAt: string;
  resourceCount: number | null;
  lineage: string | null;
  /** The version is the workspace's current one: nothing to roll back to. */
  isCurrent: boolean;
  finalized: boolean;
  current: { id: string; serial: number } | null;
  lock: LockState;
  holderName: string | null;
  lockedByYou: boolean;
  /** A refused rollback: the API's reasons. */
  errors?: string[];
}

export function RollbackPage(props: { principal: Principal; rb: RollbackView }) {
  const rb = props.rb;
  const { organization, workspace } = rb;
  const self = statePath(organization, workspace, rb.id);
  const offered = !rb.isCurrent && rb.finalized;
  return (
    <Layout title={`Roll back ${workspace} to serial ${rb.serial}`} principal={props.principal}>
      <Crumbs organization={organization} workspace={workspace} last={`roll back to serial ${rb.serial}`} />
      <h1>Roll back to serial {rb.serial}</h1>
      <p>
        A rollback makes a new current state version holding the state of <a href={self}>serial {rb.serial}</a> (created {when(rb.createdAt)},{" "}
        {rb.resourceCount ?? "unknown"} resources). Every version stays in the history. The infrastructure itself is not changed: the next run compares it with
        this state.
      </p>
      <dl class="attrs">
        <dt>Current version</dt>
        <dd>{rb.current ? <a href={statePath(organization, workspace, rb.current.id)}>serial {rb.current.serial}</a> : "none"}</dd>
        <dt>Lineage</dt>
        <dd>
          <code>{rb.lineage ?? "—"}</code>
        </dd>
        <dt>Lock</dt>
        <dd id="lock-state">
          {rb.lock.locked ? (
            <>
              <span class="badge locked">locked</span> by {holderText(rb.lock, rb.holderName)}
              {rb.lockedByYou ? " (you)" : ""}
            </>
          ) : (
            <span class="badge">unlocked</span>
          )}
        </dd>
      </dl>
      {rb.lockedByYou ? null : (
        <p id="lock-needed">
          The workspace must be locked by you to roll back. <a href={wsPath(organization, workspace)}>Lock it on the workspace page</a>, then come back.
        </p>
      )}
      {rb.errors?.length ? <Reasons id="rollback-errors" what="The rollback was refused:" errors={rb.errors} /> : null}
      {offered ? (
        <form method="post" action={`${self}/rollback`} class="confirm">
          <div class="check">
            <input id="rb-confirm" name="confirm" type="checkbox" required />
            <label for="rb-confirm">Make serial {rb.serial}'s state the workspace's current state</label>
          </div>
          <p>
            <button class="danger" type="submit">
              Roll back to this version
            </button>{" "}
            <a href={self}>Cancel</a>
          </p>
        </form>
      ) : (
        <p class="muted" id="rollback-unavailable">
          {rb.isCurrent ? "This version is already the current state." : "This version has no state to roll back to."}
        </p>
      )}
    </Layout>
  );
}
