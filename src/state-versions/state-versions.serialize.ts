import { signedBlobUrl } from "../blobs/blobs.urls";
import type { Bindings } from "../env";
import type { Resource } from "../jsonapi/document";
import { outputId, type StateVersionView } from "./state-versions.store";
import { resourcesUnknown } from "./state.parse";

/**
 * `canUpload`: the caller may create state versions. Upload URLs go only to such
 * callers and only while the version is pending; the DO accepts each blob once.
 */
export async function serializeStateVersion(
  env: Bindings,
  origin: string,
  workspaceId: string,
  sv: StateVersionView,
  opts: { canUpload: boolean },
): Promise<Resource> {
  const finalized = sv.status === "finalized";
  const uploadable = opts.canUpload && sv.status === "pending";
  const url = (method: "GET" | "PUT", kind: "state" | "json") => signedBlobUrl(env, origin, method, workspaceId, sv.id, kind);
  const outputs = sv.parsed?.outputs ?? [];
  return {
    id: sv.id,
    type: "state-versions",
    attributes: {
      "created-at": sv.created_at,
      size: sv.size,
      serial: sv.serial,
      lineage: sv.lineage,
      status: sv.status,
      intermediate: sv.intermediate === 1,
      "state-version": 4,
      "terraform-version": sv.parsed?.terraformVersion ?? null,
      // False while the state has not arrived, and for good when neither it nor a JSON state could be read:
      // its empty resources then mean "unknown", as the docs say of an unprocessed version.
      "resources-processed": finalized && !resourcesUnknown(sv.parsed),
      // The instance keys are ours (for /workspaces/:id/resources); the state version shows what the real one does.
      resources: (sv.parsed?.resources ?? []).map(({ keys: _keys, ...r }) => r),
      providers: sv.parsed?.providers ?? {},
      modules: sv.parsed?.modules ?? {},
      "hosted-state-download-url": finalized ? await url("GET", "state") : null,
      "hosted-state-upload-url": uploadable ? await url("PUT", "state") : null,
      "hosted-json-state-download-url": sv.json_present === 1 ? await url("GET", "json") : null,
      "hosted-json-state-upload-url": uploadable && sv.json_present !== 1 ? await url("PUT", "json") : null,
      "vcs-commit-sha": null,
      "vcs-commit-url": null,
    },
    relationships: {
      run: { data: sv.run_id ? { id: sv.run_id, type: "runs" } : null },
      "rollback-state-version": { data: sv.rollback_of ? { id: sv.rollback_of, type: "state-versions" } : null },
      "created-by": { data: sv.created_by ? { id: sv.created_by, type: "users" } : null },
      workspace: { data: { id: workspaceId, type: "workspaces" } },
      outputs: { data: outputs.map((_, i) => ({ id: outputId(sv.id, i), type: "state-version-outputs" })) },
    },
    links: { self: `/api/v2/state-versions/${sv.id}` },
  };
}

/**
 * Outputs; a sensitive value is shown only to callers who may read state versions. The real service
 * also sends an attribute named `type`, which JSON:API forbids: the type is in `output-type`.
 */
export function serializeOutputs(sv: StateVersionView, type: "state-version-outputs" | "workspace-outputs", canReadSensitive: boolean): Resource[] {
  return (sv.parsed?.outputs ?? []).map((o, i) => ({
    id: outputId(sv.id, i),
    type,
    attributes: {
      name: o.name,
      sensitive: o.sensitive,
      "output-type": typeof o.type === "string" ? o.type : JSON.stringify(o.type),
      "detailed-type": o.type,
      value: o.sensitive && !canReadSensitive ? null : o.value,
    },
    links: { self: `/api/v2/state-version-outputs/${outputId(sv.id, i)}` },
  }));
}

/** `module.a.module.b` → `a.b` (as the real service shows modules); the root module is `root`. */
const moduleName = (module: string) => (module === "root" ? "root" : module.replace(/(^|\.)module\./g, "$1"));
/** `provider["registry.terraform.io/hashicorp/aws"]` → `hashicorp/aws`. */
const providerName = (provider: string) => /\["(?:[^/"]+\/)?([^"]+)"\]/.exec(provider)?.[1] ?? provider;
const keySuffix = (key: string | number | null) => (key === null ? "" : typeof key === "number" ? `[${key}]` : `[${JSON.stringify(key)}]`);

/** A stable id for one resource instance of a workspace (the same address always gets the same id). */
function resourceId(workspaceId: string, address: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const ch of `${workspaceId}/${address}`) {
    const c = ch.codePointAt(0)!;
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return `wsr-${h1.toString(36)}${h2.toString(36)}`;
}

/** The managed resource instances of the workspace's current state (`GET /workspaces/:id/resources`). */
export function serializeResources(workspaceId: string, sv: StateVersionView | null): Resource[] {
  if (!sv?.parsed) return [];
  return sv.parsed.resources.flatMap((r) => {
    const module = moduleName(r.module);
    const keys = r.keys ?? (r.count === 1 ? [null] : Array.from({ length: r.count }, (_, i) => i));
    return keys.map((key) => {
      const address = `${module === "root" ? "" : `${module}.`}${r.type}.${r.name}${keySuffix(key)}`;
      return {
        id: resourceId(workspaceId, address),
        type: "resources",
        attributes: {
          address,
          name: r.name,
          "created-at": sv.created_at,
          "updated-at": sv.created_at,
          module,
          provider: providerName(r.provider),
          "provider-type": r.type,
          "modified-by-state-version-id": sv.id,
          "name-index": key === null ? null : String(key),
        },
      };
    });
  });
}
