/** @jsxImportSource hono/jsx */
/**
 * The workspace's daily-work pages: a new workspace, its variables (a list, an add form, an edit page per
 * variable) and its tags. Plain data in, HTML out (src/ui/ui.workspace-forms.tsx calls the services). Sensitive
 * values never reach these pages: the services never open them, and a refused form never echoes one back.
 */
import type { Principal } from "../../auth/principal";
import type { VariableView } from "../../variables/variables.types";
import { orgPath, wsPath } from "../context";
import { Layout } from "../layout";
import { Reasons, Table } from "../parts";

/** A refused form: which one, what was sent (never a sensitive value), and the API's reasons. */
export interface FormRefusal {
  form: string;
  values: Record<string, string>;
  errors: string[];
}

function Refused(props: { refusal?: FormRefusal; form: string; what: string }) {
  const r = props.refusal;
  if (!r || r.form !== props.form || !r.errors.length) return null;
  return <Reasons id={`${props.form}-errors`} what={props.what} errors={r.errors} />;
}

const sentOf = (r: FormRefusal | undefined, form: string): Record<string, string> | undefined => (r?.form === form ? r.values : undefined);

function Crumbs(props: { organization: string; workspace?: string; here: string }) {
  return (
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href="/app">Organisations</a> / <a href={orgPath(props.organization, "workspaces")}>{props.organization}</a> /{" "}
      {props.workspace ? (
        <>
          <a href={wsPath(props.organization, props.workspace)}>{props.workspace}</a> /{" "}
        </>
      ) : null}
      {props.here}
    </nav>
  );
}

function Check(props: { id: string; name: string; label: string; checked: boolean }) {
  return (
    <div class="check">
      <input id={props.id} name={props.name} type="checkbox" checked={props.checked} />
      <label for={props.id}>{props.label}</label>
    </div>
  );
}

// ---- a new workspace ----

export const EXECUTION_MODES = ["remote", "local", "agent"] as const;

export function NewWorkspacePage(props: {
  principal: Principal;
  organization: string;
  projects: Array<{ id: string; name: string; isDefault: boolean }>;
  refusal?: FormRefusal;
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
        <div>
          <button class="primary" type="submit">
            Create workspace
          </button>
        </div>
      </form>
    </Layout>
  );
}

// ---- variables ----

export interface WorkspaceName {
  organization: string;
  name: string;
}

/** A variable set reaching the workspace, and from where (applied to it, to its project, or global). */
export interface VarsetRow {
  id: string;
  name: string;
  scope: "global" | "project" | "workspace";
  priority: boolean;
}

const CATEGORIES = ["terraform", "env"] as const;

function CategorySelect(props: { id: string; current?: string }) {
  return (
    <select id={props.id} name="category">
      {CATEGORIES.map((c) => (
        <option value={c} selected={props.current === c}>
          {c === "terraform" ? "Terraform variable" : "Environment variable"}
        </option>
      ))}
    </select>
  );
}

/** The fields a variable's add and edit forms share; `value` is left empty for a sensitive variable (write-only). */
function VariableFields(props: { prefix: string; v: Record<string, string>; sensitiveNow: boolean }) {
  const p = props.prefix;
  const v = props.v;
  return (
    <>
      <div>
        <label for={`${p}-key`}>Key</label>
        <input id={`${p}-key`} name="key" autocomplete="off" value={v.key ?? ""} />
      </div>
      <div>
        <label for={`${p}-category`}>Category</label>
        <CategorySelect id={`${p}-category`} current={v.category} />
      </div>
      <div class="wide">
        <label for={`${p}-value`}>{props.sensitiveNow ? "New value (write-only: leave empty to keep the current one)" : "Value"}</label>
        <textarea id={`${p}-value`} name="value" rows={2} autocomplete="off">
          {props.sensitiveNow ? "" : (v.value ?? "")}
        </textarea>
      </div>
      <div class="wide">
        <label for={`${p}-description`}>Description</label>
        <input id={`${p}-description`} name="description" value={v.description ?? ""} />
      </div>
      <Check id={`${p}-hcl`} name="hcl" label="HCL" checked={v.hcl === "on"} />
      <Check id={`${p}-sensitive`} name="sensitive" label="Sensitive (write-only)" checked={v.sensitive === "on"} />
    </>
  );
}

const varsPath = (ws: WorkspaceName) => `${wsPath(ws.organization, ws.name)}/variables`;

export function VariablesPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  canWrite: boolean;
  variables: VariableView[];
  varsets: VarsetRow[] | null;
  refusal?: FormRefusal;
}) {
  const { ws } = props;
  const base = varsPath(ws);
  const sent = sentOf(props.refusal, "add-variable") ?? { category: "terraform" };
  const columns = props.canWrite ? ["Key", "Value", "Category", "Flags", "Edit"] : ["Key", "Value", "Category", "Flags"];
  return (
    <Layout title={`Variables · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Variables" />
      <h1>Variables of {ws.name}</h1>
      {props.variables.length ? (
        <Table id="variables" columns={columns} optional={["Description"]}>
          {props.variables.map((v) => (
            <tr data-variable={v.id}>
              <td>
                <code>{v.key}</code>
              </td>
              <td>{v.sensitive ? <span class="muted">(sensitive, write-only)</span> : <code>{v.value ?? ""}</code>}</td>
              <td>{v.category}</td>
              <td>
                {v.hcl ? <span class="badge">HCL</span> : null} {v.sensitive ? <span class="badge">sensitive</span> : null}
              </td>
              {props.canWrite ? (
                <td>
                  <a href={`${base}/${encodeURIComponent(v.id)}/edit`} aria-label={`Edit variable ${v.key} (${v.category})`}>
                    Edit
                  </a>
                </td>
              ) : null}
              <td class="opt">{v.description ?? ""}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No variables.</p>
      )}
      {props.canWrite ? (
        <section aria-labelledby="add-variable-h">
          <h2 id="add-variable-h">Add a variable</h2>
          <Refused refusal={props.refusal} form="add-variable" what="The variable was not added:" />
          <form class="settings" method="post" action={base}>
            <VariableFields prefix="v" v={sent} sensitiveNow={false} />
            <div>
              <button class="primary" type="submit">
                Add variable
              </button>
            </div>
          </form>
        </section>
      ) : null}
      {props.varsets ? (
        <section aria-labelledby="varsets-h">
          <h2 id="varsets-h">Variable sets that apply</h2>
          {props.varsets.length ? (
            <ul id="varsets">
              {props.varsets.map((s) => (
                <li data-varset={s.id}>
                  {s.name}{" "}
                  <span class="muted">
                    ({s.scope === "global" ? "global" : s.scope === "project" ? "applied to the project" : "applied to this workspace"}
                    {s.priority ? ", priority" : ""})
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No variable set applies to this workspace.</p>
          )}
        </section>
      ) : null}
    </Layout>
  );
}

export function VariableEditPage(props: { principal: Principal; ws: WorkspaceName; variable: VariableView; refusal?: FormRefusal }) {
  const { ws, variable } = props;
  const action = `${varsPath(ws)}/${encodeURIComponent(variable.id)}`;
  const current: Record<string, string> = {
    key: variable.key,
    category: variable.category,
    value: variable.value ?? "",
    description: variable.description ?? "",
    hcl: variable.hcl ? "on" : "",
    sensitive: variable.sensitive ? "on" : "",
  };
  const sent = sentOf(props.refusal, "edit-variable") ?? current;
  return (
    <Layout title={`Variable ${variable.key} · ${ws.name}`} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / <a href={orgPath(ws.organization, "workspaces")}>{ws.organization}</a> /{" "}
        <a href={wsPath(ws.organization, ws.name)}>{ws.name}</a> / <a href={varsPath(ws)}>Variables</a> / {variable.key}
      </nav>
      <h1>
        Edit variable <code>{variable.key}</code>
      </h1>
      <Refused refusal={props.refusal} form="edit-variable" what="The variable was not saved:" />
      <form class="settings" method="post" action={action}>
        <VariableFields prefix="e" v={sent} sensitiveNow={variable.sensitive} />
        <div>
          <button class="primary" type="submit">
            Save variable
          </button>
        </div>
      </form>
      <details class="danger" open={props.refusal?.form === "delete-variable"}>
        <summary>Delete this variable</summary>
        <Refused refusal={props.refusal} form="delete-variable" what="The variable was not deleted:" />
        <form method="post" action={`${action}/delete`}>
          <div class="check">
            <input id="d-confirm" name="confirm" type="checkbox" required />
            <label for="d-confirm">Yes, delete {variable.key}</label>
          </div>
          <p>
            <button class="danger" type="submit">
              Delete variable
            </button>
          </p>
        </form>
      </details>
    </Layout>
  );
}

// ---- tags ----

export function TagsPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  canManage: boolean;
  tags: string[];
  bindings: Array<{ key: string; value: string }>;
  inherited: Array<{ key: string; value: string; project: string }>;
  refusal?: FormRefusal;
}) {
  const { ws } = props;
  const base = `${wsPath(ws.organization, ws.name)}/tags`;
  const sentTag = sentOf(props.refusal, "flat-tags") ?? {};
  const sentBinding = sentOf(props.refusal, "tag-bindings") ?? {};
  return (
    <Layout title={`Tags · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Tags" />
      <h1>Tags of {ws.name}</h1>
      <section aria-labelledby="flat-h">
        <h2 id="flat-h">Tags</h2>
        {props.tags.length ? (
          <ul id="flat-tags" class="consumers">
            {props.tags.map((t) => (
              <li data-tag={t}>
                <span class="tag">{t}</span>
                {props.canManage ? (
                  <form method="post" action={`${base}/delete`}>
                    <input type="hidden" name="name" value={t} />
                    <button type="submit" aria-label={`Remove tag ${t}`}>
                      Remove
                    </button>
                  </form>
                ) : null}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">No tags.</p>
        )}
        {props.canManage ? (
          <>
            <Refused refusal={props.refusal} form="flat-tags" what="The tag was not added:" />
            <form class="actions" method="post" action={base}>
              <div>
                <label for="t-name">Tag</label>
                <input id="t-name" name="name" autocomplete="off" value={sentTag.name ?? ""} />
              </div>
              <button type="submit">Add tag</button>
            </form>
          </>
        ) : null}
      </section>
      <section aria-labelledby="bindings-h">
        <h2 id="bindings-h">Tag bindings</h2>
        <Refused refusal={props.refusal} form="tag-bindings" what="The tag bindings were not changed:" />
        {props.bindings.length || props.inherited.length ? (
          <Table id="tag-bindings" columns={props.canManage ? ["Key", "Value", "Source", "Change"] : ["Key", "Value", "Source"]}>
            {props.bindings.map((b) => (
              <tr data-binding={b.key}>
                <td>{b.key}</td>
                <td>{b.value || "—"}</td>
                <td>this workspace</td>
                {props.canManage ? (
                  <td>
                    <div class="actions">
                      <form method="post" action={`${base}/bindings`}>
                        <input type="hidden" name="key" value={b.key} />
                        <input name="value" value={b.value} aria-label={`New value of ${b.key}`} autocomplete="off" />
                        <button type="submit" aria-label={`Save the value of ${b.key}`}>
                          Save
                        </button>
                      </form>
                      <form method="post" action={`${base}/bindings/delete`}>
                        <input type="hidden" name="key" value={b.key} />
                        <button class="danger" type="submit" aria-label={`Remove binding ${b.key}`}>
                          Remove
                        </button>
                      </form>
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
            {props.inherited.map((b) => (
              <tr class="inherited" data-inherited={b.key}>
                <td>{b.key}</td>
                <td>{b.value || "—"}</td>
                <td>
                  inherited from project <strong>{b.project}</strong>
                </td>
                {props.canManage ? <td class="muted">set on the project</td> : null}
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">No tag bindings.</p>
        )}
        {props.canManage ? (
          <form class="actions" method="post" action={`${base}/bindings`}>
            <div>
              <label for="b-key">Key</label>
              <input id="b-key" name="key" autocomplete="off" value={sentBinding.key ?? ""} />
            </div>
            <div>
              <label for="b-value">Value</label>
              <input id="b-value" name="value" autocomplete="off" value={sentBinding.value ?? ""} />
            </div>
            <button type="submit">Add binding</button>
          </form>
        ) : null}
      </section>
    </Layout>
  );
}
