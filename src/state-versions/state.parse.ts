/**
 * What a state version says about managed resources and outputs (pure, for the DO): read from the raw
 * state when it is a Terraform state, else from what the client sent beside it (its `json-state`, the
 * `terraform show -json` format, and `json-state-outputs`), as the real service does.
 */

/** JSON values (typed so they cross Durable Object RPC). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface StateResource {
  name: string;
  type: string;
  count: number;
  module: string;
  provider: string;
  /** Each instance's index key (`count` number, `for_each` string, null without either); absent in states parsed before. */
  keys?: Array<string | number | null>;
}

export interface StateOutput {
  name: string;
  sensitive: boolean;
  type: Json;
  value: Json;
}

/**
 * Where the resources were read from: the raw state; the client's JSON state (the raw state was not one
 * the service can read, such as OpenTofu's encrypted envelope); or nowhere ("none"): the resources are then
 * unknown, not none, and the count of 0 means nothing. Absent in versions parsed before schema 7 whose
 * raw state had resources (the DO's migration re-read the others).
 */
export type ParseSource = "state" | "json-state" | "none";

export interface ParsedState {
  terraformVersion: string | null;
  resources: StateResource[];
  /** Managed resource instances: what makes a workspace "manage resources" (safe delete). */
  resourceCount: number;
  outputs: StateOutput[];
  providers: Record<string, Json>;
  modules: Record<string, Json>;
  source?: ParseSource;
}

/** A finalized version whose resources nobody could read: safe delete must not take its 0 for an answer. */
export const resourcesUnknown = (p: ParsedState | null): boolean => p?.source === "none";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Outputs of a `{name: {value, type, sensitive}}` map (the raw state's `outputs` and `json-state-outputs` alike). */
function outputsOf(map: Obj): StateOutput[] {
  return Object.entries(map).map(([name, raw]) => {
    const o = isObject(raw) ? (raw as { value?: Json; type?: Json; sensitive?: unknown }) : {};
    return { name, sensitive: o.sensitive === true, type: o.type ?? typeof o.value, value: o.value ?? null };
  });
}

/** Adds one resource's instances to the running totals (providers and modules are keyed as the raw state names them). */
class Tally {
  resources: StateResource[] = [];
  providers: Record<string, Json> = {};
  modules: Record<string, Json> = {};
  count = 0;
  add(r: Omit<StateResource, "count">): void {
    const count = r.keys?.length ?? 0;
    this.count += count;
    this.resources.push({ ...r, count });
    this.providers[r.provider] = {};
    this.modules[r.module] = {};
  }
}

/**
 * The raw state (version 4, the format Terraform and OpenTofu write), or null when the text is not one:
 * not JSON, JSON without a `version` and a `resources` list, or an encrypted envelope (`encryption_version`),
 * whose lack of resources says nothing about what it holds.
 */
export function parseRawState(text: string): ParsedState | null {
  const raw = parseJson(text);
  if (!isObject(raw) || typeof raw.version !== "number" || !Array.isArray(raw.resources) || "encryption_version" in raw) return null;
  const tally = new Tally();
  for (const r of raw.resources as unknown[]) {
    if (!isObject(r) || r.mode !== "managed") continue;
    const instances = Array.isArray(r.instances) ? r.instances : [];
    const keys = instances.map((i) => {
      const key = isObject(i) ? i.index_key : undefined;
      return typeof key === "number" || typeof key === "string" ? key : null;
    });
    tally.add({ name: String(r.name ?? ""), type: String(r.type ?? ""), module: String(r.module ?? "root"), provider: String(r.provider ?? ""), keys });
  }
  return {
    terraformVersion: typeof raw.terraform_version === "string" ? raw.terraform_version : null,
    resources: tally.resources,
    resourceCount: tally.count,
    outputs: outputsOf(isObject(raw.outputs) ? raw.outputs : {}),
    providers: tally.providers,
    modules: tally.modules,
    source: "state",
  };
}

interface JsonModule {
  address?: unknown;
  resources?: unknown;
  child_modules?: unknown;
}

/**
 * The client's JSON state (`terraform show -json`: `values.root_module.resources` and nested `child_modules`,
 * one entry per resource instance), or null when it is not one. An empty state has no `values` at all.
 */
export function parseJsonState(text: string): (Omit<ParsedState, "outputs" | "source"> & { outputs: StateOutput[] | null }) | null {
  const doc = parseJson(text);
  if (!isObject(doc) || typeof doc.format_version !== "string") return null;
  const values = isObject(doc.values) ? doc.values : {};
  const tally = new Tally();
  const visit = (m: JsonModule, module: string) => {
    // Instances of one resource, in order; a deposed object repeats its instance's address and is not another instance.
    const groups = new Map<string, { r: Obj; keys: Array<string | number | null>; seen: Set<string> }>();
    for (const r of Array.isArray(m.resources) ? (m.resources as unknown[]) : []) {
      if (!isObject(r) || r.mode !== "managed") continue;
      const id = `${r.type}.${r.name}`;
      const group = groups.get(id) ?? { r, keys: [], seen: new Set<string>() };
      groups.set(id, group);
      const address = String(r.address ?? `${id}[${JSON.stringify(r.index ?? null)}]`);
      if (group.seen.has(address)) continue;
      group.seen.add(address);
      group.keys.push(typeof r.index === "number" || typeof r.index === "string" ? r.index : null);
    }
    for (const { r, keys } of groups.values()) {
      const provider = typeof r.provider_name === "string" ? `provider["${r.provider_name}"]` : "";
      tally.add({ name: String(r.name ?? ""), type: String(r.type ?? ""), module, provider, keys });
    }
    for (const child of Array.isArray(m.child_modules) ? (m.child_modules as unknown[]) : []) {
      if (isObject(child)) visit(child, typeof child.address === "string" ? child.address : module);
    }
  };
  if (isObject(values.root_module)) visit(values.root_module, "root");
  return {
    terraformVersion: typeof doc.terraform_version === "string" ? doc.terraform_version : null,
    resources: tally.resources,
    resourceCount: tally.count,
    outputs: isObject(values.outputs) ? outputsOf(values.outputs) : null,
    providers: tally.providers,
    modules: tally.modules,
  };
}

/** `json-state-outputs` (the `values.outputs` map of the JSON state), or null when it is not a JSON object. */
export function parseJsonOutputs(text: string): StateOutput[] | null {
  const doc = parseJson(text);
  return isObject(doc) ? outputsOf(doc) : null;
}

/**
 * What the service knows of a finalized version. The raw state wins when it is a Terraform state. Otherwise
 * resources and the Terraform version come from the JSON state, outputs from `json-state-outputs` (else the
 * JSON state's own); without a readable JSON state the resources are unknown (`source: "none"`).
 */
export function deriveState(raw: string, json: string | null, outputs: string | null): ParsedState {
  return parseRawState(raw) ?? fromClient(json, outputs);
}

/** The client's side alone (the raw state is known to be unreadable). */
export function fromClient(json: string | null, outputs: string | null): ParsedState {
  const j = json === null ? null : parseJsonState(json);
  const outs = (outputs === null ? null : parseJsonOutputs(outputs)) ?? j?.outputs ?? [];
  if (!j) return { terraformVersion: null, resources: [], resourceCount: 0, outputs: outs, providers: {}, modules: {}, source: "none" };
  return { ...j, outputs: outs, source: "json-state" };
}
