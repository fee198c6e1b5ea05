/**
 * Reads one organisation through the public API, as from the real HCP Terraform or Terraform Enterprise: every list
 * paged, every relationship followed by id, nothing but documented endpoints. State bytes are not read here: the
 * writer asks for them (`StateReader`) only for the versions the target lacks.
 */
import { createHash } from "node:crypto";
import { type ApiClient, ApiError, type Resource } from "./api.client.ts";
import type { Progress } from "./report.ts";
import type {
  AgentPool,
  Project,
  Snapshot,
  StateBytes,
  StateReader,
  StateVersionMeta,
  TagBinding,
  Team,
  TeamAccess,
  Variable,
  VariableSet,
  Workspace,
} from "./snapshot.types.ts";

/** Organisation settings a client may write (HCP Terraform API docs: Organizations, update). */
export const ORGANIZATION_SETTINGS = [
  "email",
  "session-timeout",
  "session-remember",
  "collaborator-auth-policy",
  "cost-estimation-enabled",
  "send-passing-statuses-for-untriggered-speculative-plans",
  "aggregated-commit-status-enabled",
  "speculative-plan-management-enabled",
  "assessments-enforced",
  "allow-force-delete-workspaces",
  "default-execution-mode",
  "owners-team-saml-role-id",
] as const;

/** Workspace settings a client may write (Workspaces API: create and update); execution mode, pool and VCS apart. */
export const WORKSPACE_SETTINGS = [
  "allow-destroy-plan",
  "assessments-enabled",
  "auto-apply",
  "auto-apply-run-trigger",
  "auto-destroy-at",
  "auto-destroy-activity-duration",
  "inherits-project-auto-destroy",
  "description",
  "file-triggers-enabled",
  "global-remote-state",
  "project-remote-state",
  "hyok-enabled",
  "queue-all-runs",
  "source-name",
  "source-url",
  "speculative-enabled",
  "structured-run-output-enabled",
  "terraform-version",
  "trigger-patterns",
  "trigger-prefixes",
  "working-directory",
] as const;

export const TEAM_SETTINGS = ["organization-access", "visibility", "sso-team-id", "allow-member-token-management"] as const;

/** Access attributes of a team on a workspace (Team Access API); `access: custom` uses the others. */
export const WORKSPACE_ACCESS = [
  "access",
  "runs",
  "variables",
  "state-versions",
  "sentinel-mocks",
  "workspace-locking",
  "run-tasks",
  "policy-overrides",
] as const;
export const PROJECT_ACCESS = ["access", "project-access", "workspace-access"] as const;

/** `a*,b?` → one regular expression: `*` any run of characters, `?` one, a comma between alternatives. */
export function globMatcher(glob: string | undefined): (name: string) => boolean {
  if (!glob) return () => true;
  const alternatives = glob
    .split(",")
    .map((g) => g.trim())
    .filter(Boolean)
    .map((g) =>
      g
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, "."),
    );
  const re = new RegExp(`^(?:${alternatives.join("|")})$`);
  return (name) => re.test(name);
}

export function pick(attributes: Record<string, unknown> | undefined, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (attributes && k in attributes && attributes[k] !== undefined) out[k] = attributes[k];
  return out;
}

const relId = (r: Resource, name: string): string | null => r.relationships?.[name]?.data?.id ?? null;
const relIds = (r: Resource, name: string): string[] => ((r.relationships?.[name]?.data ?? []) as Resource[]).map((d) => d.id);

export function variableOf(r: Resource): Variable {
  const a = r.attributes ?? {};
  return {
    key: a.key,
    // The API hides a sensitive value (null); the writer creates the variable empty and the summary lists it.
    value: a.sensitive ? null : (a.value ?? ""),
    description: a.description ?? null,
    category: a.category,
    hcl: a.hcl === true,
    sensitive: a.sensitive === true,
  };
}

const bindingsOf = (list: Resource[]): TagBinding[] => list.map((b) => ({ key: b.attributes?.key, value: b.attributes?.value ?? null }));

/** md5, serial and lineage of a raw state (what the API's create takes), read from its bytes. */
export function stateIdentity(bytes: Buffer): { md5: string; serial: number | null; lineage: string | null } {
  const md5 = createHash("md5").update(bytes).digest("hex");
  try {
    const s = JSON.parse(bytes.toString("utf8"));
    return { md5, serial: typeof s.serial === "number" ? s.serial : null, lineage: typeof s.lineage === "string" ? s.lineage : null };
  } catch {
    return { md5, serial: null, lineage: null };
  }
}

/** Runs `fn` over `items`, `width` at a time, in order of start. */
export async function pool<T>(items: T[], width: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** The source's answer to its first request, turned into the message a person needs. */
export async function checkSource(client: ApiClient, organization: string): Promise<Resource> {
  try {
    const doc = await client.request("GET", `/organizations/${encodeURIComponent(organization)}`);
    return doc?.data as Resource;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 0) throw new Error(`the source ${client.origin} is unreachable: ${e.message}`);
    if (e.status === 401) throw new Error(`the source ${client.origin} refused the token (401): check --from-token`);
    if (e.status === 404) throw new Error(`the source has no organisation "${organization}" that this token can read (404)`);
    throw new Error(`the source answered ${e.status} to GET /organizations/${organization}: ${e.message}`);
  }
}

export interface ReadOptions {
  workspaces?: string;
  progress: Progress;
  concurrency?: number;
}

export async function readSource(client: ApiClient, organization: string, o: ReadOptions): Promise<{ snapshot: Snapshot; reader: StateReader }> {
  const org = await checkSource(client, organization);
  const enc = encodeURIComponent(organization);
  const width = o.concurrency ?? 8;

  const [poolList, projectList, teamList, workspaceList, varsetList] = await Promise.all([
    client.list(`/organizations/${enc}/agent-pools`),
    client.list(`/organizations/${enc}/projects`),
    client.list(`/organizations/${enc}/teams`),
    client.list(`/organizations/${enc}/workspaces`),
    client.list(`/organizations/${enc}/varsets`),
  ]);
  const poolName = new Map(poolList.map((p) => [p.id, p.attributes?.name as string]));
  const projectName = new Map(projectList.map((p) => [p.id, p.attributes?.name as string]));
  const teamName = new Map(teamList.map((t) => [t.id, t.attributes?.name as string]));
  const workspaceName = new Map(workspaceList.map((w) => [w.id, w.attributes?.name as string]));
  const named = (map: Map<string, string>, ids: string[]) => ids.map((id) => map.get(id)).filter((n): n is string => !!n);
  const selected = globMatcher(o.workspaces);

  const accessOf = (list: Resource[], keys: readonly string[]): TeamAccess[] =>
    list.flatMap((a) => {
      const team = teamName.get(relId(a, "team") ?? "");
      return team ? [{ team, attributes: pick(a.attributes, keys) }] : [];
    });

  const projects: Project[] = [];
  o.progress.start("projects (read)", projectList.length);
  await pool(projectList, width, async (p) => {
    const a = p.attributes ?? {};
    const overwrites = a["setting-overwrites"] as Record<string, boolean> | undefined;
    const ownMode = overwrites ? overwrites["default-execution-mode"] === true : a["default-execution-mode"] != null;
    const settings = pick(a, ["description", "auto-destroy-activity-duration"]);
    if (ownMode) settings["default-execution-mode"] = a["default-execution-mode"];
    const [bindings, access] = await Promise.all([
      client.list(`/projects/${p.id}/tag-bindings`).catch(() => [] as Resource[]),
      client.list("/team-projects", { "filter[project][id]": p.id }),
    ]);
    projects.push({
      name: a.name,
      settings,
      defaultAgentPool: ownMode ? (poolName.get(relId(p, "default-agent-pool") ?? "") ?? null) : null,
      tagBindings: bindingsOf(bindings),
      teamAccess: accessOf(access, PROJECT_ACCESS),
    });
    o.progress.tick("projects (read)");
  });
  projects.sort((x, y) => x.name.localeCompare(y.name));

  const teams: Team[] = teamList.map((t) => ({ name: t.attributes?.name, settings: pick(t.attributes, TEAM_SETTINGS) }));

  const chosen = workspaceList.filter((w) => selected(w.attributes?.name));
  const workspaces: Workspace[] = [];
  o.progress.start("workspaces (read)", chosen.length);
  await pool(chosen, width, async (w) => {
    workspaces.push(await readWorkspace(client, organization, w, { projectName, poolName, workspaceName, accessOf }));
    o.progress.tick("workspaces (read)");
  });
  workspaces.sort((x, y) => x.name.localeCompare(y.name));

  const agentPools: AgentPool[] = poolList.map((p) => ({
    name: p.attributes?.name,
    organizationScoped: p.attributes?.["organization-scoped"] !== false,
    allowedWorkspaces: named(workspaceName, relIds(p, "allowed-workspaces")),
    allowedProjects: named(projectName, relIds(p, "allowed-projects")),
  }));

  const variableSets: VariableSet[] = [];
  await pool(varsetList, width, async (v) => {
    const a = v.attributes ?? {};
    const vars = await client.list(`/varsets/${v.id}/relationships/vars`);
    const parent = v.relationships?.parent?.data;
    variableSets.push({
      name: a.name,
      description: a.description ?? null,
      global: a.global === true,
      priority: a.priority === true,
      parentProject: parent?.type === "projects" ? (projectName.get(parent.id) ?? null) : null,
      workspaces: named(workspaceName, relIds(v, "workspaces")),
      projects: named(projectName, relIds(v, "projects")),
      variables: vars.map(variableOf),
    });
  });
  variableSets.sort((x, y) => x.name.localeCompare(y.name));

  const snapshot: Snapshot = {
    organization: {
      name: organization,
      settings: pick(org.attributes, ORGANIZATION_SETTINGS),
      defaultAgentPool: poolName.get(relId(org, "default-agent-pool") ?? "") ?? null,
    },
    projects,
    teams,
    agentPools,
    workspaces,
    variableSets,
  };
  return { snapshot, reader: apiStateReader(client) };
}

interface Names {
  projectName: Map<string, string>;
  poolName: Map<string, string>;
  workspaceName: Map<string, string>;
  accessOf: (list: Resource[], keys: readonly string[]) => TeamAccess[];
}

async function readWorkspace(client: ApiClient, organization: string, w: Resource, n: Names): Promise<Workspace> {
  const a = w.attributes ?? {};
  const overwrites = a["setting-overwrites"] as Record<string, boolean> | undefined;
  // Without `setting-overwrites` (an older Terraform Enterprise) the mode shown is the workspace's own.
  const ownMode = overwrites ? overwrites["execution-mode"] === true : true;
  const [vars, bindings, consumers, access, versions] = await Promise.all([
    client.list(`/workspaces/${w.id}/vars`),
    client.list(`/workspaces/${w.id}/tag-bindings`).catch(() => [] as Resource[]),
    // Global remote state makes the consumer list moot (and the API refuses to list it on some versions).
    a["global-remote-state"] ? Promise.resolve([] as Resource[]) : client.list(`/workspaces/${w.id}/relationships/remote-state-consumers`),
    client.list("/team-workspaces", { "filter[workspace][id]": w.id }),
    client.list("/state-versions", { "filter[organization][name]": organization, "filter[workspace][name]": a.name }),
  ]);
  const current = w.relationships?.["current-state-version"]?.data?.id ?? null;
  // Newest first in the API; the importer writes oldest first, the current one last.
  const finalized = versions.filter((v) => (v.attributes?.status ?? "finalized") === "finalized").reverse();
  const at = finalized.findIndex((v) => v.id === current);
  if (at >= 0 && at !== finalized.length - 1) finalized.push(...finalized.splice(at, 1));
  const stateVersions: StateVersionMeta[] = finalized.map((v) => ({
    sourceId: v.id,
    serial: v.attributes?.serial,
    lineage: v.attributes?.lineage ?? null,
    md5: null,
    size: typeof v.attributes?.size === "number" ? v.attributes.size : null,
    downloadUrl: v.attributes?.["hosted-state-download-url"] ?? null,
    jsonDownloadUrl: v.attributes?.["hosted-json-state-download-url"] ?? null,
  }));
  const holder = w.relationships?.["locked-by"]?.data;
  return {
    name: a.name,
    project: n.projectName.get(relId(w, "project") ?? "") ?? "Default Project",
    settings: pick(a, WORKSPACE_SETTINGS),
    executionMode: ownMode ? (a["execution-mode"] ?? null) : null,
    agentPool: ownMode ? (n.poolName.get(relId(w, "agent-pool") ?? "") ?? null) : null,
    vcsRepo: a["vcs-repo"]?.identifier ?? a["vcs-repo-identifier"] ?? null,
    tags: Array.isArray(a["tag-names"]) ? a["tag-names"] : [],
    tagBindings: bindingsOf(bindings),
    variables: vars.map(variableOf),
    remoteStateConsumers: consumers.map((c) => n.workspaceName.get(c.id) ?? c.attributes?.name).filter((x): x is string => !!x),
    teamAccess: n.accessOf(access, WORKSPACE_ACCESS),
    lock: { locked: a.locked === true, reason: a.locked ? (a["locked-reason"] ?? "") : null, holder: holder ? `${holder.type}/${holder.id}` : null },
    stateVersions,
  };
}

/** Reads a state version's bytes from the API source: its download URLs, or the version read again if they expired. */
export function apiStateReader(client: ApiClient): StateReader {
  return {
    async read(_workspace: string, sv: StateVersionMeta): Promise<StateBytes> {
      let url = sv.downloadUrl;
      let jsonUrl = sv.jsonDownloadUrl;
      const fetchBoth = async () => Promise.all([client.download(url!), jsonUrl ? client.download(jsonUrl).catch(() => null) : Promise.resolve(null)]);
      let state: Buffer;
      let json: Buffer | null;
      try {
        if (!url) throw new ApiError(0, "", "no download URL");
        [state, json] = await fetchBoth();
      } catch {
        // Signed URLs expire: read the version again for fresh ones.
        const doc = await client.request("GET", `/state-versions/${sv.sourceId}`);
        url = doc?.data?.attributes?.["hosted-state-download-url"] ?? null;
        jsonUrl = doc?.data?.attributes?.["hosted-json-state-download-url"] ?? null;
        if (!url) throw new Error(`state version ${sv.sourceId} has no download URL`);
        [state, json] = await fetchBoth();
      }
      const id = stateIdentity(state);
      sv.md5 = id.md5;
      sv.lineage ??= id.lineage;
      sv.size ??= state.byteLength;
      return { state, json };
    },
  };
}
