/** What a raw Terraform state says about managed resources and outputs (pure, for the DO). */

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

export interface ParsedState {
  terraformVersion: string | null;
  resources: StateResource[];
  /** Managed resource instances: what makes a workspace "manage resources" (safe delete). */
  resourceCount: number;
  outputs: StateOutput[];
  providers: Record<string, Json>;
  modules: Record<string, Json>;
}

interface RawState {
  terraform_version?: unknown;
  resources?: Array<{ mode?: unknown; type?: unknown; name?: unknown; module?: unknown; provider?: unknown; instances?: unknown[] }>;
  outputs?: Record<string, { value?: Json; type?: Json; sensitive?: unknown }>;
}

/** Parses state JSON; anything that is not a Terraform state yields an empty result rather than a failure. */
export function parseState(text: string): ParsedState {
  let raw: RawState;
  try {
    raw = JSON.parse(text) as RawState;
  } catch {
    return { terraformVersion: null, resources: [], resourceCount: 0, outputs: [], providers: {}, modules: {} };
  }
  const resources: StateResource[] = [];
  const providers: Record<string, Json> = {};
  const modules: Record<string, Json> = {};
  let resourceCount = 0;
  for (const r of Array.isArray(raw.resources) ? raw.resources : []) {
    if (r.mode !== "managed") continue;
    const count = Array.isArray(r.instances) ? r.instances.length : 0;
    resourceCount += count;
    const provider = String(r.provider ?? "");
    const module = String(r.module ?? "root");
    const keys = (Array.isArray(r.instances) ? r.instances : []).map((i) => {
      const key = (i as { index_key?: unknown } | null)?.index_key;
      return typeof key === "number" || typeof key === "string" ? key : null;
    });
    resources.push({ name: String(r.name ?? ""), type: String(r.type ?? ""), count, module, provider, keys });
    providers[provider] = {};
    modules[module] = {};
  }
  const outputs: StateOutput[] = Object.entries(raw.outputs && typeof raw.outputs === "object" ? raw.outputs : {}).map(([name, o]) => ({
    name,
    sensitive: o?.sensitive === true,
    type: o?.type ?? typeof o?.value,
    value: o?.value ?? null,
  }));
  return { terraformVersion: typeof raw.terraform_version === "string" ? raw.terraform_version : null, resources, resourceCount, outputs, providers, modules };
}
