/**
 * The workspace's settings, one row each: what a request may send, what the record stores, the value a new
 * workspace (and a record stored before the setting existed) gets, how a sent value becomes the setting, the
 * attribute names a response shows it under, and the editions that serve it. The request schema
 * (workspaces.schemas.ts), the settings type, the defaults, the update path (workspace.rules.ts), the serialiser
 * and the record upgrade (workspace.record.ts) all read this table: a new setting is one row here and its test.
 */
import { z } from "@hono/zod-openapi";
import type { Edition } from "../platform/edition";
import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";

/** `<digits><d|h>`, greater than 0, at most four digits. */
export const AUTO_DESTROY_DURATION = /^\d{1,4}[dh]$/;
/** An exact version (`1.2.3`, `1.2.3-beta1`) or a constraint (`~> 1.0.0`, `>= 1.2, < 2.0`), or `latest`. */
const VERSION = String.raw`v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?`;
export const ENGINE_VERSION = new RegExp(String.raw`^(latest|\s*((~>|>=|<=|!=|=|>|<)\s*)?${VERSION}\s*(,\s*((~>|>=|<=|!=|=|>|<)\s*)?${VERSION}\s*)*)$`);

const str = (max: number = LIMITS.genericStringMax) => z.string().max(max);
const nullableStr = (max: number = LIMITS.genericStringMax) => z.string().max(max).nullable();
const timestamp = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 timestamp");
const triggerList = z.array(z.string().max(LIMITS.genericStringMax)).max(LIMITS.triggerListMax);

const executionMode = z.enum(["remote", "local", "agent"]);
export type ExecutionMode = z.infer<typeof executionMode>;

/** A connected repository as the record keeps it. */
const vcsRepo = z.object({
  identifier: z.string(),
  "oauth-token-id": z.string().nullable(),
  "vcs-app-installation-id": z.string().nullable(),
  branch: z.string(),
  "ingress-submodules": z.boolean(),
  "tags-regex": z.string().nullable(),
  /** The OAuth client's provider and the repository's web page, noted when the token was given (for the API's view). */
  "service-provider": z.string().optional(),
  "repository-http-url": z.string().optional(),
});
export type VcsRepo = z.infer<typeof vcsRepo>;

/** A vcs-repo as a request sends it: any of its keys (an update changes only those), the app id under either name. */
const vcsRepoInput = z.object({
  identifier: str(255).optional(),
  "oauth-token-id": str(64).optional(),
  "vcs-app-installation-id": str(64).optional(),
  "github-app-installation-id": str(64).optional(),
  branch: str(255).optional(),
  "ingress-submodules": z.boolean().optional(),
  "tags-regex": nullableStr(255).optional(),
});

/** What a default may depend on: only a new workspace's own request. */
export interface DefaultContext {
  latestEngineVersion: string;
}

const A = "/data/attributes";
const invalid = (key: string, detail: string): Failure => fail("invalid_attribute", detail, `${A}/${key}`);

/** One setting: `I` is what a request may send, `V` what the record stores. */
interface Row<I extends z.ZodType, V extends z.ZodType, N extends string> {
  /** What a request may send (the request schema makes it optional). */
  input: I;
  /** The stored value, when its shape differs from `input`'s. */
  value?: V;
  /** Other request names for the same setting (real clients' spellings); when several are sent they must agree. */
  aliases?: readonly N[];
  /** A new workspace's value, and a stored record's when it predates the setting. */
  default: NoInfer<z.output<V>>;
  /** How a sent value becomes the setting (a Failure refuses the request); absent, as sent. */
  update?(sent: NoInfer<z.output<I>>): NoInfer<z.output<V>> | Failure;
  /** Set by the rules in workspace.rules.ts instead, which also read `operations` and `setting-overwrites`. */
  byRules?: true;
  /** The attributes a response shows the stored value under: absent, the setting's own name; [] when the serialiser derives what it shows. */
  wire?: readonly string[];
  /** The one edition that accepts and shows it (the other ignores it in requests and never shows it); absent, both. */
  edition?: Edition;
  /** Narrower than `edition` for responses only: both accept it, only this edition shows it. */
  shownIn?: Edition;
}

/** A row whose default depends on the request names the value a record stored before the setting existed. */
type ComputedRow<I extends z.ZodType, V extends z.ZodType, N extends string> = Omit<Row<I, V, N>, "default"> & {
  default: (c: DefaultContext) => NoInfer<z.output<V>>;
  upgrade: NoInfer<z.output<V>>;
};

type AnyRow = Row<z.ZodType, z.ZodType, string> | ComputedRow<z.ZodType, z.ZodType, string>;

function field<I extends z.ZodType, const N extends string = never>(row: Row<I, I, N> | ComputedRow<I, I, N>): NoInfer<Row<I, I, N> | ComputedRow<I, I, N>>;
function field<I extends z.ZodType, V extends z.ZodType, const N extends string = never>(
  row: (Row<I, V, N> | ComputedRow<I, V, N>) & { value: V },
): NoInfer<Row<I, V, N> | ComputedRow<I, V, N>>;
function field(row: AnyRow): AnyRow {
  return row;
}

/** A boolean setting shown under its own name. */
const bool = (initial: boolean, editions: { edition?: Edition; shownIn?: Edition } = {}) => field({ input: z.boolean(), default: initial, ...editions });

export const FIELDS = {
  // Shown as the agent-pool relationship, the effective pool.
  "agent-pool-id": field({ input: nullableStr(64), default: null, byRules: true, wire: [] }),
  "allow-destroy-plan": bool(true),
  // Health assessments are HCP's (the self-hosted edition ignores the attribute); no assessment runs here, so only
  // false is taken (go-tfe and the tfe provider send false unless told otherwise).
  "assessments-enabled": field({
    input: z.boolean(),
    default: false,
    update: (on) => (on ? invalid("assessments-enabled", "Health assessments are not available, so assessments-enabled can only be false") : on),
    edition: "hosted",
  }),
  "auto-apply": bool(false),
  "auto-apply-run-trigger": bool(false),
  "auto-destroy-at": field({
    input: timestamp.nullable(),
    default: null,
    update: (at) => (at === null ? null : new Date(at).toISOString()),
  }),
  "auto-destroy-activity-duration": field({
    input: nullableStr(16),
    default: null,
    update: (d) =>
      d !== null && (!AUTO_DESTROY_DURATION.test(d) || parseInt(d, 10) <= 0)
        ? invalid(
            "auto-destroy-activity-duration",
            "Auto destroy activity duration has an incorrect format, we expect up to 4 numeric digits and 1 unit ('d' or 'h')",
          )
        : d,
  }),
  "inherits-project-auto-destroy": bool(true),
  description: field({ input: nullableStr(LIMITS.descriptionMax), default: null }),
  // null while inheriting the project's / organisation's default (setting-overwrites false); shown as the effective mode.
  "execution-mode": field({ input: executionMode, value: executionMode.nullable(), default: null, byRules: true, wire: [] }),
  "file-triggers-enabled": bool(true),
  "global-remote-state": bool(false),
  // A Terraform Enterprise setting: the hosted edition does not show it (it still honours a sent value).
  "project-remote-state": bool(false, { shownIn: "self-hosted" }),
  // Hold-your-own-key encryption needs a key configuration in the organisation, which this service does not offer.
  "hyok-enabled": field({
    input: z.boolean(),
    default: false,
    update: (on) => (on ? invalid("hyok-enabled", "Hold your own key is not available, so hyok-enabled can only be false") : on),
    edition: "hosted",
  }),
  "queue-all-runs": bool(false),
  "source-name": field({ input: nullableStr(255), default: null }),
  "source-url": field({ input: nullableStr(), default: null }),
  "speculative-enabled": bool(true),
  "structured-run-output-enabled": bool(true),
  "engine-version": field({
    input: str(128),
    aliases: ["engine_version", "terraform-version", "terraform_version"],
    default: (c) => c.latestEngineVersion,
    // Every record has had one since the first; one without would follow the newest release.
    upgrade: "latest",
    update: (v) => (ENGINE_VERSION.test(v) ? v.trim() : invalid("engine-version", `Engine version "${v}" is not a valid version or version constraint`)),
    wire: ["engine-version", "terraform-version"],
  }),
  "trigger-patterns": field({ input: triggerList, default: [] }),
  "trigger-prefixes": field({ input: triggerList, default: [] }),
  "working-directory": field({ input: nullableStr(), default: null }),
  // Shown by the serialiser as `vcs-repo` (a view of it), `vcs-repo-identifier` and `oauth-client-name`.
  "vcs-repo": field({ input: vcsRepoInput.nullable(), value: vcsRepo.nullable(), default: null, byRules: true, wire: [] }),
} satisfies Record<string, AnyRow>;

type Fields = typeof FIELDS;
export type FieldName = keyof Fields;
const rows = Object.entries(FIELDS) as Array<[FieldName, AnyRow]>;

type ValueOf<R> = R extends { value?: infer V extends z.ZodType } ? V : never;
/** The settings as the record stores them. */
export const workspaceSettings = z.object(Object.fromEntries(rows.map(([k, r]) => [k, r.value ?? r.input])) as { [K in FieldName]: ValueOf<Fields[K]> });
export type WorkspaceSettings = z.infer<typeof workspaceSettings>;

type AliasOf<R> = R extends { aliases?: readonly (infer N extends string)[] } ? N : never;
type Aliases = { [K in FieldName]: AliasOf<Fields[K]> }[FieldName];
type InputShape = { [K in FieldName]: z.ZodOptional<Fields[K]["input"]> } & {
  [N in Aliases]: z.ZodOptional<{ [K in FieldName]: N extends AliasOf<Fields[K]> ? Fields[K]["input"] : never }[FieldName]>;
};

/** The request attributes of every setting, each followed by its aliases. */
export const settingsInputShape = Object.fromEntries(
  rows.flatMap(([k, r]) => [k, ...(r.aliases ?? [])].map((name) => [name, r.input.optional()])),
) as InputShape;

/** Whether an edition accepts the field in requests. */
export const acceptedIn = (row: AnyRow, edition: Edition): boolean => row.edition === undefined || row.edition === edition;
/** Whether an edition's responses show the field. */
export const shownIn = (row: AnyRow, edition: Edition): boolean => acceptedIn(row, edition) && (row.shownIn === undefined || row.shownIn === edition);

/** The rows in table order, for the readers that go through every setting. */
export const fieldRows: ReadonlyArray<readonly [FieldName, AnyRow]> = rows;

/** The attributes a response shows a setting under. */
export const wireNames = (name: FieldName, row: AnyRow): readonly string[] => row.wire ?? [name];

/**
 * The response attributes of every setting shown under its own names, with the stored value's schema (optional
 * when only one edition shows it), for the workspace's response schema.
 */
export const settingsResponseShape: Record<string, z.ZodType> = Object.fromEntries(
  rows.flatMap(([k, r]) => wireNames(k, r).map((name) => [name, r.edition || r.shownIn ? (r.value ?? r.input).optional() : (r.value ?? r.input)])),
);

const copy = <T>(v: T): T => (Array.isArray(v) ? ([...v] as T) : v);

/** A new workspace's settings before its request applies. */
export function defaultSettings(latestEngineVersion: string): WorkspaceSettings {
  const c: DefaultContext = { latestEngineVersion };
  return Object.fromEntries(rows.map(([k, r]) => [k, typeof r.default === "function" ? r.default(c) : copy(r.default)])) as WorkspaceSettings;
}

/** Stored settings with every setting added since they were written (the row's `upgrade`, else its default); `s` itself when none is missing. */
export function upgradeSettings(s: WorkspaceSettings): WorkspaceSettings {
  const missing = rows.filter(([k]) => !(k in s));
  if (missing.length === 0) return s;
  return { ...s, ...Object.fromEntries(missing.map(([k, r]) => [k, "upgrade" in r ? r.upgrade : copy(r.default)])) };
}
