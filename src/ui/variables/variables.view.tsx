/** @jsxImportSource hono/jsx */
/**
 * A workspace's variables: a list, an add form and an edit page per variable. Plain data in, HTML out
 * (src/ui/variables/variables.routes.tsx calls the services). Sensitive values never reach these pages: the services
 * never open them, and a refused form never echoes one back.
 */
import type { Principal } from "../../auth/principal";
import type { VariableView } from "../../variables/variables.types";
import { orgPath, wsPath } from "../context";
import { Check, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Submit, Table, type WorkspaceName } from "../parts";

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
  refusal?: Refusal;
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
            <Submit text="Add variable" />
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

export function VariableEditPage(props: { principal: Principal; ws: WorkspaceName; variable: VariableView; refusal?: Refusal }) {
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
        <Submit text="Save variable" />
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
