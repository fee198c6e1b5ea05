/** @jsxImportSource hono/jsx */
/** A workspace's runs and one run's page: plain data in, HTML out (src/ui/runs/runs.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import type { PhaseStatus, RunStatus } from "../../runs/runs.types";
import { wsPath } from "../context";
import { Layout } from "../layout";
import type { RenderedLog } from "./run-log.view";
import type { PlanView } from "./run-plan.view";
import { Choice, Field, FilterForm, Pager, Reasons, Table } from "../parts";

export const runPath = (org: string, name: string, runId: string) => `${wsPath(org, name)}/runs/${encodeURIComponent(runId)}`;

/** What a phase changes (the counts its plan or apply reported). */
export interface Counts {
  additions: number;
  changes: number;
  destructions: number;
  imports: number;
}

export interface RunRowView {
  id: string;
  status: RunStatus;
  message: string;
  createdAt: string;
  createdBy: string | null;
  planOnly: boolean;
  isDestroy: boolean;
  plan: { status: PhaseStatus; counts: Counts };
  apply: { status: PhaseStatus; counts: Counts };
}

export interface PhaseView {
  id: string;
  status: PhaseStatus;
  statusTimestamps: Record<string, string>;
  counts: Counts;
  /** Null: the phase has not started, so it has no log. */
  log: RenderedLog | null;
  /** The page shows only the log's head; the rest is at `rawUrl`. */
  truncated: boolean;
  /** The log's own signed URL (as the API's `log-read-url`). */
  rawUrl: string;
}

/** The run actions offered on the page: the caller's `permissions` and the run's `actions` both allow them. */
export type RunForm = "apply" | "discard" | "cancel" | "force-cancel";

export interface RunRefusal {
  form: RunForm;
  values: { comment: string };
  errors: string[];
}

export interface RunView {
  organization: string;
  workspace: string;
  id: string;
  status: RunStatus;
  message: string;
  source: string;
  createdAt: string;
  createdBy: string | null;
  confirmedBy: string | null;
  statusTimestamps: Record<string, string>;
  planOnly: boolean;
  savePlan: boolean;
  isDestroy: boolean;
  autoApply: boolean;
  hasChanges: boolean;
  final: boolean;
  /** The page refreshes itself: the run moves on without anyone acting. */
  live: boolean;
  plan: PhaseView;
  apply: PhaseView;
  /** The run's task stages and their results (run tasks). */
  taskStages: Array<{
    stage: string;
    status: string;
    results: Array<{ name: string; enforcement: string; status: string; message: string; url: string; outcomes: number }>;
  }>;
  /** The commit a run from a repository plans (its configuration version's ingress attributes). */
  commit: {
    sha: string;
    url: string | null;
    branch: string | null;
    tag: string | null;
    message: string | null;
    author: string | null;
    pullRequestNumber: number | null;
    pullRequestUrl: string | null;
  } | null;
  /** The plan's changes, a page of resources at a time (null: no JSON plan yet). */
  diff: (PlanView & { size: number }) | null;
  comments: Array<{ body: string; createdAt: string }>;
  offered: Record<RunForm, boolean>;
  refusal?: RunRefusal;
}

const when = (iso: string) => `${iso.slice(0, 19).replace("T", " ")} UTC`;

function Time(props: { iso: string }) {
  return <time datetime={props.iso}>{when(props.iso)}</time>;
}

/** `plan-queued-at` → `plan queued`. */
const timestampLabel = (key: string) => key.replace(/-at$/, "").replace(/-/g, " ");

/** `planned_and_finished` → `planned and finished`. */
const label = (s: string) => s.replace(/_/g, " ");

const statusClass = (s: string) =>
  s === "errored" || s === "canceled" || s === "unreachable" || s === "failed"
    ? "badge bad"
    : s === "applied" || s === "planned_and_finished" || s === "finished" || s === "passed"
      ? "badge good"
      : s === "discarded" || s === "pending"
        ? "badge"
        : "badge busy";

function Status(props: { status: string; id?: string }) {
  return (
    <span class={statusClass(props.status)} id={props.id}>
      {label(props.status)}
    </span>
  );
}

/** `+1 ~0 -2` with its meaning in words for screen readers. */
function CountsText(props: { counts: Counts }) {
  const c = props.counts;
  return (
    <span class="counts" title={`${c.additions} to add, ${c.changes} to change, ${c.destructions} to destroy`}>
      <span class="a-f2">+{c.additions}</span> <span class="a-f3">~{c.changes}</span> <span class="a-f1">−{c.destructions}</span>
      {c.imports ? <span> ↓{c.imports}</span> : null}
      <span class="sr-only">
        {` (${c.additions} to add, ${c.changes} to change, ${c.destructions} to destroy${c.imports ? `, ${c.imports} to import` : ""})`}
      </span>
    </span>
  );
}

const STATUS_GROUPS: Array<[string, string]> = [
  ["", "Any status"],
  ["non_final", "Not finished"],
  ["final", "Finished"],
  ["discardable", "Awaiting confirmation"],
];
const OPERATIONS: Array<[string, string]> = [
  ["", "All but speculative plans"],
  ["plan_only", "Speculative plans"],
  ["plan_and_apply", "Plan and apply"],
  ["destroy", "Destroy"],
  ["save_plan", "Saved plans"],
  ["refresh_only", "Refresh only"],
];

export function RunListPage(props: {
  principal: Principal;
  organization: string;
  workspace: string;
  rows: RunRowView[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  /** The "New run" form, for a caller who may queue runs (`destroy`: who may also queue destroy plans). */
  newRun: { destroy: boolean; open?: boolean; refusal?: { values: Record<string, string>; errors: string[] } } | null;
}) {
  const q = props.query;
  const ws = wsPath(props.organization, props.workspace);
  return (
    <Layout title={`Runs of ${props.workspace}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / <a href={`/app/${encodeURIComponent(props.organization)}/workspaces`}>{props.organization}</a> /{" "}
        <a href={ws}>{props.workspace}</a> / runs
      </nav>
      <h1>Runs</h1>
      {props.newRun ? <NewRunForm ws={ws} newRun={props.newRun} /> : null}
      <FilterForm label="Filter runs" sizeId="r-size" size={props.page.size}>
        <Field id="r-search" name="search[basic]" label="Run id or message contains" query={q} />
        <Choice id="r-group" name="filter[status_group]" label="Status" options={STATUS_GROUPS} query={q} />
        <Choice id="r-op" name="filter[operation]" label="Operation" options={OPERATIONS} query={q} />
      </FilterForm>
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "run" : "runs"}
      </p>
      {props.rows.length ? (
        <Table id="runs" columns={["Run", "Status", "Message"]} optional={["Created by", "Created", "Plan", "Apply"]}>
          {props.rows.map((r) => (
            <tr data-run={r.id}>
              <td>
                <a href={runPath(props.organization, props.workspace, r.id)}>
                  <code>{r.id}</code>
                </a>
                {r.planOnly ? <span class="badge">speculative</span> : null}
                {r.isDestroy ? <span class="badge">destroy</span> : null}
              </td>
              <td>
                <Status status={r.status} />
              </td>
              <td class="message">{r.message}</td>
              <td class="opt">{r.createdBy ?? "—"}</td>
              <td class="opt">
                <Time iso={r.createdAt} />
              </td>
              <td class="opt">{r.plan.status === "finished" ? <CountsText counts={r.plan.counts} /> : label(r.plan.status)}</td>
              <td class="opt">{r.apply.status === "finished" ? <CountsText counts={r.apply.counts} /> : label(r.apply.status)}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No runs.</p>
      )}
      <Pager page={props.page} total={props.total} query={q} />
    </Layout>
  );
}

/** HCP's "New run": a run of the current configuration version, of the kind chosen. */
function NewRunForm(props: { ws: string; newRun: { destroy: boolean; open?: boolean; refusal?: { values: Record<string, string>; errors: string[] } } }) {
  const sent = props.newRun.refusal?.values ?? { kind: "apply" };
  const kinds: Array<[string, string]> = [
    ["apply", "Plan and apply"],
    ["plan-only", "Plan only"],
    ["refresh-only", "Refresh state"],
    ...(props.newRun.destroy ? ([["destroy", "Destroy all resources"]] as Array<[string, string]>) : []),
  ];
  return (
    <details class="edit" id="new-run" open={props.newRun.refusal || props.newRun.open ? true : undefined}>
      <summary>New run</summary>
      {props.newRun.refusal ? <Reasons id="new-run-errors" what="The run was not queued:" errors={props.newRun.refusal.errors} /> : null}
      <form class="settings" method="post" action={`${props.ws}/runs/new`}>
        <div>
          <label for="nr-kind">Kind</label>
          <select id="nr-kind" name="kind">
            {kinds.map(([v, l]) => (
              <option value={v} selected={sent.kind === v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <div class="wide">
          <label for="nr-message">Message</label>
          <input id="nr-message" name="message" value={sent.message ?? ""} />
        </div>
        <div class="wide">
          <label for="nr-targets">Target addresses (one per line)</label>
          <textarea id="nr-targets" name="target-addrs" rows={2}>
            {sent["target-addrs"] ?? ""}
          </textarea>
        </div>
        <div class="wide">
          <label for="nr-replace">Replace addresses (one per line)</label>
          <textarea id="nr-replace" name="replace-addrs" rows={2}>
            {sent["replace-addrs"] ?? ""}
          </textarea>
        </div>
        <div class="wide">
          <label for="nr-vars">Run variables (key = value, one per line; values are HCL)</label>
          <textarea id="nr-vars" name="variables" rows={2}>
            {sent.variables ?? ""}
          </textarea>
        </div>
        <div>
          <button type="submit">Start run</button>
        </div>
      </form>
    </details>
  );
}

function Refused(props: { refusal?: RunRefusal }) {
  const r = props.refusal;
  if (!r?.errors.length) return null;
  const what = {
    apply: "The run was not confirmed:",
    discard: "The run was not discarded:",
    cancel: "The run was not canceled:",
    "force-cancel": "The run was not force-canceled:",
  }[r.form];
  return <Reasons id={`${r.form}-errors`} what={what} errors={r.errors} />;
}

/**
 * One action's form: an optional comment, then its button. A page that refreshes itself asks for no comment (the
 * refresh would wipe it); the run then waits for nobody, and cancelling needs no words.
 */
function ActionForm(props: { base: string; form: RunForm; button: string; cls?: string; refusal?: RunRefusal; comment: boolean }) {
  const id = `${props.form}-comment`;
  const sent = props.refusal?.form === props.form ? props.refusal.values.comment : "";
  return (
    <form method="post" action={`${props.base}/${props.form}`} class="run-action">
      {props.comment ? (
        <div>
          <label for={id}>Comment with the {props.form === "apply" ? "confirmation" : props.form.replace("-", " ")} (optional)</label>
          <textarea id={id} name="comment" rows={2}>
            {sent}
          </textarea>
        </div>
      ) : null}
      <button type="submit" class={props.cls}>
        {props.button}
      </button>
    </form>
  );
}

function PhaseSection(props: { name: "Plan" | "Apply"; phase: PhaseView }) {
  const p = props.phase;
  const key = props.name.toLowerCase();
  return (
    <section aria-labelledby={`${key}-h`}>
      <h2 id={`${key}-h`}>
        {props.name} <Status status={p.status} id={`${key}-status`} />
      </h2>
      <dl class="attrs">
        <dt>ID</dt>
        <dd>
          <code>{p.id}</code>
        </dd>
        <dt>Resources</dt>
        <dd id={`${key}-counts`}>
          <CountsText counts={p.counts} />
        </dd>
        {Object.entries(p.statusTimestamps).map(([k, v]) => (
          <>
            <dt>{timestampLabel(k)}</dt>
            <dd>
              <Time iso={v} />
            </dd>
          </>
        ))}
      </dl>
      {p.log?.spans.length ? (
        <>
          <pre class="log" id={`${key}-log`} tabindex={0} role="log" aria-label={`${props.name} log`}>
            {p.log.spans.map((s) => (s.cls ? <span class={s.cls}>{s.text}</span> : s.text))}
          </pre>
          <p class="muted">
            {p.truncated ? "Only the start of the log is shown. " : p.status === "running" && !p.log.complete ? "The log is still streaming. " : ""}
            <a href={p.rawUrl} id={`${key}-raw`}>
              Raw log
            </a>
          </p>
        </>
      ) : (
        <p class="muted" id={`${key}-no-log`}>
          {p.status === "pending" || p.status === "queued" ? `The ${key} has not started.` : p.status === "running" ? "No output yet." : "No log."}
        </p>
      )}
    </section>
  );
}

/** One value of a diff cell: a sensitive or unknown one in words, absent as nothing. */
function Value(props: { v: string | null }) {
  if (props.v === null) return <span class="muted">—</span>;
  if (props.v === "(sensitive value)" || props.v === "(known after apply)") return <em class="muted">{props.v}</em>;
  return <code>{props.v}</code>;
}

/** The plan's resources, each collapsed with its attribute diff, paged; then the outputs that change. */
function PlanDiff(props: { run: RunView; diff: PlanView & { size: number } }) {
  const { diff } = props;
  const from = (diff.page - 1) * diff.size;
  const base = runPath(props.run.organization, props.run.workspace, props.run.id);
  const pages = Math.ceil(diff.total / diff.size);
  return (
    <section aria-labelledby="changes-h">
      <h2 id="changes-h">Resource changes</h2>
      {diff.total === 0 ? <p class="muted">The plan changes no resources.</p> : null}
      {diff.total > diff.size ? (
        <p id="changes-range">
          Showing {from + 1}–{from + diff.changes.length} of {diff.total} changed resources.{" "}
          {diff.page > 1 ? <a href={`${base}?changes-page=${diff.page - 1}#changes-h`}>Previous</a> : null}{" "}
          {diff.page < pages ? <a href={`${base}?changes-page=${diff.page + 1}#changes-h`}>Next</a> : null}
        </p>
      ) : null}
      <div id="changes">
        {diff.changes.map((ch) => (
          <details class="change-item" data-change={ch.address}>
            <summary>
              <span class={`change ${ch.action}`}>{ch.action}</span> <code>{ch.address}</code>{" "}
              <span class="muted">
                ({ch.attributes.length} attribute{ch.attributes.length === 1 ? "" : "s"})
              </span>
            </summary>
            {ch.attributes.length ? (
              <Table columns={["Attribute", "Before", "After"]}>
                {ch.attributes.map((a) => (
                  <tr>
                    <td>
                      <code>{a.path || "(value)"}</code>
                      {a.forcesReplacement ? <span class="badge forces">forces replacement</span> : null}
                    </td>
                    <td>
                      <Value v={a.before} />
                    </td>
                    <td>
                      <Value v={a.after} />
                    </td>
                  </tr>
                ))}
              </Table>
            ) : (
              <p class="muted">No attribute changes.</p>
            )}
          </details>
        ))}
      </div>
      {diff.outputs.length ? (
        <>
          <h3 id="outputs-h">Output changes</h3>
          <Table id="output-changes" columns={["Action", "Output", "Before", "After"]}>
            {diff.outputs.map((o) => (
              <tr data-output={o.name}>
                <td>
                  <span class={`change ${o.action}`}>{o.action}</span>
                </td>
                <td>
                  <code>{o.name}</code>
                </td>
                <td>
                  <Value v={o.before} />
                </td>
                <td>
                  <Value v={o.after} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      ) : null}
    </section>
  );
}

export function RunPage(props: { principal: Principal; run: RunView }) {
  const r = props.run;
  const ws = wsPath(r.organization, r.workspace);
  const base = runPath(r.organization, r.workspace, r.id);
  const any = Object.values(r.offered).some(Boolean);
  return (
    <Layout title={`Run ${r.id}`} principal={props.principal} refreshSeconds={r.live ? 2 : undefined}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / <a href={`/app/${encodeURIComponent(r.organization)}/workspaces`}>{r.organization}</a> /{" "}
        <a href={ws}>{r.workspace}</a> / <a href={`${ws}/runs`}>runs</a> / {r.id}
      </nav>
      <h1>
        Run <code>{r.id}</code> <Status status={r.status} id="run-status" />
      </h1>
      {r.live ? (
        <p class="muted" id="live">
          This page refreshes itself every 2 seconds until the run needs someone or is over.
        </p>
      ) : null}
      <dl class="attrs">
        <dt>Message</dt>
        <dd id="run-message">{r.message}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={r.createdAt} />
          {r.createdBy ? ` by ${r.createdBy}` : ""}
        </dd>
        {r.confirmedBy ? (
          <>
            <dt>Confirmed by</dt>
            <dd>{r.confirmedBy}</dd>
          </>
        ) : null}
        <dt>Source</dt>
        <dd>{r.source}</dd>
        {r.commit ? (
          <>
            <dt>Commit</dt>
            <dd id="run-commit">
              {r.commit.url ? (
                <a href={r.commit.url}>
                  <code>{r.commit.sha.slice(0, 8)}</code>
                </a>
              ) : (
                <code>{r.commit.sha.slice(0, 8)}</code>
              )}
              {r.commit.branch ? ` on ${r.commit.branch}` : r.commit.tag ? ` tag ${r.commit.tag}` : ""}
              {r.commit.author ? ` by ${r.commit.author}` : ""}
              {r.commit.message ? <span class="muted"> — {r.commit.message.split("\n")[0]}</span> : null}
              {r.commit.pullRequestNumber !== null ? (
                <>
                  {" · "}
                  {r.commit.pullRequestUrl ? (
                    <a href={r.commit.pullRequestUrl}>pull request #{r.commit.pullRequestNumber}</a>
                  ) : (
                    `pull request #${r.commit.pullRequestNumber}`
                  )}
                </>
              ) : null}
            </dd>
          </>
        ) : null}
        <dt>Operation</dt>
        <dd>
          {[r.planOnly ? "speculative plan" : r.savePlan ? "saved plan" : "plan and apply", r.isDestroy ? "destroy" : null, r.autoApply ? "auto-apply" : null]
            .filter(Boolean)
            .join(", ")}
        </dd>
        <dt>Has changes</dt>
        <dd>{r.hasChanges ? "yes" : "no"}</dd>
      </dl>

      {any || r.refusal ? (
        <section aria-labelledby="actions-h">
          <h2 id="actions-h">Actions</h2>
          <Refused refusal={r.refusal} />
          <div class="actions run-actions">
            {r.offered.apply ? <ActionForm base={base} form="apply" button="Confirm and apply" cls="primary" refusal={r.refusal} comment={!r.live} /> : null}
            {r.offered.discard ? <ActionForm base={base} form="discard" button="Discard run" refusal={r.refusal} comment={!r.live} /> : null}
            {r.offered.cancel ? <ActionForm base={base} form="cancel" button="Cancel run" cls="danger" refusal={r.refusal} comment={!r.live} /> : null}
            {r.offered["force-cancel"] ? (
              <ActionForm base={base} form="force-cancel" button="Force cancel" cls="danger" refusal={r.refusal} comment={!r.live} />
            ) : null}
          </div>
        </section>
      ) : null}

      <h2>Timeline</h2>
      <ol class="timeline" id="timeline">
        {Object.entries(r.statusTimestamps)
          .sort(([, a], [, b]) => a.localeCompare(b))
          .map(([k, v]) => (
            <li>
              <span>{timestampLabel(k)}</span> <Time iso={v} />
            </li>
          ))}
      </ol>

      {r.taskStages.length ? (
        <section aria-labelledby="task-stages-h">
          <h2 id="task-stages-h">Run tasks</h2>
          <Table id="task-stages" columns={["Stage", "Task", "Enforcement", "Status", "Message"]}>
            {r.taskStages.flatMap((s) =>
              s.results.map((t) => (
                <tr data-stage={s.stage}>
                  <td>
                    {s.stage.replace("_", "-")} <Status status={s.status} />
                  </td>
                  <td>{t.name}</td>
                  <td>{t.enforcement}</td>
                  <td>
                    <Status status={t.status} />
                  </td>
                  <td>
                    {t.message}
                    {t.url ? (
                      <>
                        {" "}
                        <a href={t.url} rel="noopener noreferrer">
                          details
                        </a>
                      </>
                    ) : null}
                    {t.outcomes ? <span class="muted"> ({t.outcomes} outcomes)</span> : null}
                  </td>
                </tr>
              )),
            )}
          </Table>
        </section>
      ) : null}

      <PhaseSection name="Plan" phase={r.plan} />

      {r.diff ? <PlanDiff run={r} diff={r.diff} /> : null}

      {r.planOnly ? null : <PhaseSection name="Apply" phase={r.apply} />}

      {r.comments.length ? (
        <section aria-labelledby="comments-h">
          <h2 id="comments-h">Comments</h2>
          <ul id="comments" class="comments">
            {r.comments.map((c) => (
              <li>
                <Time iso={c.createdAt} /> — {c.body}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </Layout>
  );
}
