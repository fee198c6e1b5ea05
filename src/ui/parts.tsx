/** @jsxImportSource hono/jsx */
/** Pieces the UI's pages share: list filters, pagers, tables, a refused form's reasons, a workspace page's breadcrumb. */
import type { Child } from "hono/jsx";
import { orgPath, wsPath } from "./context";

/** Previous / next links keeping the page's other query parameters, and where the page is. */
export function Pager(props: { page: { number: number; size: number }; total: number; query: URLSearchParams }) {
  const pages = Math.max(1, Math.ceil(props.total / props.page.size));
  const link = (n: number) => {
    const p = new URLSearchParams(props.query);
    p.set("page[number]", String(n));
    return `?${p.toString()}`;
  };
  return (
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
  );
}

/** A page-size select for a filter form (a size given in the URL is kept among the choices). */
function PageSize(props: { id: string; size: number }) {
  return (
    <div>
      <label for={props.id}>Per page</label>
      <select id={props.id} name="page[size]">
        {[...new Set([5, 20, 50, 100, props.size])]
          .sort((a, b) => a - b)
          .map((n) => (
            <option value={String(n)} selected={props.size === n}>
              {n}
            </option>
          ))}
      </select>
    </div>
  );
}

/** A list's GET filter form: its fields, then the page size (`sizeId` names its select) and the submit button. */
export function FilterForm(props: { label: string; sizeId: string; size: number; children: Child }) {
  return (
    <form class="filters" method="get" aria-label={props.label}>
      {props.children}
      <PageSize id={props.sizeId} size={props.size} />
      <Submit text="Apply" />
    </form>
  );
}

/** A labelled text input of a GET filter form, showing the query's current value. */
export function Field(props: { id: string; name: string; label: string; query: URLSearchParams }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input id={props.id} name={props.name} value={props.query.get(props.name) ?? ""} />
    </div>
  );
}

/** A labelled select of a GET filter form (`[value, label]` options), the query's current value selected. */
export function Choice(props: { id: string; name: string; label: string; options: Array<[string, string]>; query: URLSearchParams }) {
  const current = props.query.get(props.name) ?? "";
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.name}>
        {props.options.map(([v, l]) => (
          <option value={v} selected={current === v}>
            {l}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A table that scrolls sideways on narrow screens: its headings (the `optional` ones, last, hide there), then its rows. */
export function Table(props: { id?: string; columns: string[]; optional?: string[]; children: Child }) {
  return (
    <div class="scroll">
      <table id={props.id}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col">{c}</th>
            ))}
            {(props.optional ?? []).map((c) => (
              <th scope="col" class="opt">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** Why a form was refused (`what`, then the API's reasons), shown next to it. */
export function Reasons(props: { id: string; what: string; errors: string[] }) {
  return (
    <div class="error" role="alert" id={props.id}>
      <p>{props.what}</p>
      <ul>
        {props.errors.map((e) => (
          <li>{e}</li>
        ))}
      </ul>
    </div>
  );
}

/** A workspace, as its pages name it. */
export interface WorkspaceName {
  organization: string;
  name: string;
}

/** A workspace page's breadcrumb: organisations, the organisation, the workspace (if any), where the page is. */
export function Crumbs(props: { organization: string; workspace?: string; here: string }) {
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

/** A form's primary button, in a row of its own (`row`: that row's class). */
export function Submit(props: { text: string; row?: string; id?: string }) {
  return (
    <div class={props.row}>
      <button class="primary" type="submit" id={props.id}>
        {props.text}
      </button>
    </div>
  );
}
