/** @jsxImportSource hono/jsx */
/** The variable set pages: plain data in, HTML out (src/ui/varsets/varsets.routes.tsx calls the services). */
import type { OrgAccess } from "../../auth/access";
import type { VariableView } from "../../variables/variables.types";
import type { Varset } from "../../varsets/varsets.d1";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOr } from "../forms";
import { OrgFrame, orgPage } from "../organizations/organizations.parts";
import { Pager, Submit, Table } from "../parts";

const yes = (b: boolean) => (b ? "yes" : "no");

/** The name, description, global and priority fields of the create and settings forms. */
function SetFields(props: { prefix: string; form: string; refusal?: Refusal; set?: Varset; projectOwned?: boolean }) {
  const r = props.refusal;
  const sent = r?.form === props.form;
  const flag = (k: "global" | "priority") => (sent ? r?.values[k] === "true" : (props.set?.[k] ?? false));
  return (
    <>
      <Input id={`${props.prefix}-name`} name="name" label="Name" value={sentOr(r, props.form, "name", props.set?.name)} />
      <Input
        id={`${props.prefix}-description`}
        name="description"
        label="Description"
        value={sentOr(r, props.form, "description", props.set?.description)}
        wide
      />
      {props.projectOwned ? null : <Check id={`${props.prefix}-global`} name="global" label="Global (every workspace)" checked={flag("global")} />}
      <Check id={`${props.prefix}-priority`} name="priority" label="Priority (overrides workspace variables)" checked={flag("priority")} />
    </>
  );
}

export function VarsetListPage(props: {
  access: OrgAccess;
  sets: Varset[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  mayCreate: boolean;
  refusal?: Refusal;
}) {
  const org = props.access.organization.name;
  return (
    <OrgFrame access={props.access} current="varsets" title="Variable sets">
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "variable set" : "variable sets"}
      </p>
      <Table id="varsets" columns={["Name", "Applies to"]} optional={["Priority", "Variables"]}>
        {props.sets.map((s) => (
          <tr data-varset={s.name}>
            <td>
              <a href={orgPage(org, "varsets", s.id)}>{s.name}</a>
            </td>
            <td>
              {s.global ? (
                <span class="badge">global</span>
              ) : (
                `${s.workspaceIds.length} ${s.workspaceIds.length === 1 ? "workspace" : "workspaces"}, ${s.projectIds.length} ${s.projectIds.length === 1 ? "project" : "projects"}`
              )}
            </td>
            <td class="opt">{yes(s.priority)}</td>
            <td class="opt">{s.varIds.length}</td>
          </tr>
        ))}
      </Table>
      <Pager page={props.page} total={props.total} query={props.query} />
      {props.mayCreate ? (
        <section aria-labelledby="create-h">
          <h2 id="create-h">New variable set</h2>
          <Refused refusal={props.refusal} form="create" what="The variable set was not created:" />
          <form class="settings" method="post" action={orgPage(org, "varsets")}>
            <SetFields prefix="c" form="create" refusal={props.refusal} />
            <Submit text="Create variable set" />
          </form>
        </section>
      ) : null}
    </OrgFrame>
  );
}

export interface VarsetView {
  set: Varset;
  variables: VariableView[];
  /** The workspaces and projects the set is applied to that the caller may read (the API's `include`). */
  workspaces: Array<{ id: string; name: string }>;
  projects: Array<{ id: string; name: string }>;
  /** The owning project's name, for a project-owned set. */
  ownerProject: string | null;
  manage: boolean;
  refusal?: Refusal;
}

const CATEGORIES: Array<[string, string]> = [
  ["terraform", "Terraform variable"],
  ["env", "Environment variable"],
];

function VariableFields(props: { prefix: string; form: string; refusal?: Refusal; v?: VariableView }) {
  const r = props.refusal;
  const sent = r?.form === props.form;
  const v = props.v;
  const category = sentOr(r, props.form, "category", v?.category ?? "terraform");
  return (
    <>
      <Input id={`${props.prefix}-key`} name="key" label="Key" value={sentOr(r, props.form, "key", v?.key)} />
      <div>
        <label for={`${props.prefix}-value`}>{v?.sensitive ? "New value (empty: unchanged)" : "Value"}</label>
        {/* A sensitive value is write-only: never sent back to the browser. */}
        <input id={`${props.prefix}-value`} name="value" value={v?.sensitive ? "" : sentOr(r, props.form, "value", v?.value)} autocomplete="off" />
      </div>
      <div>
        <label for={`${props.prefix}-category`}>Category</label>
        <select id={`${props.prefix}-category`} name="category">
          {CATEGORIES.map(([k, label]) => (
            <option value={k} selected={category === k}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <Input id={`${props.prefix}-description`} name="description" label="Description" value={sentOr(r, props.form, "description", v?.description)} wide />
      <Check id={`${props.prefix}-hcl`} name="hcl" label="HCL" checked={sent ? r?.values.hcl === "true" : (v?.hcl ?? false)} />
      {v?.sensitive ? (
        <p class="muted">Sensitive: it stays sensitive.</p>
      ) : (
        <Check id={`${props.prefix}-sensitive`} name="sensitive" label="Sensitive (write-only)" checked={sent ? r?.values.sensitive === "true" : false} />
      )}
    </>
  );
}

function VariablesSection(props: { view: VarsetView; base: string }) {
  const { variables, manage, refusal } = props.view;
  return (
    <section aria-labelledby="vars-h">
      <h2 id="vars-h">Variables</h2>
      {variables.length === 0 ? (
        <p class="muted">No variables yet.</p>
      ) : (
        <Table id="variables" columns={["Key", "Value"]} optional={["Category", "HCL", "Description"]}>
          {variables.map((v) => (
            <tr data-var={v.key}>
              <td>
                <code>{v.key}</code>
              </td>
              <td>{v.sensitive ? <span class="badge">sensitive</span> : <code>{v.value ?? ""}</code>}</td>
              <td class="opt">{v.category}</td>
              <td class="opt">{yes(v.hcl)}</td>
              <td class="opt">{v.description ?? ""}</td>
            </tr>
          ))}
        </Table>
      )}
      {manage
        ? variables.map((v) => {
            const form = `var-${v.id}`;
            return (
              <details class="edit" open={refusal?.form === form}>
                <summary>
                  Edit <code>{v.key}</code>
                </summary>
                <Refused refusal={refusal} form={form} what="The variable was not saved:" />
                <form class="settings" method="post" action={`${props.base}/vars/${v.id}`}>
                  <VariableFields prefix={`e-${v.id}`} form={form} refusal={refusal} v={v} />
                  <Submit text="Save variable" />
                </form>
                <div class="actions">
                  <ButtonForm action={`${props.base}/vars/${v.id}/delete`} text="Delete variable" label={v.key} danger />
                </div>
              </details>
            );
          })
        : null}
      {manage ? (
        <>
          <h3 id="add-var-h">Add a variable</h3>
          <Refused refusal={refusal} form="add-var" what="The variable was not added:" />
          <form class="settings" method="post" action={`${props.base}/vars`} aria-labelledby="add-var-h">
            <VariableFields prefix="a" form="add-var" refusal={refusal} />
            <Submit text="Add variable" />
          </form>
        </>
      ) : null}
    </section>
  );
}

/** The workspaces or projects the set is applied to, with remove buttons and an add-by-name form for managers. */
function Targets(props: { view: VarsetView; base: string; kind: "workspaces" | "projects" }) {
  const { manage, refusal } = props.view;
  const items = props.view[props.kind];
  const one = props.kind === "workspaces" ? "workspace" : "project";
  const form = `add-${one}`;
  return (
    <>
      <h3 id={`${props.kind}-h`}>{props.kind === "workspaces" ? "Workspaces" : "Projects"}</h3>
      {items.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="consumers" id={`applied-${props.kind}`}>
          {items.map((t) => (
            <li data-target={t.name}>
              <span>{t.name}</span>
              {manage ? <ButtonForm action={`${props.base}/${props.kind}/delete`} hidden={{ id: t.id }} text="Remove" label={`${one} ${t.name}`} /> : null}
            </li>
          ))}
        </ul>
      )}
      {manage ? (
        <>
          <Refused refusal={refusal} form={form} what={`The ${one} was not added:`} />
          <form class="actions" method="post" action={`${props.base}/${props.kind}`}>
            <div>
              <label for={`${form}-name`}>{`Apply to ${one} (name)`}</label>
              <input id={`${form}-name`} name="name" value={sentOr(refusal, form, "name", "")} />
            </div>
            <button type="submit">Apply</button>
          </form>
        </>
      ) : null}
    </>
  );
}

export function VarsetPage(props: { access: OrgAccess; view: VarsetView }) {
  const { set, manage, refusal } = props.view;
  const org = props.access.organization.name;
  const base = orgPage(org, "varsets", set.id);
  return (
    <OrgFrame access={props.access} current="varsets" title={set.name} crumbs={<a href={orgPage(org, "varsets")}>Variable sets</a>}>
      <dl class="attrs">
        <dt>Description</dt>
        <dd>{set.description || "—"}</dd>
        <dt>Owner</dt>
        <dd>{props.view.ownerProject ? `project ${props.view.ownerProject}` : "the organisation"}</dd>
        <dt>Global</dt>
        <dd id="global">{yes(set.global)}</dd>
        <dt>Priority</dt>
        <dd id="priority">{yes(set.priority)}</dd>
        <dt>ID</dt>
        <dd>
          <code>{set.id}</code>
        </dd>
      </dl>
      <VariablesSection view={props.view} base={base} />
      <section aria-labelledby="applies-h">
        <h2 id="applies-h">Where it applies</h2>
        {set.global ? (
          <p>Every workspace of the organisation.</p>
        ) : (
          <>
            <Targets view={props.view} base={base} kind="workspaces" />
            <Targets view={props.view} base={base} kind="projects" />
          </>
        )}
      </section>
      {manage ? (
        <section aria-labelledby="set-settings-h">
          <h2 id="set-settings-h">Settings</h2>
          <Refused refusal={refusal} form="settings" what="The variable set was not saved:" />
          <form class="settings" method="post" action={base}>
            <SetFields prefix="s" form="settings" refusal={refusal} set={set} projectOwned={!!set.projectId} />
            <Submit text="Save variable set" />
          </form>
          <details class="danger">
            <summary>Delete this variable set</summary>
            <p>Its variables stop applying to every workspace it reaches.</p>
            <ButtonForm action={`${base}/delete`} text="Delete variable set" label={set.name} danger />
          </details>
        </section>
      ) : null}
    </OrgFrame>
  );
}
