/** @jsxImportSource hono/jsx */
/**
 * Forms, as every page reads and shows them: fields of a posted form, a refused form's reasons next to it and what
 * was sent, the run of a form's service call (post/redirect/get, or the page again with the API's reasons), inputs.
 */
import { ApiError } from "../errors";
import type { Ctx } from "./context";
import { Reasons } from "./parts";

export type Form = Record<string, string | File | (string | File)[]>;
export const text = (form: Form, k: string): string => {
  const v = form[k];
  return typeof v === "string" ? v : Array.isArray(v) && typeof v[0] === "string" ? v[0] : "";
};
export const ticked = (form: Form, k: string): boolean => text(form, k) === "on";
/** Every value of a repeated field (checkboxes sharing a name). */
export const values = (form: Form, k: string): string[] => {
  const v = form[k];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string");
};
/** Repeated fields arrive as arrays only when `all` is asked for. */
export const formOf = (c: Ctx): Promise<Form> => c.req.parseBody({ all: true });

/** A refused form: which one, what was sent, and the API's reasons. */
export interface Refusal {
  form: string;
  values: Record<string, string>;
  errors: string[];
}

/** The reasons a form was refused, next to it (`id`: `<form>-errors`). */
export function Refused(props: { refusal?: Refusal; form: string; what: string }) {
  const r = props.refusal;
  if (!r || r.form !== props.form || !r.errors.length) return null;
  return <Reasons id={`${props.form}-errors`} what={props.what} errors={r.errors} />;
}

/** What was sent to a refused form (undefined: it was not the one refused). */
export const sentOf = (refusal: Refusal | undefined, form: string): Record<string, string> | undefined => (refusal?.form === form ? refusal.values : undefined);

/** What was sent to a refused form, else the current value. */
export const sentOr = (refusal: Refusal | undefined, form: string, k: string, current: unknown): string =>
  refusal?.form === form ? (refusal.values[k] ?? "") : current === null || current === undefined ? "" : String(current);

/** A refusal of the input: a 400 or 422, or a 404 naming a field (a user, team, project or workspace not found), never of the page's resource. */
export const refusesInput = (e: unknown): e is ApiError =>
  e instanceof ApiError && (e.status === 400 || e.status === 422 || (e.status === 404 && e.errors.some((x) => !!x.source && "pointer" in x.source)));

export const reasonsOf = (e: ApiError) => e.errors.map((x) => x.detail ?? x.title);

/**
 * Runs a form's service call: on success, post/redirect/get to `done` (or where its result says); a refused input shows the page again with
 * the API's reasons (422); anything else (not found, forbidden) is the error page with the API's status.
 */
export async function attempt<T>(
  c: Ctx,
  run: () => Promise<T>,
  done: string | ((result: T) => string),
  again: (errors: string[]) => Promise<Response>,
): Promise<Response> {
  let result: T;
  try {
    result = await run();
  } catch (e) {
    if (refusesInput(e)) return again(reasonsOf(e));
    throw e;
  }
  return c.redirect(typeof done === "string" ? done : done(result), 303);
}

/** A labelled checkbox. */
export function Check(props: { id: string; name: string; label: string; checked: boolean; disabled?: boolean; value?: string }) {
  return (
    <div class="check">
      <input id={props.id} name={props.name} type="checkbox" checked={props.checked} disabled={props.disabled} value={props.value} />
      <label for={props.id}>{props.label}</label>
    </div>
  );
}

/** A labelled text input. */
export function Input(props: { id: string; name: string; label: string; value: string; wide?: boolean; type?: string; autocomplete?: string }) {
  return (
    <div class={props.wide ? "wide" : undefined}>
      <label for={props.id}>{props.label}</label>
      <input id={props.id} name={props.name} type={props.type ?? "text"} value={props.value} autocomplete={props.autocomplete} />
    </div>
  );
}

/** A one-button POST form (remove, delete, cancel); `label` says what it acts on, for screen readers. */
export function ButtonForm(props: { action: string; label: string; text: string; danger?: boolean; hidden?: Record<string, string> }) {
  return (
    <form method="post" action={props.action} class="inline">
      {Object.entries(props.hidden ?? {}).map(([k, v]) => (
        <input type="hidden" name={k} value={v} />
      ))}
      <button type="submit" class={props.danger ? "danger" : undefined}>
        {props.text}
        <span class="sr-only"> {props.label}</span>
      </button>
    </form>
  );
}
