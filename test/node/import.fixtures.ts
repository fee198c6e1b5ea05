/**
 * The importer's tests' fixtures: an API helper, an organisation seeded through the API with every kind the importer
 * copies, and an independent view of an organisation read through the API (names, never ids) that two servers'
 * copies are compared by.
 */
import { createHash, randomUUID } from "node:crypto";

export type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export function apiOf(base: string, token: string): Api {
  return async (method, path, body) => {
    const res = await fetch(/^https?:/.test(path) ? path : `${base}/api/v2${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

async function must(api: Api, method: string, path: string, body?: unknown): Promise<any> {
  const r = await api(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A Terraform state with outputs (one sensitive), as Terraform writes it. */
export function stateOf(serial: number, lineage: string, outputs: Record<string, unknown>): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: "1.11.4",
      serial,
      lineage,
      outputs: Object.fromEntries(
        Object.entries(outputs).map(([k, v]) => [
          k,
          { value: v, type: typeof v === "number" ? "number" : "string", ...(k.startsWith("secret") ? { sensitive: true } : {}) },
        ]),
      ),
      resources: [],
      check_results: null,
    },
    null,
    2,
  )}\n`;
}

/** Creates a state version (lock, write, unlock unless it was locked already). */
export async function pushState(api: Api, workspaceId: string, state: string): Promise<void> {
  const parsed = JSON.parse(state);
  const ws = await must(api, "GET", `/workspaces/${workspaceId}`);
  const wasLocked = ws.data.attributes.locked;
  if (!wasLocked) await must(api, "POST", `/workspaces/${workspaceId}/actions/lock`, { reason: "seeding" });
  await must(api, "POST", `/workspaces/${workspaceId}/state-versions`, {
    data: {
      type: "state-versions",
      attributes: {
        serial: parsed.serial,
        lineage: parsed.lineage,
        md5: createHash("md5").update(state).digest("hex"),
        state: Buffer.from(state).toString("base64"),
      },
    },
  });
  if (!wasLocked) await must(api, "POST", `/workspaces/${workspaceId}/actions/unlock`, {});
}

const ws = (api: Api, org: string, name: string, attributes: Record<string, unknown>, project?: string) =>
  must(api, "POST", `/organizations/${org}/workspaces`, {
    data: {
      type: "workspaces",
      attributes: { name, ...attributes },
      ...(project ? { relationships: { project: { data: { type: "projects", id: project } } } } : {}),
    },
  }).then((d) => d.data.id as string);

const variable = (api: Api, path: string, key: string, value: string, extra: Record<string, unknown> = {}) =>
  must(api, "POST", path, {
    data: { type: "vars", attributes: { key, value, category: "terraform", hcl: false, sensitive: false, description: `about ${key}`, ...extra } },
  });

/** Seeds `org` with every kind the importer copies; answers the ids the tests use. */
export async function seed(api: Api, org: string, opts: { terraformState?: string } = {}): Promise<Record<string, string>> {
  await must(api, "POST", "/organizations", { data: { type: "organizations", attributes: { name: org, email: "ops@example.com" } } });
  await must(api, "PATCH", `/organizations/${org}`, {
    data: { type: "organizations", attributes: { "session-timeout": 120, "cost-estimation-enabled": true, "allow-force-delete-workspaces": true } },
  });
  const pool = (
    await must(api, "POST", `/organizations/${org}/agent-pools`, {
      data: { type: "agent-pools", attributes: { name: "builders", "organization-scoped": false } },
    })
  ).data.id;
  const infra = (
    await must(api, "POST", `/organizations/${org}/projects`, {
      data: {
        type: "projects",
        attributes: { name: "infra", description: "shared infrastructure", "auto-destroy-activity-duration": "14d" },
        relationships: { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "cost-center", value: "42" } }] } },
      },
    })
  ).data.id;
  const devs = (
    await must(api, "POST", `/organizations/${org}/teams`, {
      data: {
        type: "teams",
        attributes: { name: "devs", visibility: "organization", "organization-access": { "read-workspaces": true, "read-projects": true } },
      },
    })
  ).data.id;
  const ops = (
    await must(api, "POST", `/organizations/${org}/teams`, {
      data: { type: "teams", attributes: { name: "ops", visibility: "secret", "organization-access": { "manage-workspaces": true } } },
    })
  ).data.id;

  const prod = await ws(
    api,
    org,
    "app-prod",
    { "auto-apply": true, description: "production", "terraform-version": "1.11.4", "working-directory": "envs/prod" },
    infra,
  );
  const dev = await ws(api, org, "app-dev", { "execution-mode": "agent", "agent-pool-id": pool, "trigger-prefixes": ["modules/"] });
  const net = await ws(api, org, "network", { "global-remote-state": false, "queue-all-runs": true });
  const held = await ws(api, org, "held", { "execution-mode": "local" });
  const tf = await ws(api, org, "tf-plan", { "execution-mode": "local" });
  await must(api, "PATCH", `/agent-pools/${pool}`, {
    data: { type: "agent-pools", relationships: { "allowed-workspaces": { data: [{ type: "workspaces", id: dev }] } } },
  });

  await must(api, "POST", `/workspaces/${prod}/relationships/tags`, {
    data: [
      { type: "tags", attributes: { name: "web" } },
      { type: "tags", attributes: { name: "prod" } },
    ],
  });
  await must(api, "PATCH", `/workspaces/${prod}/tag-bindings`, { data: [{ type: "tag-bindings", attributes: { key: "owner", value: "payments" } }] });
  await must(api, "POST", `/workspaces/${net}/relationships/remote-state-consumers`, { data: [{ type: "workspaces", id: prod }] });

  for (const [id, name] of [
    [prod, "app-prod"],
    [dev, "app-dev"],
  ]) {
    await variable(api, `/workspaces/${id}/vars`, "region", "eu-west-1");
    await variable(api, `/workspaces/${id}/vars`, "tags", '{ team = "x" }', { hcl: true });
    await variable(api, `/workspaces/${id}/vars`, "TF_LOG", "info", { category: "env" });
    await variable(api, `/workspaces/${id}/vars`, "db_password", `secret-${name}`, { sensitive: true });
  }

  const shared = (
    await must(api, "POST", `/organizations/${org}/varsets`, {
      data: { type: "varsets", attributes: { name: "shared", description: "for apps", global: false, priority: true } },
    })
  ).data.id;
  await variable(api, `/varsets/${shared}/relationships/vars`, "api_url", "https://api.example.com");
  await variable(api, `/varsets/${shared}/relationships/vars`, "API_TOKEN", "hidden", { category: "env", sensitive: true });
  await must(api, "POST", `/varsets/${shared}/relationships/workspaces`, { data: [{ type: "workspaces", id: dev }] });
  await must(api, "POST", `/varsets/${shared}/relationships/projects`, { data: [{ type: "projects", id: infra }] });
  const global = (await must(api, "POST", `/organizations/${org}/varsets`, { data: { type: "varsets", attributes: { name: "everywhere", global: true } } }))
    .data.id;
  await variable(api, `/varsets/${global}/relationships/vars`, "company", "acme");

  await must(api, "POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: { access: "read" },
      relationships: { team: { data: { type: "teams", id: devs } }, workspace: { data: { type: "workspaces", id: prod } } },
    },
  });
  await must(api, "POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: {
        access: "custom",
        runs: "plan",
        variables: "read",
        "state-versions": "read-outputs",
        "sentinel-mocks": "none",
        "workspace-locking": true,
        "run-tasks": false,
      },
      relationships: { team: { data: { type: "teams", id: ops } }, workspace: { data: { type: "workspaces", id: net } } },
    },
  });
  await must(api, "POST", "/team-projects", {
    data: {
      type: "team-projects",
      attributes: { access: "maintain" },
      relationships: { team: { data: { type: "teams", id: ops } }, project: { data: { type: "projects", id: infra } } },
    },
  });

  // State history: several versions on several workspaces; the held workspace is left locked with a reason.
  const lineage = randomUUID();
  for (let s = 1; s <= 3; s++) await pushState(api, prod, stateOf(s, lineage, { url: `https://v${s}.example.com`, replicas: s, secret_key: `k${s}` }));
  const netLineage = randomUUID();
  for (let s = 5; s <= 6; s++) await pushState(api, net, stateOf(s, netLineage, { cidr: `10.${s}.0.0/16` }));
  await pushState(api, held, stateOf(1, randomUUID(), { name: "held" }));
  await must(api, "POST", `/workspaces/${held}/actions/lock`, { reason: "maintenance window" });
  if (opts.terraformState) await pushState(api, tf, opts.terraformState);
  return { prod, dev, net, held, tf, pool, infra, devs, ops, shared };
}

async function all(api: Api, path: string): Promise<any[]> {
  const out: any[] = [];
  let next: string | null = `${path}${path.includes("?") ? "&" : "?"}page[size]=100`;
  while (next) {
    const doc = await must(api, "GET", next);
    out.push(...doc.data);
    next = doc.links?.next ?? null;
  }
  return out;
}

const byName = <T extends { name: string }>(xs: T[]) => [...xs].sort((a, b) => a.name.localeCompare(b.name));
const WS_FIELDS = [
  "auto-apply",
  "description",
  "terraform-version",
  "working-directory",
  "execution-mode",
  "trigger-prefixes",
  "global-remote-state",
  "queue-all-runs",
  "allow-destroy-plan",
  "speculative-enabled",
  "file-triggers-enabled",
  "tag-names",
  "locked",
  "locked-reason",
  "source-name",
  "auto-destroy-activity-duration",
];

/** An organisation as a client reads it, by names: what the importer must reproduce. */
export async function orgView(base: string, token: string, org: string): Promise<any> {
  const api = apiOf(base, token);
  const o = (await must(api, "GET", `/organizations/${org}`)).data.attributes;
  const projects = await all(api, `/organizations/${org}/projects`);
  const teams = await all(api, `/organizations/${org}/teams`);
  const pools = await all(api, `/organizations/${org}/agent-pools`);
  const workspaces = await all(api, `/organizations/${org}/workspaces`);
  const varsets = await all(api, `/organizations/${org}/varsets`);
  const name = new Map<string, string>([...projects, ...teams, ...pools, ...workspaces].map((r) => [r.id, r.attributes.name]));
  const ids = (rel: any) => ((rel?.data ?? []) as any[]).map((d) => name.get(d.id) ?? d.id).sort();
  const vars = (list: any[]) =>
    list
      .map((v) => ({
        key: v.attributes.key,
        value: v.attributes.sensitive ? null : v.attributes.value,
        ...pickOf(v.attributes, ["category", "hcl", "sensitive", "description"]),
      }))
      .sort((a: any, b: any) => `${a.category}${a.key}`.localeCompare(`${b.category}${b.key}`));
  const access = (list: any[], keys: string[]) =>
    list
      .map((a) => ({ team: name.get(a.relationships.team.data.id), ...pickOf(a.attributes, keys) }))
      .sort((a, b) => String(a.team).localeCompare(String(b.team)));

  const wsViews = [];
  for (const w of workspaces) {
    const versions = (await all(api, `/state-versions?filter[organization][name]=${org}&filter[workspace][name]=${w.attributes.name}`)).reverse();
    const history = [];
    for (const v of versions) {
      const bytes = Buffer.from(await (await fetch(new URL(v.attributes["hosted-state-download-url"], base))).arrayBuffer());
      const outputs = (await must(api, "GET", `/state-versions/${v.id}/outputs`)).data.map((x: any) =>
        pickOf(x.attributes, ["name", "sensitive", "value", "output-type"]),
      );
      history.push({ ...pickOf(v.attributes, ["serial", "lineage", "size", "status"]), md5: createHash("md5").update(bytes).digest("hex"), outputs });
    }
    const current = (await api("GET", `/workspaces/${w.id}/current-state-version`)).body?.data?.attributes?.serial ?? null;
    wsViews.push({
      name: w.attributes.name,
      ...pickOf(w.attributes, WS_FIELDS),
      project: name.get(w.relationships.project.data.id),
      agentPool: name.get(w.relationships["agent-pool"]?.data?.id) ?? null,
      tagBindings: (await all(api, `/workspaces/${w.id}/tag-bindings`)).map((b) => pickOf(b.attributes, ["key", "value"])),
      vars: vars(await all(api, `/workspaces/${w.id}/vars`)),
      consumers: w.attributes["global-remote-state"] ? [] : ids({ data: await all(api, `/workspaces/${w.id}/relationships/remote-state-consumers`) }),
      teamAccess: access(await all(api, `/team-workspaces?filter[workspace][id]=${w.id}`), [
        "access",
        "runs",
        "variables",
        "state-versions",
        "workspace-locking",
      ]),
      history,
      current,
    });
  }
  return {
    organization: pickOf(o, ["name", "email", "session-timeout", "cost-estimation-enabled", "allow-force-delete-workspaces", "default-execution-mode"]),
    projects: byName(
      await Promise.all(
        projects.map(async (p) => ({
          name: p.attributes.name,
          ...pickOf(p.attributes, ["description", "auto-destroy-activity-duration", "default-execution-mode"]),
          tagBindings: (await all(api, `/projects/${p.id}/tag-bindings`)).map((b) => pickOf(b.attributes, ["key", "value"])),
          teamAccess: access(await all(api, `/team-projects?filter[project][id]=${p.id}`), ["access"]),
        })),
      ),
    ),
    teams: byName(teams.map((t) => ({ name: t.attributes.name, ...pickOf(t.attributes, ["visibility", "organization-access"]) }))),
    pools: byName(
      pools.map((p) => ({ name: p.attributes.name, scoped: p.attributes["organization-scoped"], allowed: ids(p.relationships["allowed-workspaces"]) })),
    ),
    workspaces: byName(wsViews),
    varsets: byName(
      await Promise.all(
        varsets.map(async (v) => ({
          name: v.attributes.name,
          ...pickOf(v.attributes, ["description", "global", "priority"]),
          workspaces: ids(v.relationships.workspaces),
          projects: ids(v.relationships.projects),
          vars: vars(await all(api, `/varsets/${v.id}/relationships/vars`)),
        })),
      ),
    ),
  };
}

function pickOf(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k] ?? null]));
}
