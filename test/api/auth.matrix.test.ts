// The authorisation matrix: every API route × every kind of caller. Each route's action
// comes from the requirement table the router enforces (src/auth/requirements.ts); which callers
// pass each action is this test's own oracle. A route without a row fails the completeness test.
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { beforeAll, describe, expect, it } from "vitest";
import type { Action } from "../../src/auth/requirements";
import { app } from "../../src/index";
import { ROUTE_ACTIONS } from "../../src/jsonapi/define-route";
import { insertAgent } from "../../src/agents/agents.d1";
import { newId, nowIso } from "../../src/ids";
import { createOrg, createWorkspace, grantProject, grantWorkspace, makeOrgToken, makeOwner, makeTeam, makeUser, organizationId } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { claim, plan, seedCv } from "../do/runs.helpers";
import { createMessage, generateKey, readPrivateKey, sign } from "openpgp";
import { MODULE_FILES, tarGz } from "../registry/archives";
import { installFakeFetch } from "../vcs/outbound";

const PRINCIPALS = [
  "none",
  "invalid",
  "expired",
  "read",
  "plan",
  "write",
  "admin",
  "customLock",
  "projectMaintain",
  "owners",
  "orgToken",
  "siteAdmin",
  "otherOrg",
] as const;
/**
 * More callers for the flag checks only (not matrix columns): an organisation-wide workspace manager,
 * a custom grant that reads state outputs only, and a custom project grant that may delete but not administer.
 */
const FLAG_EXTRAS = ["manageWorkspaces", "readOutputs", "projectDelete"] as const;
type P = (typeof PRINCIPALS)[number] | (typeof FLAG_EXTRAS)[number];

const WS_TEAMS: P[] = ["read", "plan", "write", "admin", "customLock"];
const ORG_WIDE: P[] = ["owners", "orgToken", "siteAdmin"];
/**
 * The test's own oracle: which fixture callers satisfy each action of the requirement table
 * (everyone else authenticated gets the action's refusal, default 404). Which action each route is
 * declared against comes from the routes' own declarations, which the router enforces (ROUTE_ACTIONS).
 */
const WS_READ: P[] = [...WS_TEAMS, "projectMaintain", ...ORG_WIDE, ...FLAG_EXTRAS];
const WS_ADMIN: P[] = ["admin", "projectMaintain", ...ORG_WIDE];
const STATE_READ: P[] = ["read", "plan", "write", "admin", "projectMaintain", ...ORG_WIDE];
const ORG_MEMBER: P[] = [...WS_TEAMS, "projectMaintain", ...ORG_WIDE];
const WHO = {
  authenticated: ["read", "plan", "write", "admin", "customLock", "projectMaintain", "owners", "orgToken", "siteAdmin", "otherOrg"],
  user: ["owners", "siteAdmin", "otherOrg"],
  "site-admin": ["siteAdmin"],
  "user.self": ["owners"],
  "user.self-or-site-admin": ["owners", "siteAdmin"],
  "token.manage": ["owners"],
  "organization.read": ORG_MEMBER,
  "organization.manage": ORG_WIDE,
  "organization.audit-trail": ["orgToken"],
  "organization.owner": ["owners", "siteAdmin"],
  "organization.rename": ["owners", "siteAdmin"],
  "organization.token-policy": ["owners", "siteAdmin"],
  "teams.manage": ORG_WIDE,
  "teams.manage-organization-access": ORG_WIDE,
  "teams.change-members": ORG_WIDE,
  "teams.manage-tokens": ORG_WIDE,
  "membership.read": ORG_MEMBER,
  "membership.manage": ORG_WIDE,
  "projects.manage": ORG_WIDE,
  "workspaces.manage": ORG_WIDE,
  "vcs.manage": ORG_WIDE,
  "ssh-keys.create": ["owners", "siteAdmin"],
  "agent-pools.manage": ORG_WIDE,
  "run-tasks.manage": ORG_WIDE,
  "run-tasks.read": [...ORG_WIDE, "manageWorkspaces"],
  "registry-modules.manage": ORG_WIDE,
  "registry-providers.manage": ORG_WIDE,
  "project.read": ORG_MEMBER,
  "project.admin": ORG_WIDE,
  "project.read-teams": ["projectMaintain", ...ORG_WIDE],
  "project.manage-teams": ORG_WIDE,
  "workspace.create": ["projectMaintain", ...ORG_WIDE],
  "workspace.read": WS_READ,
  "workspace.update": WS_ADMIN,
  "workspace.manage-tags": WS_ADMIN,
  "workspace.lock": ["write", "admin", "customLock", "projectMaintain", ...ORG_WIDE, "manageWorkspaces"],
  "workspace.force-unlock": WS_ADMIN,
  "workspace.delete": [...WS_ADMIN, "projectDelete"],
  "workspace.move": ORG_WIDE,
  "workspace.force-delete": ORG_WIDE,
  "variables.read": ["read", "plan", "write", "admin", "projectMaintain", ...ORG_WIDE, "manageWorkspaces"],
  "variables.write": ["write", "admin", "projectMaintain", ...ORG_WIDE, "manageWorkspaces"],
  "varsets.read": [...ORG_WIDE, "manageWorkspaces"],
  "varsets.manage": [...ORG_WIDE, "manageWorkspaces"],
  "project.read-variables": ["projectMaintain", ...ORG_WIDE],
  "state.read-outputs": [...STATE_READ, "readOutputs"],
  "state.read": STATE_READ,
  "state.create": ["write", "admin", "projectMaintain", "owners", "siteAdmin"],
  "runs.read": WS_READ,
  "runs.queue": ["plan", "write", "admin", "projectMaintain", "owners", "siteAdmin", "manageWorkspaces"],
  "runs.apply": ["write", "admin", "projectMaintain", "owners", "siteAdmin", "manageWorkspaces"],
  "runs.destroy": ["admin", "projectMaintain", "owners", "siteAdmin", "manageWorkspaces"],
  "runs.force-cancel": ["admin", "projectMaintain", "owners", "siteAdmin", "manageWorkspaces"],
  "runs.read-json-plan": WS_ADMIN,
  "runs.read-errored-state": WS_ADMIN,
} satisfies Record<Action, P[]>;

const needsOf = (row: { method: string; route: string; needs?: Action }): Action => {
  const action = row.needs ?? ROUTE_ACTIONS[`${row.method} ${row.route}`];
  if (!action) throw new Error(`${row.method} ${row.route} is declared against no requirement`);
  return action;
};

interface Fixture {
  org: string;
  tokens: Record<P, string | null>;
  ids: { ownerUser: string; teams: Record<string, string>; defaultProject: string };
}

interface Target {
  path: string;
  body?: unknown;
}

interface Row {
  method: string;
  route: string;
  ok: number;
  /** Status for authenticated callers who are refused (404 unless the real API documents 403). */
  denied?: number;
  /** Per refused caller, where it differs from `denied` (a caller who sees the resource is told it is forbidden). */
  deniedFor?: Partial<Record<P, number>>;
  /** What this row's request needs beyond the route's declared action (a body that asks for more, such as a rename). */
  needs?: Action;
  /** Builds a fresh target for one call (so destructive calls never interfere). */
  make: (fx: Fixture, who: P) => Promise<Target>;
  /** The edition the route exists in, when only one (the tests' Worker runs the self-hosted edition). */
  edition?: "hosted";
}

let fx: Fixture;

/** Rows of one route whose methods act on the same kind of target; `ok` gives each method's success status. */
const sameTarget = (route: string, ok: Record<string, number>, make: Row["make"]): Row[] =>
  Object.entries(ok).map(([method, status]) => ({ method, route, ok: status, make }));

/** A fresh workspace every team principal has its workspace-level grant on. */
async function workspace(attrs: Record<string, unknown> = {}): Promise<{ id: string; name: string }> {
  const ws = await createWorkspace(fx.org, attrs);
  await grantWorkspace(fx.ids.teams.read, ws.id, "read");
  await grantWorkspace(fx.ids.teams.plan, ws.id, "plan");
  await grantWorkspace(fx.ids.teams.write, ws.id, "write");
  await grantWorkspace(fx.ids.teams.admin, ws.id, "admin");
  await grantWorkspace(fx.ids.teams.customLock, ws.id, "custom", { runs: "read", "workspace-locking": true });
  await grantWorkspace(fx.ids.teams.readOutputs, ws.id, "custom", { runs: "read", "state-versions": "read-outputs" });
  return { id: ws.id, name: ws.attributes.name };
}

const STATE = JSON.stringify({ version: 4, serial: 1, lineage: "l", resources: [], outputs: { o: { value: "v", type: "string" } } });
/** A workspace with two state versions: the first is no longer current (its backing data may be managed). */
async function olderStateVersion(soft = false): Promise<string> {
  const ws = await workspace();
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  const body = (serial: number) => ({ data: { type: "state-versions", attributes: { serial, md5: SparkMD5.hash(STATE), state: btoa(STATE) } } });
  const first = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: body(1) })).body.data.id as string;
  await api("POST", `/workspaces/${ws.id}/state-versions`, { body: body(2) });
  await api("POST", `/workspaces/${ws.id}/actions/unlock`);
  if (soft) await api("POST", `/state-versions/${first}/actions/soft_delete_backing_data`);
  return first;
}

async function stateVersion(): Promise<{ ws: string; sv: string; name: string }> {
  const ws = await workspace();
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
    body: { data: { type: "state-versions", attributes: { serial: 1, md5: SparkMD5.hash(STATE), state: btoa(STATE) } } },
  });
  await api("POST", `/workspaces/${ws.id}/actions/unlock`);
  return { ws: ws.id, sv: sv.body.data.id, name: ws.name };
}
const adminPost = async (path: string, body: unknown) => (await api("POST", path, { body })).body.data;
const cvBody = { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } };
/** A configuration version of a fresh workspace, its archive uploaded through the signed URL; a newer one is current. */
async function uploadedCv(): Promise<{ ws: string; cv: string }> {
  const ws = await workspace();
  const cv = await adminPost(`/workspaces/${ws.id}/configuration-versions`, cvBody);
  const put = await exports.default.fetch(new Request(cv.attributes["upload-url"], { method: "PUT", body: new Uint8Array([31, 139, 8, 0]) }));
  if (put.status !== 200) throw new Error(`upload: ${put.status}`);
  await adminPost(`/workspaces/${ws.id}/configuration-versions`, cvBody);
  return { ws: ws.id, cv: cv.id };
}
const wsBody = (attributes: Record<string, unknown> = {}) => ({ data: { type: "workspaces", attributes } });
const team = async (attrs: Record<string, unknown> = {}) =>
  adminPost(`/organizations/${fx.org}/teams`, { data: { type: "teams", attributes: { name: uniqueName("t"), visibility: "organization", ...attrs } } });
const project = async () => adminPost(`/organizations/${fx.org}/projects`, { data: { type: "projects", attributes: { name: uniqueName("p") } } });
const sshKey = async () => adminPost(`/organizations/${fx.org}/ssh-keys`, { data: { type: "ssh-keys", attributes: { name: "k", value: "v" } } });
const pool = async () => adminPost(`/organizations/${fx.org}/agent-pools`, { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } });
/** An agent token of a fresh pool (minted by the site admin). */
const agentToken = async () =>
  adminPost(`/agent-pools/${(await pool()).id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "agent" } } });
/** An agent registered in a fresh pool (written through the repository, as the agent protocol's register does). */
const poolAgent = async () => {
  const p = await pool();
  const agent = newId("agent");
  const at = nowIso();
  const row = { id: agent, agentPoolId: p.id, organizationId: await organizationId(fx.org), name: "a", version: null, ipAddress: null };
  await insertAgent(env.DB, { ...row, status: "idle", lastPingAt: at, createdAt: at });
  return { pool: p.id as string, agent };
};
const reservedKey = async () =>
  adminPost(`/organizations/${fx.org}/reserved-tag-keys`, { data: { type: "reserved-tag-keys", attributes: { key: uniqueName("rtk") } } });
const oauthClient = async () =>
  adminPost(`/organizations/${fx.org}/oauth-clients`, { data: { type: "oauth-clients", attributes: { "service-provider": "github" } } });
const tb = { data: [{ type: "tag-bindings", attributes: { key: "k", value: "v" } }] };
const flat = { data: [{ type: "tags", attributes: { name: "flat" } }] };
const drp = { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 3 } } };
const org = () => fx.org;
const varBody = () => ({ data: { type: "vars", attributes: { key: uniqueName("k").replace(/-/g, "_"), value: "v", category: "terraform" } } });
const wsVar = async () => {
  const ws = await workspace();
  return { ws: ws.id, v: (await adminPost(`/workspaces/${ws.id}/vars`, varBody())).id as string };
};
const varset = async () => adminPost(`/organizations/${fx.org}/varsets`, { data: { type: "varsets", attributes: { name: uniqueName("vs"), global: false } } });
const varsetVar = async () => {
  const set = await varset();
  return { set: set.id as string, v: (await adminPost(`/varsets/${set.id}/relationships/vars`, varBody())).id as string };
};

/** A run in a fresh workspace with an uploaded configuration version, brought to `state` by playing its agent. */
async function matrixRun(state: "queued" | "planned" | "pending" | "cancelling" = "queued"): Promise<{ ws: string; run: string }> {
  const ws = await workspace();
  const stub = env.WORKSPACES.getByName(ws.id);
  await seedCv(stub);
  const post = async () =>
    (await adminPost("/runs", { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: ws.id } } } } })).id as string;
  const first = await post();
  if (state === "planned" || state === "pending") await plan(stub, first);
  if (state === "pending") return { ws: ws.id, run: await post() };
  if (state === "cancelling") {
    // Canceled long enough ago that the cool-off has passed: force-cancel is available.
    const past = new Date(Date.now() - 20_000).toISOString();
    await claim(stub, first, "plan", past);
    await stub.runAction({ runId: first, action: "cancel", now: past, by: { actor: null, canApply: true }, comment: null });
  }
  return { ws: ws.id, run: first };
}
const runComment = async () => {
  const { run } = await matrixRun();
  const comment = await adminPost(`/runs/${run}/comments`, { data: { type: "comments", attributes: { body: "c" } } });
  return { run, comment: comment.id as string, event: comment.relationships["run-event"].data.id as string };
};
const suffix = (runId: string) => runId.slice("run-".length);
/** A Terraform version no other test lists (1.0.<random>, as go-tfe's tests make them). */
const tfVersionBody = () => ({
  data: {
    type: "terraform-versions",
    attributes: { version: `1.0.${100000 + Math.floor(Math.random() * 1e9)}`, url: "https://releases.example.test/tf.zip", sha: "ab".repeat(32) },
  },
});

// ---- the private registry (src/registry/) ----
const REGISTRY = "http://localhost/api/registry";
const regName = () => uniqueName("m").replace(/-/g, "_");
const regModule = async () => {
  const name = regName();
  await adminPost(`/organizations/${fx.org}/registry-modules`, { data: { type: "registry-modules", attributes: { name, provider: "aws" } } });
  return { name, path: `/organizations/${fx.org}/registry-modules/private/${fx.org}/${name}/aws` };
};
const regVersionBody = (version = "1.0.0") => ({ data: { type: "registry-module-versions", attributes: { version } } });
const regModuleVersion = async () => {
  const m = await regModule();
  await adminPost(`${m.path}/versions`, regVersionBody("1.0.0"));
  await adminPost(`${m.path}/versions`, regVersionBody("1.1.0"));
  return m;
};
/** One module with an uploaded version, shared by the read-only protocol rows. */
let publishedModule: Promise<string> | undefined;
const regPublished = () => {
  publishedModule ??= (async () => {
    const m = await regModule();
    const v = await adminPost(`${m.path}/versions`, regVersionBody("1.0.0"));
    const archive = await tarGz(MODULE_FILES);
    const put = await exports.default.fetch(
      new Request(v.links.upload, { method: "PUT", body: archive, headers: { "Content-Length": String(archive.length) } }),
    );
    if (put.status !== 200) throw new Error(`module upload: ${put.status}`);
    return m.name;
  })();
  return publishedModule;
};
const regProvider = async () => {
  const name = regName().replace(/_/g, "");
  await adminPost(`/organizations/${fx.org}/registry-providers`, {
    data: { type: "registry-providers", attributes: { name, namespace: fx.org, "registry-name": "private" } },
  });
  return { name, path: `/organizations/${fx.org}/registry-providers/private/${fx.org}/${name}` };
};
const regProviderVersionBody = (keyId = "ABCDEF0123456789") => ({
  data: { type: "registry-provider-versions", attributes: { version: "1.0.0", "key-id": keyId, protocols: ["5.0"] } },
});
const regPlatformBody = (shasum = "0".repeat(64)) => ({
  data: { type: "registry-provider-platforms", attributes: { os: "linux", arch: "amd64", shasum, filename: "terraform-provider-x_1.0.0_linux_amd64.zip" } },
});
const regProviderVersion = async () => {
  const p = await regProvider();
  await adminPost(`${p.path}/versions`, regProviderVersionBody());
  return { ...p, version: `${p.path}/versions/1.0.0` };
};
const regPlatform = async () => {
  const v = await regProviderVersion();
  await adminPost(`${v.version}/platforms`, regPlatformBody());
  return { ...v, platform: `${v.version}/platforms/linux/amd64` };
};
/** A fresh key in the fixture's namespace (a key may be added to a namespace once). */
const regGpgKey = async () => {
  const k = await generateKey({ type: "ecc", curve: "curve25519Legacy", userIDs: [{ name: "matrix" }], format: "armored" });
  const key = await adminPost(`${REGISTRY}/private/v2/gpg-keys`, { data: { type: "gpg-keys", attributes: { namespace: fx.org, "ascii-armor": k.publicKey } } });
  return { armor: k.publicKey, privateKey: k.privateKey, keyId: key.attributes["key-id"] as string };
};
/** One provider with a signed, uploaded linux/amd64 package, shared by the read-only protocol rows. */
let publishedProvider: Promise<string> | undefined;
const regPublishedProvider = () => {
  publishedProvider ??= (async () => {
    const key = await regGpgKey();
    const p = await regProvider();
    const zip = new TextEncoder().encode("zip");
    const sum = [...new Uint8Array(await crypto.subtle.digest("SHA-256", zip))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const v = await adminPost(`${p.path}/versions`, regProviderVersionBody(key.keyId));
    const sums = new TextEncoder().encode(`${sum}  terraform-provider-x_1.0.0_linux_amd64.zip\n`);
    const sig = (await sign({
      message: await createMessage({ binary: sums }),
      signingKeys: await readPrivateKey({ armoredKey: key.privateKey }),
      detached: true,
      format: "binary",
    })) as Uint8Array;
    const pl = await adminPost(`${p.path}/versions/1.0.0/platforms`, regPlatformBody(sum));
    for (const [url, body] of [
      [v.links["shasums-upload"], sums],
      [v.links["shasums-sig-upload"], sig],
      [pl.links["provider-binary-upload"], zip],
    ] as const) {
      const put = await exports.default.fetch(new Request(url, { method: "PUT", body, headers: { "Content-Length": String(body.length) } }));
      if (put.status !== 200) throw new Error(`provider upload: ${put.status}`);
    }
    return p.name;
  })();
  return publishedProvider;
};
const regBindings = {
  data: { type: "registry-modules", relationships: { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] } } },
};
/** A run trigger between two fresh workspaces every team principal has its grants on. */
const runTrigger = async () => {
  const [target, source] = [await workspace(), await workspace()];
  const body = { data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: source.id } } } } };
  return { target: target.id, source: source.id, id: (await adminPost(`/workspaces/${target.id}/run-triggers`, body)).id as string };
};

/** A disabled generic configuration: nothing is sent on create (verify sends one, which the test network refuses). */
const ncBody = {
  data: {
    type: "notification-configurations",
    attributes: { name: "n", "destination-type": "generic", enabled: false, url: "https://hooks.example.com/in", triggers: ["run:created"] },
  },
};
const notification = async () => (await adminPost(`/workspaces/${(await workspace()).id}/notification-configurations`, ncBody)).id as string;

/** Run triggers and notification configurations. */
const NOTIFY_ROWS: Row[] = [
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/run-triggers",
    ok: 201,
    make: async () => {
      const [target, source] = [await workspace(), await workspace()];
      return {
        path: `/workspaces/${target.id}/run-triggers`,
        body: { data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: source.id } } } } },
      };
    },
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/run-triggers",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await runTrigger()).target}/run-triggers?filter%5Brun-trigger%5D%5Btype%5D=inbound` }),
  },
  ...sameTarget("/api/v2/run-triggers/:run_trigger_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/run-triggers/${(await runTrigger()).id}` })),
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/notification-configurations",
    ok: 201,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/notification-configurations`, body: ncBody }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/notification-configurations",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/notification-configurations` }),
  },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/notification-configurations/:notification_configuration_id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => ({
        path: `/notification-configurations/${await notification()}`,
        body: method === "PATCH" ? { data: { type: "notification-configurations", attributes: { name: "renamed" } } } : undefined,
      }),
    }),
  ),
  {
    method: "POST",
    route: "/api/v2/notification-configurations/:notification_configuration_id/actions/verify",
    ok: 200,
    make: async () => ({ path: `/notification-configurations/${await notification()}/actions/verify` }),
  },
];

/** A run task of the fixture's organisation (its verification answered by the fake receiver installed below). */
const taskBody = () => ({ data: { type: "tasks", attributes: { name: uniqueName("task"), url: "https://tasks.example.com/hook", category: "task" } } });
const runTask = async () => (await adminPost(`/organizations/${fx.org}/tasks`, taskBody())).id as string;
const wsTaskBody = (task: string) => ({
  data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" }, relationships: { task: { data: { type: "tasks", id: task } } } },
});
const workspaceTask = async () => {
  const ws = await workspace();
  return { ws: ws.id as string, id: (await adminPost(`/workspaces/${ws.id}/tasks`, wsTaskBody(await runTask()))).id as string };
};
/** A run of a workspace with a run task attached: it has a task stage and a task result. */
const taskRun = async () => {
  const { ws } = await workspaceTask();
  await seedCv(env.WORKSPACES.getByName(ws));
  const run = (await adminPost("/runs", { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: ws } } } } })).id as string;
  const stage = (await api("GET", `/runs/${run}/task-stages`)).body.data[0];
  return { run, stage: stage.id as string, result: stage.relationships["task-results"].data[0].id as string };
};

/** Organisation run tasks, workspace run tasks, task stages and results. */
const RUN_TASK_ROWS: Row[] = [
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/tasks",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/tasks`, body: taskBody() }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/tasks", ok: 200, make: async () => ({ path: `/organizations/${org()}/tasks` }) },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/tasks/:task_id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => ({
        path: `/tasks/${await runTask()}`,
        body: method === "PATCH" ? { data: { type: "tasks", attributes: { description: "changed" } } } : undefined,
      }),
    }),
  ),
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/tasks",
    ok: 201,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/tasks`, body: wsTaskBody(await runTask()) }),
  },
  { method: "GET", route: "/api/v2/workspaces/:workspace_id/tasks", ok: 200, make: async () => ({ path: `/workspaces/${(await workspaceTask()).ws}/tasks` }) },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/workspaces/:workspace_id/tasks/:workspace_task_id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => {
        const t = await workspaceTask();
        return {
          path: `/workspaces/${t.ws}/tasks/${t.id}`,
          body: method === "PATCH" ? { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } } : undefined,
        };
      },
    }),
  ),
  { method: "GET", route: "/api/v2/runs/:run_id/task-stages", ok: 200, make: async () => ({ path: `/runs/${(await taskRun()).run}/task-stages` }) },
  { method: "GET", route: "/api/v2/task-stages/:task_stage_id", ok: 200, make: async () => ({ path: `/task-stages/${(await taskRun()).stage}` }) },
  { method: "GET", route: "/api/v2/task-results/:task_result_id", ok: 200, make: async () => ({ path: `/task-results/${(await taskRun()).result}` }) },
];

const REGISTRY_ROWS: Row[] = [
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/registry-modules",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/registry-modules` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/registry-modules",
    ok: 201,
    make: async () => ({
      path: `/organizations/${org()}/registry-modules`,
      body: { data: { type: "registry-modules", attributes: { name: regName(), provider: "aws" } } },
    }),
  },
  ...sameTarget("/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider", { GET: 200, DELETE: 204 }, async () => ({
    path: (await regModule()).path,
  })),
  {
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider",
    ok: 200,
    make: async () => ({ path: (await regModule()).path, body: regBindings }),
  },
  {
    method: "DELETE",
    route: "/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name",
    ok: 204,
    make: async () => ({ path: `/organizations/${org()}/registry-modules/private/${org()}/${(await regModule()).name}` }),
  },
  {
    method: "DELETE",
    route: "/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider/:version",
    ok: 204,
    make: async () => ({ path: `${(await regModuleVersion()).path}/1.0.0` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider/versions",
    ok: 201,
    make: async () => ({ path: `${(await regModule()).path}/versions`, body: regVersionBody() }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/registry-modules/:registry_name/:namespace/:name/:provider/version",
    ok: 200,
    make: async () => ({ path: `${(await regModuleVersion()).path}/version?module_version=1.0.0` }),
  },
  {
    method: "POST",
    route: "/api/v2/registry-modules/:organization_name/:name/:provider/versions",
    ok: 201,
    make: async () => ({ path: `/registry-modules/${org()}/${(await regModule()).name}/aws/versions`, body: regVersionBody() }),
  },
  {
    method: "POST",
    route: "/api/v2/registry-modules/actions/delete/:organization_name/:name",
    ok: 204,
    make: async () => ({ path: `/registry-modules/actions/delete/${org()}/${(await regModule()).name}` }),
  },
  {
    method: "POST",
    route: "/api/v2/registry-modules/actions/delete/:organization_name/:name/:provider",
    ok: 204,
    make: async () => ({ path: `/registry-modules/actions/delete/${org()}/${(await regModule()).name}/aws` }),
  },
  {
    method: "POST",
    route: "/api/v2/registry-modules/actions/delete/:organization_name/:name/:provider/:version",
    ok: 204,
    make: async () => ({ path: `/registry-modules/actions/delete/${org()}/${(await regModuleVersion()).name}/aws/1.0.0` }),
  },
  {
    method: "GET",
    route: "/api/v2/registry-modules/:module_id",
    ok: 200,
    make: async () => ({ path: `/registry-modules/${(await api("GET", (await regModule()).path)).body.data.id}` }),
  },
  {
    method: "GET",
    route: "/api/v2/registry-modules/:module_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/registry-modules/${(await api("GET", (await regModule()).path)).body.data.id}/tag-bindings` }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/registry-providers",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/registry-providers` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/registry-providers",
    ok: 201,
    make: async () => ({
      path: `/organizations/${org()}/registry-providers`,
      body: { data: { type: "registry-providers", attributes: { name: regName(), namespace: org(), "registry-name": "private" } } },
    }),
  },
  ...sameTarget("/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name", { GET: 200, DELETE: 204 }, async () => ({
    path: (await regProvider()).path,
  })),
  {
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name",
    ok: 200,
    make: async () => ({ path: (await regProvider()).path, body: { data: { ...regBindings.data, type: "registry-providers" } } }),
  },
  {
    method: "GET",
    route: "/api/v2/registry-providers/:provider_id",
    ok: 200,
    make: async () => ({ path: `/registry-providers/${(await api("GET", (await regProvider()).path)).body.data.id}` }),
  },
  {
    method: "GET",
    route: "/api/v2/registry-providers/:provider_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/registry-providers/${(await api("GET", (await regProvider()).path)).body.data.id}/tag-bindings` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions",
    ok: 201,
    make: async () => ({ path: `${(await regProvider()).path}/versions`, body: regProviderVersionBody() }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions",
    ok: 200,
    make: async () => ({ path: `${(await regProviderVersion()).path}/versions` }),
  },
  ...sameTarget(
    "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions/:version",
    { GET: 200, DELETE: 204 },
    async () => ({ path: (await regProviderVersion()).version }),
  ),
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions/:version/platforms",
    ok: 201,
    make: async () => ({ path: `${(await regProviderVersion()).version}/platforms`, body: regPlatformBody() }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions/:version/platforms",
    ok: 200,
    make: async () => ({ path: `${(await regPlatform()).version}/platforms` }),
  },
  ...sameTarget(
    "/api/v2/organizations/:organization_name/registry-providers/:registry_name/:namespace/:name/versions/:version/platforms/:os/:arch",
    { GET: 200, DELETE: 204 },
    async () => ({ path: (await regPlatform()).platform }),
  ),
  {
    method: "GET",
    route: "/api/registry/v1/modules/:namespace/:name/:provider/versions",
    ok: 200,
    make: async () => ({ path: `${REGISTRY}/v1/modules/${org()}/${await regPublished()}/aws/versions` }),
  },
  {
    method: "GET",
    route: "/api/registry/v1/modules/:namespace/:name/:provider/:version/download",
    ok: 204,
    make: async () => ({ path: `${REGISTRY}/v1/modules/${org()}/${await regPublished()}/aws/1.0.0/download` }),
  },
  {
    method: "GET",
    route: "/api/registry/v1/modules/:namespace/:name/:provider/:version",
    ok: 200,
    make: async () => ({ path: `${REGISTRY}/v1/modules/${org()}/${await regPublished()}/aws/1.0.0` }),
  },
  {
    method: "GET",
    route: "/api/registry/v1/providers/:namespace/:type/versions",
    ok: 200,
    make: async () => ({ path: `${REGISTRY}/v1/providers/${org()}/${await regPublishedProvider()}/versions` }),
  },
  {
    method: "GET",
    route: "/api/registry/v1/providers/:namespace/:type/:version/download/:os/:arch",
    ok: 200,
    make: async () => ({ path: `${REGISTRY}/v1/providers/${org()}/${await regPublishedProvider()}/1.0.0/download/linux/amd64` }),
  },
  {
    method: "GET",
    route: "/api/registry/:registry_name/v2/gpg-keys",
    ok: 200,
    make: async () => ({ path: `${REGISTRY}/private/v2/gpg-keys?filter%5Bnamespace%5D=${org()}` }),
  },
  {
    method: "POST",
    route: "/api/registry/:registry_name/v2/gpg-keys",
    ok: 201,
    make: async () => {
      const k = await generateKey({ type: "ecc", curve: "curve25519Legacy", userIDs: [{ name: "matrix" }], format: "armored" });
      return { path: `${REGISTRY}/private/v2/gpg-keys`, body: { data: { type: "gpg-keys", attributes: { namespace: org(), "ascii-armor": k.publicKey } } } };
    },
  },
  ...sameTarget("/api/registry/:registry_name/v2/gpg-keys/:namespace/:key_id", { GET: 200, DELETE: 204 }, async () => ({
    path: `${REGISTRY}/private/v2/gpg-keys/${org()}/${(await regGpgKey()).keyId}`,
  })),
  {
    method: "PATCH",
    route: "/api/registry/:registry_name/v2/gpg-keys/:namespace/:key_id",
    ok: 200,
    make: async () => ({
      path: `${REGISTRY}/private/v2/gpg-keys/${org()}/${(await regGpgKey()).keyId}`,
      body: { data: { type: "gpg-keys", attributes: { namespace: org() } } },
    }),
  },
];

const ROWS: Row[] = [
  { method: "GET", route: "/api/v2/ping", ok: 204, make: async () => ({ path: "/ping" }) },
  { method: "GET", route: "/api/v2/account/details", ok: 200, make: async () => ({ path: "/account/details" }) },
  {
    method: "POST",
    route: "/api/v2/organizations",
    ok: 201,
    make: async () => ({ path: "/organizations", body: { data: { type: "organizations", attributes: { name: uniqueName("o"), email: "a@b.c" } } } }),
  },
  { method: "GET", route: "/api/v2/organizations", ok: 200, make: async () => ({ path: "/organizations" }) },
  { method: "GET", route: "/api/v2/organizations/:organization_name", ok: 200, make: async () => ({ path: `/organizations/${org()}` }) },
  {
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}`, body: { data: { type: "organizations", attributes: { email: "x@y.z" } } } }),
  },
  {
    // A rename is for owners only (checked on top of the route's organization.manage). A throwaway
    // organisation per call: its organisation token is tested in test/api/organizations.rename.test.ts.
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name",
    needs: "organization.rename",
    ok: 200,
    make: async () => ({
      path: `/organizations/${await createOrgFor("owners")}`,
      body: { data: { type: "organizations", attributes: { name: uniqueName("renamed") } } },
    }),
  },
  {
    // Turning the token TTL policies' enforcement on is for owners only, as the policies are: the organisation token
    // may not change what bounds its own lifetime (checked on top of the route's organization.manage).
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name",
    needs: "organization.token-policy",
    ok: 200,
    make: async () => ({
      path: `/organizations/${await createOrgFor("owners")}`,
      body: { data: { type: "organizations", attributes: { "max-ttl-enabled": true } } },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/vars",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/vars` }),
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/vars",
    ok: 201,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/vars`, body: varBody() }),
  },
  ...sameTarget("/api/v2/workspaces/:workspace_id/vars/:var_id", { GET: 200, DELETE: 204 }, async () => {
    const x = await wsVar();
    return { path: `/workspaces/${x.ws}/vars/${x.v}` };
  }),
  {
    method: "PATCH",
    route: "/api/v2/workspaces/:workspace_id/vars/:var_id",
    ok: 200,
    make: async () => {
      const x = await wsVar();
      return { path: `/workspaces/${x.ws}/vars/${x.v}`, body: { data: { type: "vars", attributes: { value: "w" } } } };
    },
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/all-vars",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await wsVar()).ws}/all-vars` }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/varsets",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/varsets` }),
  },
  {
    method: "GET",
    route: "/api/v2/projects/:project_id/varsets",
    ok: 200,
    make: async () => ({ path: `/projects/${fx.ids.defaultProject}/varsets` }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/varsets",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/varsets` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/varsets",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/varsets`, body: { data: { type: "varsets", attributes: { name: uniqueName("vs"), global: false } } } }),
  },
  ...sameTarget("/api/v2/varsets/:varset_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/varsets/${(await varset()).id}` })),
  {
    method: "PATCH",
    route: "/api/v2/varsets/:varset_id",
    ok: 200,
    make: async () => ({ path: `/varsets/${(await varset()).id}`, body: { data: { type: "varsets", attributes: { description: "d" } } } }),
  },
  ...(["POST", "DELETE"] as const).flatMap((method): Row[] => [
    {
      method,
      route: "/api/v2/varsets/:varset_id/relationships/workspaces",
      ok: 204,
      make: async () => ({
        path: `/varsets/${(await varset()).id}/relationships/workspaces`,
        body: { data: [{ type: "workspaces", id: (await workspace()).id }] },
      }),
    },
    {
      method,
      route: "/api/v2/varsets/:varset_id/relationships/projects",
      ok: 204,
      make: async () => ({ path: `/varsets/${(await varset()).id}/relationships/projects`, body: { data: [{ type: "projects", id: (await project()).id }] } }),
    },
  ]),
  {
    method: "GET",
    route: "/api/v2/varsets/:varset_id/relationships/vars",
    ok: 200,
    make: async () => ({ path: `/varsets/${(await varsetVar()).set}/relationships/vars` }),
  },
  {
    method: "POST",
    route: "/api/v2/varsets/:varset_id/relationships/vars",
    ok: 201,
    make: async () => ({ path: `/varsets/${(await varset()).id}/relationships/vars`, body: varBody() }),
  },
  ...sameTarget("/api/v2/varsets/:varset_id/relationships/vars/:var_id", { GET: 200, DELETE: 204 }, async () => {
    const x = await varsetVar();
    return { path: `/varsets/${x.set}/relationships/vars/${x.v}` };
  }),
  {
    method: "PATCH",
    route: "/api/v2/varsets/:varset_id/relationships/vars/:var_id",
    ok: 200,
    make: async () => {
      const x = await varsetVar();
      return { path: `/varsets/${x.set}/relationships/vars/${x.v}`, body: { data: { type: "vars", attributes: { value: "w" } } } };
    },
  },
  {
    method: "DELETE",
    route: "/api/v2/organizations/:organization_name",
    ok: 204,
    make: async (_fx, who) => {
      // A throwaway organisation the caller is owner of only when the row says so.
      const name = await createOrg();
      if (who === "owners") await makeOwner(fx.ids.ownerUser, name);
      return { path: `/organizations/${name}` };
    },
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/entitlement-set",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/entitlement-set` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/workspaces",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/workspaces`, body: wsBody({ name: uniqueName("w") }) }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/workspaces", ok: 200, make: async () => ({ path: `/organizations/${org()}/workspaces` }) },
  { method: "GET", route: "/api/v2/workspaces/:workspace_id", ok: 200, make: async () => ({ path: `/workspaces/${(await workspace()).id}` }) },
  {
    method: "PATCH",
    route: "/api/v2/workspaces/:workspace_id",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}`, body: wsBody({ description: "d" }) }),
  },
  { method: "DELETE", route: "/api/v2/workspaces/:workspace_id", ok: 204, denied: 403, make: async () => ({ path: `/workspaces/${(await workspace()).id}` }) },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/workspaces/:name",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/workspaces/${(await workspace()).name}` }),
  },
  {
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name/workspaces/:name",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/workspaces/${(await workspace()).name}`, body: wsBody({ description: "d" }) }),
  },
  {
    method: "DELETE",
    route: "/api/v2/organizations/:organization_name/workspaces/:name",
    ok: 204,
    denied: 403,
    make: async () => ({ path: `/organizations/${org()}/workspaces/${(await workspace()).name}` }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/relationships/tags",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/relationships/tags` }),
  },
  ...sameTarget("/api/v2/workspaces/:workspace_id/relationships/tags", { POST: 204, DELETE: 204 }, async () => ({
    path: `/workspaces/${(await workspace()).id}/relationships/tags`,
    body: flat,
  })),
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/tag-bindings` }),
  },
  {
    method: "PATCH",
    route: "/api/v2/workspaces/:workspace_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/tag-bindings`, body: tb }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/effective-tag-bindings",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/effective-tag-bindings` }),
  },
  {
    method: "GET",
    route: "/api/v2/projects/:project_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/projects/${fx.ids.defaultProject}/tag-bindings` }),
  },
  {
    method: "PATCH",
    route: "/api/v2/projects/:project_id/tag-bindings",
    ok: 200,
    make: async () => ({ path: `/projects/${(await project()).id}/tag-bindings`, body: tb }),
  },
  {
    method: "GET",
    route: "/api/v2/projects/:project_id/effective-tag-bindings",
    ok: 200,
    make: async () => ({ path: `/projects/${fx.ids.defaultProject}/effective-tag-bindings` }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/tags", ok: 200, make: async () => ({ path: `/organizations/${org()}/tags` }) },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/reserved-tag-keys",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/reserved-tag-keys` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/reserved-tag-keys",
    ok: 201,
    make: async () => ({
      path: `/organizations/${org()}/reserved-tag-keys`,
      body: { data: { type: "reserved-tag-keys", attributes: { key: uniqueName("rtk"), "disable-overrides": true } } },
    }),
  },
  {
    method: "PATCH",
    route: "/api/v2/reserved-tag-keys/:id",
    ok: 200,
    make: async () => ({
      path: `/reserved-tag-keys/${(await reservedKey()).id}`,
      body: { data: { type: "reserved-tag-keys", attributes: { "disable-overrides": true } } },
    }),
  },
  { method: "DELETE", route: "/api/v2/reserved-tag-keys/:id", ok: 204, make: async () => ({ path: `/reserved-tag-keys/${(await reservedKey()).id}` }) },
  {
    method: "DELETE",
    route: "/api/v2/organizations/:organization_name/tags",
    ok: 204,
    make: async () => {
      const ws = await workspace();
      await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: uniqueName("tag") } }] } });
      const tags = await api("GET", `/workspaces/${ws.id}/relationships/tags`);
      return { path: `/organizations/${org()}/tags`, body: { data: [{ type: "tags", id: tags.body.data[0].id }] } };
    },
  },
  {
    method: "POST",
    route: "/api/v2/tags/:tag_id/relationships/workspaces",
    ok: 204,
    make: async () => {
      const ws = await workspace();
      await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: uniqueName("tag") } }] } });
      const tags = await api("GET", `/workspaces/${ws.id}/relationships/tags`);
      return { path: `/tags/${tags.body.data[0].id}/relationships/workspaces`, body: { data: [{ type: "workspaces", id: (await workspace()).id }] } };
    },
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/actions/lock",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/actions/lock` }),
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/actions/unlock",
    ok: 200,
    make: async (_fx, who) => {
      const ws = await workspace();
      const token = fx.tokens[who];
      // Locked by the caller itself where it may lock, so that a successful unlock is possible.
      await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: token && (WHO["workspace.lock"] as readonly P[]).includes(who) ? token : undefined });
      return { path: `/workspaces/${ws.id}/actions/unlock` };
    },
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/actions/force-unlock",
    ok: 200,
    make: async () => {
      const ws = await workspace();
      await api("POST", `/workspaces/${ws.id}/actions/lock`);
      return { path: `/workspaces/${ws.id}/actions/force-unlock` };
    },
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/actions/safe-delete",
    ok: 204,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/actions/safe-delete` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/workspaces/:name/actions/safe-delete",
    ok: 204,
    make: async () => ({ path: `/organizations/${org()}/workspaces/${(await workspace()).name}/actions/safe-delete` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/teams",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/teams`, body: { data: { type: "teams", attributes: { name: uniqueName("t") } } } }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/teams", ok: 200, make: async () => ({ path: `/organizations/${org()}/teams` }) },
  ...sameTarget("/api/v2/teams/:team_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/teams/${(await team()).id}` })),
  {
    method: "PATCH",
    route: "/api/v2/teams/:team_id",
    ok: 200,
    make: async () => ({ path: `/teams/${(await team()).id}`, body: { data: { type: "teams", attributes: { visibility: "organization" } } } }),
  },
  ...sameTarget("/api/v2/teams/:team_id/relationships/users", { POST: 204, DELETE: 204 }, async () => ({
    path: `/teams/${(await team()).id}/relationships/users`,
    body: { data: [{ type: "users", id: fx.ids.ownerUser }] },
  })),
  ...(["POST", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/teams/:team_id/relationships/organization-memberships",
      ok: 204,
      make: async () => {
        const m = await adminPost(`/organizations/${org()}/organization-memberships`, {
          data: { type: "organization-memberships", attributes: { email: `${uniqueName("m")}@x.test` } },
        });
        return { path: `/teams/${(await team()).id}/relationships/organization-memberships`, body: { data: [{ type: "organization-memberships", id: m.id }] } };
      },
    }),
  ),
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/team-tokens",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/team-tokens` }),
  },
  {
    method: "PATCH",
    route: "/api/v2/account/update",
    ok: 200,
    make: async () => ({ path: "/account/update", body: { data: { type: "users", attributes: {} } } }),
  },
  {
    method: "POST",
    route: "/api/v2/teams/:team_id/authentication-token",
    ok: 201,
    make: async () => ({ path: `/teams/${(await team()).id}/authentication-token` }),
  },
  ...sameTarget("/api/v2/teams/:team_id/authentication-token", { GET: 200, DELETE: 204 }, async () => {
    const t = await team();
    await api("POST", `/teams/${t.id}/authentication-token`);
    return { path: `/teams/${t.id}/authentication-token` };
  }),
  ...sameTarget("/api/v2/teams/:team_id/authentication-tokens", { POST: 201, GET: 200 }, async () => ({
    path: `/teams/${(await team()).id}/authentication-tokens`,
  })),
  {
    method: "DELETE",
    route: "/api/v2/teams/:team_id/authentication-tokens",
    ok: 204,
    make: async () => {
      const t = await team();
      await api("POST", `/teams/${t.id}/authentication-tokens`);
      return { path: `/teams/${t.id}/authentication-tokens` };
    },
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/authentication-token",
    ok: 201,
    make: async () => ({ path: `/organizations/${await createOrgFor("owners")}/authentication-token` }),
  },
  ...sameTarget("/api/v2/organizations/:organization_name/authentication-token", { GET: 200, DELETE: 204 }, async () => {
    const name = await createOrgFor("owners");
    await api("POST", `/organizations/${name}/authentication-token`);
    return { path: `/organizations/${name}/authentication-token` };
  }),
  // Token TTL policies, on the fixture's organisation (its organisation token is a caller there).
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/token-ttl-policies",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/token-ttl-policies` }),
  },
  {
    method: "PATCH",
    route: "/api/v2/organizations/:organization_name/token-ttl-policies",
    ok: 200,
    // The organisation token reads the policies (GET above), so it is told it may not change them.
    deniedFor: { orgToken: 403 },
    make: async () => ({
      path: `/organizations/${org()}/token-ttl-policies`,
      body: { data: { type: "organization-token-ttl-policies", attributes: { "token-ttl-policies": [{ "token-type": "team", "max-ttl-ms": 86_400_000 }] } } },
    }),
  },
  ...sameTarget("/api/v2/users/:user_id/authentication-tokens", { POST: 201, GET: 200 }, async () => ({
    path: `/users/${fx.ids.ownerUser}/authentication-tokens`,
  })),
  ...sameTarget("/api/v2/authentication-tokens/:token_id", { GET: 200, DELETE: 204 }, async () => ({
    path: `/authentication-tokens/${(await api("POST", `/users/${fx.ids.ownerUser}/authentication-tokens`, { token: fx.tokens.owners })).body.data.id}`,
  })),
  {
    method: "POST",
    route: "/api/v2/team-workspaces",
    ok: 201,
    make: async () => ({
      path: "/team-workspaces",
      body: {
        data: {
          type: "team-workspaces",
          attributes: { access: "read" },
          relationships: { team: { data: { type: "teams", id: (await team()).id } }, workspace: { data: { type: "workspaces", id: (await workspace()).id } } },
        },
      },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/team-workspaces",
    ok: 200,
    make: async () => ({ path: `/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${(await workspace()).id}` }),
  },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/team-workspaces/:id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => {
        const created = await adminPost("/team-workspaces", {
          data: {
            type: "team-workspaces",
            attributes: { access: "read" },
            relationships: {
              team: { data: { type: "teams", id: (await team()).id } },
              workspace: { data: { type: "workspaces", id: (await workspace()).id } },
            },
          },
        });
        return {
          path: `/team-workspaces/${created.id}`,
          body: method === "PATCH" ? { data: { type: "team-workspaces", attributes: { access: "write" } } } : undefined,
        };
      },
    }),
  ),
  {
    method: "POST",
    route: "/api/v2/team-projects",
    ok: 201,
    make: async () => ({
      path: "/team-projects",
      body: {
        data: {
          type: "team-projects",
          attributes: { access: "read" },
          relationships: { team: { data: { type: "teams", id: (await team()).id } }, project: { data: { type: "projects", id: (await project()).id } } },
        },
      },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/team-projects",
    ok: 200,
    make: async () => ({ path: `/team-projects?filter%5Bproject%5D%5Bid%5D=${fx.ids.defaultProject}` }),
  },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/team-projects/:id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => {
        const created = await adminPost("/team-projects", {
          data: {
            type: "team-projects",
            attributes: { access: "read" },
            relationships: { team: { data: { type: "teams", id: (await team()).id } }, project: { data: { type: "projects", id: fx.ids.defaultProject } } },
          },
        });
        return {
          path: `/team-projects/${created.id}`,
          body: method === "PATCH" ? { data: { type: "team-projects", attributes: { access: "write" } } } : undefined,
        };
      },
    }),
  ),
  { method: "GET", route: "/api/v2/admin/consistency", ok: 200, make: async () => ({ path: "/admin/consistency?page%5Bsize%5D=5" }) },
  { method: "GET", route: "/api/v2/admin/agents", ok: 200, make: async () => ({ path: "/admin/agents" }) },
  { method: "GET", route: "/api/v2/admin/terraform-versions", ok: 200, make: async () => ({ path: "/admin/terraform-versions" }) },
  { method: "POST", route: "/api/v2/admin/terraform-versions", ok: 201, make: async () => ({ path: "/admin/terraform-versions", body: tfVersionBody() }) },
  ...(["GET", "PATCH", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/admin/terraform-versions/:version_id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => ({
        path: `/admin/terraform-versions/${(await adminPost("/admin/terraform-versions", tfVersionBody())).id}`,
        body: method === "PATCH" ? { data: { type: "terraform-versions", attributes: { enabled: false } } } : undefined,
      }),
    }),
  ),
  // HCP Terraform's plans: the hosted edition's admin API (the self-hosted edition answers 404 to everyone).
  { method: "GET", route: "/api/v2/admin/feature-sets", ok: 200, edition: "hosted", make: async () => ({ path: "/admin/feature-sets?q=Business" }) },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/subscription",
    ok: 200,
    edition: "hosted",
    make: async () => ({ path: `/organizations/${org()}/subscription` }),
  },
  {
    method: "POST",
    route: "/api/v2/admin/organizations/:organization_name/subscription",
    ok: 201,
    edition: "hosted",
    make: async () => {
      const plan = (await api("GET", "/admin/feature-sets?q=Business", { edition: "hosted" })).body.data[0].id;
      return {
        path: `/admin/organizations/${await createOrg()}/subscription`,
        body: { data: { type: "subscription", relationships: { "feature-set": { data: { type: "feature-sets", id: plan } } } } },
      };
    },
  },
  {
    method: "POST",
    route: "/api/v2/admin/users/:user_id/actions/confirm-email",
    ok: 200,
    make: async () => {
      const u = await makeUser();
      await api("PATCH", "/account/update", { token: u.token, body: { data: { type: "users", attributes: { email: `${uniqueName("e")}@x.test` } } } });
      return { path: `/admin/users/${u.id}/actions/confirm-email` };
    },
  },
  {
    method: "POST",
    route: "/api/v2/admin/users/:user_id/actions/grant_admin",
    ok: 200,
    make: async () => ({ path: `/admin/users/${(await makeUser()).id}/actions/grant_admin` }),
  },
  {
    method: "POST",
    route: "/api/v2/admin/users/:user_id/actions/revoke_admin",
    ok: 200,
    make: async () => ({ path: `/admin/users/${(await makeUser()).id}/actions/revoke_admin` }),
  },
  {
    method: "POST",
    route: "/api/v2/admin/users/:user_id/actions/disable_two_factor",
    ok: 200,
    make: async () => ({ path: `/admin/users/${(await makeUser()).id}/actions/disable_two_factor` }),
  },
  {
    // Only the invited user (here the owners user, invited to a fresh organisation by its address) accepts.
    method: "POST",
    route: "/api/v2/organization-memberships/:id/actions/accept",
    ok: 200,
    make: async () => {
      const name = await createOrg();
      const inv = await adminPost(`/organizations/${name}/organization-memberships`, {
        data: { type: "organization-memberships", attributes: { email: `${fx.ids.ownerUser}@example.com` } },
      });
      return { path: `/organization-memberships/${inv.id}/actions/accept` };
    },
  },
  {
    method: "POST",
    route: "/api/v2/admin/users",
    ok: 201,
    make: async () => {
      const n = uniqueName("u");
      return { path: "/admin/users", body: { data: { type: "users", attributes: { username: n, email: `${n}@x.test` } } } };
    },
  },
  { method: "GET", route: "/api/v2/users/:user_id", ok: 200, make: async () => ({ path: `/users/${fx.ids.ownerUser}` }) },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/organization-memberships",
    ok: 201,
    make: async () => ({
      path: `/organizations/${org()}/organization-memberships`,
      body: { data: { type: "organization-memberships", attributes: { email: `${uniqueName("m")}@x.test` } } },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/organization-memberships",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/organization-memberships` }),
  },
  ...(["GET", "DELETE"] as const).map(
    (method): Row => ({
      method,
      route: "/api/v2/organization-memberships/:id",
      ok: method === "DELETE" ? 204 : 200,
      make: async () => ({
        path: `/organization-memberships/${(await adminPost(`/organizations/${org()}/organization-memberships`, { data: { type: "organization-memberships", attributes: { email: `${uniqueName("m")}@x.test` } } })).id}`,
      }),
    }),
  ),
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/projects",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/projects`, body: { data: { type: "projects", attributes: { name: uniqueName("p") } } } }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/projects", ok: 200, make: async () => ({ path: `/organizations/${org()}/projects` }) },
  { method: "GET", route: "/api/v2/projects/:project_id", ok: 200, make: async () => ({ path: `/projects/${fx.ids.defaultProject}` }) },
  {
    method: "PATCH",
    route: "/api/v2/projects/:project_id",
    ok: 200,
    make: async () => ({ path: `/projects/${(await project()).id}`, body: { data: { type: "projects", attributes: { description: "d" } } } }),
  },
  { method: "DELETE", route: "/api/v2/projects/:project_id", ok: 204, make: async () => ({ path: `/projects/${(await project()).id}` }) },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/ssh-keys",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/ssh-keys`, body: { data: { type: "ssh-keys", attributes: { name: "k", value: "v" } } } }),
  },
  { method: "GET", route: "/api/v2/organizations/:organization_name/ssh-keys", ok: 200, make: async () => ({ path: `/organizations/${org()}/ssh-keys` }) },
  ...sameTarget("/api/v2/ssh-keys/:ssh_key_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/ssh-keys/${(await sshKey()).id}` })),
  {
    method: "PATCH",
    route: "/api/v2/ssh-keys/:ssh_key_id",
    ok: 200,
    make: async () => ({ path: `/ssh-keys/${(await sshKey()).id}`, body: { data: { type: "ssh-keys", attributes: { name: "n" } } } }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/agent-pools",
    ok: 201,
    make: async () => ({ path: `/organizations/${org()}/agent-pools`, body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } } }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/agent-pools",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/agent-pools` }),
  },
  ...sameTarget("/api/v2/agent-pools/:pool_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/agent-pools/${(await pool()).id}` })),
  {
    method: "PATCH",
    route: "/api/v2/agent-pools/:pool_id",
    ok: 200,
    make: async () => ({ path: `/agent-pools/${(await pool()).id}`, body: { data: { type: "agent-pools", attributes: { "organization-scoped": false } } } }),
  },
  {
    method: "GET",
    route: "/api/v2/agent-pools/:pool_id/authentication-tokens",
    ok: 200,
    make: async () => ({ path: `/agent-pools/${(await pool()).id}/authentication-tokens` }),
  },
  {
    method: "POST",
    route: "/api/v2/agent-pools/:pool_id/authentication-tokens",
    ok: 201,
    make: async () => ({
      path: `/agent-pools/${(await pool()).id}/authentication-tokens`,
      body: { data: { type: "authentication-tokens", attributes: { description: "agent" } } },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/agent-pools/:pool_id/agents",
    ok: 200,
    make: async () => ({ path: `/agent-pools/${(await poolAgent()).pool}/agents` }),
  },
  { method: "GET", route: "/api/v2/agents/:agent_id", ok: 200, make: async () => ({ path: `/agents/${(await poolAgent()).agent}` }) },
  // Agent tokens by id: the route is declared `token.manage`, whose rule for an agent token is the pool's management.
  {
    method: "GET",
    route: "/api/v2/authentication-tokens/:token_id",
    needs: "agent-pools.manage",
    ok: 200,
    make: async () => ({ path: `/authentication-tokens/${(await agentToken()).id}` }),
  },
  {
    method: "DELETE",
    route: "/api/v2/authentication-tokens/:token_id",
    needs: "agent-pools.manage",
    ok: 204,
    make: async () => ({ path: `/authentication-tokens/${(await agentToken()).id}` }),
  },
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/oauth-clients",
    ok: 201,
    make: async () => ({
      path: `/organizations/${org()}/oauth-clients`,
      body: { data: { type: "oauth-clients", attributes: { "service-provider": "github" } } },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/oauth-clients",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/oauth-clients` }),
  },
  ...sameTarget("/api/v2/oauth-clients/:oauth_client_id", { GET: 200, DELETE: 204 }, async () => ({ path: `/oauth-clients/${(await oauthClient()).id}` })),
  {
    method: "PATCH",
    route: "/api/v2/oauth-clients/:oauth_client_id",
    ok: 200,
    make: async () => ({ path: `/oauth-clients/${(await oauthClient()).id}`, body: { data: { type: "oauth-clients", attributes: { name: "n" } } } }),
  },
  {
    method: "POST",
    route: "/api/v2/oauth-clients/:oauth_client_id/relationships/projects",
    ok: 204,
    make: async () => ({
      path: `/oauth-clients/${(await oauthClient()).id}/relationships/projects`,
      body: { data: [{ type: "projects", id: (await project()).id }] },
    }),
  },
  {
    method: "DELETE",
    route: "/api/v2/oauth-clients/:oauth_client_id/relationships/projects",
    ok: 204,
    make: async () => {
      const [client, p] = [await oauthClient(), await project()];
      const body = { data: [{ type: "projects", id: p.id }] };
      await api("POST", `/oauth-clients/${client.id}/relationships/projects`, { body });
      return { path: `/oauth-clients/${client.id}/relationships/projects`, body };
    },
  },
  {
    method: "GET",
    route: "/api/v2/oauth-clients/:oauth_client_id/oauth-tokens",
    ok: 200,
    make: async () => ({ path: `/oauth-clients/${(await oauthClient()).id}/oauth-tokens` }),
  },
  {
    method: "GET",
    route: "/api/v2/organizations/:organization_name/oauth-tokens",
    ok: 200,
    make: async () => ({ path: `/organizations/${org()}/oauth-tokens` }),
  },
  ...sameTarget("/api/v2/oauth-tokens/:oauth_token_id", { GET: 200, DELETE: 204 }, async () => ({
    path: `/oauth-tokens/${(await oauthClient()).relationships["oauth-tokens"].data[0].id}`,
  })),
  {
    method: "PATCH",
    route: "/api/v2/oauth-tokens/:oauth_token_id",
    ok: 200,
    make: async () => ({ path: `/oauth-tokens/${(await oauthClient()).relationships["oauth-tokens"].data[0].id}`, body: { data: { type: "oauth-tokens" } } }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/relationships/remote-state-consumers",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/relationships/remote-state-consumers` }),
  },
  ...sameTarget("/api/v2/workspaces/:workspace_id/relationships/remote-state-consumers", { POST: 204, DELETE: 204, PATCH: 204 }, async () => ({
    path: `/workspaces/${(await workspace()).id}/relationships/remote-state-consumers`,
    body: { data: [{ type: "workspaces", id: (await workspace()).id }] },
  })),
  {
    method: "PATCH",
    route: "/api/v2/workspaces/:workspace_id/relationships/ssh-key",
    ok: 200,
    make: async () => ({
      path: `/workspaces/${(await workspace()).id}/relationships/ssh-key`,
      body: { data: { type: "workspaces", attributes: { id: null } } },
    }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/relationships/data-retention-policy",
    ok: 200,
    make: async () => {
      const ws = await workspace();
      await api("POST", `/workspaces/${ws.id}/relationships/data-retention-policy`, { body: drp });
      return { path: `/workspaces/${ws.id}/relationships/data-retention-policy` };
    },
  },
  ...sameTarget("/api/v2/workspaces/:workspace_id/relationships/data-retention-policy", { POST: 201, PATCH: 201 }, async () => ({
    path: `/workspaces/${(await workspace()).id}/relationships/data-retention-policy`,
    body: drp,
  })),
  {
    method: "DELETE",
    route: "/api/v2/workspaces/:workspace_id/relationships/data-retention-policy",
    ok: 204,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/relationships/data-retention-policy` }),
  },
  ...sameTarget("/api/v2/organizations/:organization_name/relationships/data-retention-policy", { GET: 200, DELETE: 204 }, async () => {
    const name = await createOrgFor("all");
    await api("POST", `/organizations/${name}/relationships/data-retention-policy`, { body: drp });
    return { path: `/organizations/${name}/relationships/data-retention-policy` };
  }),
  {
    method: "POST",
    route: "/api/v2/organizations/:organization_name/relationships/data-retention-policy",
    ok: 201,
    make: async () => ({ path: `/organizations/${await createOrgFor("all")}/relationships/data-retention-policy`, body: drp }),
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/state-versions",
    ok: 201,
    make: async (_fx, who) => {
      const ws = await workspace();
      const token = fx.tokens[who];
      await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: token && (WHO["workspace.lock"] as readonly P[]).includes(who) ? token : undefined });
      return {
        path: `/workspaces/${ws.id}/state-versions`,
        body: { data: { type: "state-versions", attributes: { serial: 1, md5: SparkMD5.hash(STATE), state: btoa(STATE) } } },
      };
    },
  },
  {
    // Rollback: the power to create state versions, under the caller's own lock (held by it when it may lock).
    method: "PATCH",
    route: "/api/v2/workspaces/:workspace_id/state-versions",
    ok: 201,
    make: async (_fx, who) => {
      const { ws, sv } = await stateVersion();
      const token = fx.tokens[who];
      await api("POST", `/workspaces/${ws}/actions/lock`, { token: token && (WHO["workspace.lock"] as readonly P[]).includes(who) ? token : undefined });
      return {
        path: `/workspaces/${ws}/state-versions`,
        body: { data: { type: "state-versions", relationships: { "rollback-state-version": { data: { type: "state-versions", id: sv } } } } },
      };
    },
  },
  ...(["soft_delete_backing_data", "restore_backing_data", "permanently_delete_backing_data"] as const).map(
    (action): Row => ({
      method: "POST",
      route: `/api/v2/state-versions/:state_version_id/actions/${action}`,
      ok: 204,
      make: async () => ({ path: `/state-versions/${await olderStateVersion(action !== "soft_delete_backing_data")}/actions/${action}` }),
    }),
  ),
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/resources",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await stateVersion()).ws}/resources` }),
  },
  { method: "GET", route: "/api/v2/state-versions/:state_version_id", ok: 200, make: async () => ({ path: `/state-versions/${(await stateVersion()).sv}` }) },
  {
    method: "GET",
    route: "/api/v2/state-versions/:state_version_id/outputs",
    ok: 200,
    make: async () => ({ path: `/state-versions/${(await stateVersion()).sv}/outputs` }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/current-state-version",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await stateVersion()).ws}/current-state-version` }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/current-state-version-outputs",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await stateVersion()).ws}/current-state-version-outputs` }),
  },
  {
    method: "GET",
    route: "/api/v2/state-versions",
    ok: 200,
    make: async () => ({ path: `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${(await stateVersion()).name}&filter%5Borganization%5D%5Bname%5D=${org()}` }),
  },
  {
    method: "POST",
    route: "/api/v2/workspaces/:workspace_id/configuration-versions",
    ok: 201,
    make: async () => ({ path: `/workspaces/${(await workspace()).id}/configuration-versions`, body: cvBody }),
  },
  {
    method: "GET",
    route: "/api/v2/workspaces/:workspace_id/configuration-versions",
    ok: 200,
    make: async () => ({ path: `/workspaces/${(await uploadedCv()).ws}/configuration-versions` }),
  },
  {
    method: "GET",
    route: "/api/v2/configuration-versions/:configuration_version_id",
    ok: 200,
    make: async () => ({ path: `/configuration-versions/${(await uploadedCv()).cv}` }),
  },
  {
    method: "GET",
    route: "/api/v2/configuration-versions/:configuration_version_id/ingress-attributes",
    ok: 200,
    make: async () => ({ path: `/configuration-versions/${(await uploadedCv()).cv}/ingress-attributes` }),
  },
  {
    // Uploaded and no longer current: archivable.
    method: "POST",
    route: "/api/v2/configuration-versions/:configuration_version_id/actions/archive",
    ok: 202,
    make: async () => ({ path: `/configuration-versions/${(await uploadedCv()).cv}/actions/archive` }),
  },
  ...(["soft_delete_backing_data", "restore_backing_data", "permanently_delete_backing_data"] as const).map(
    (action): Row => ({
      // Uploaded and no longer current; restore and permanent delete act on a soft-deleted archive.
      method: "POST",
      route: `/api/v2/configuration-versions/:configuration_version_id/actions/${action}`,
      ok: 204,
      make: async () => {
        const { cv } = await uploadedCv();
        if (action !== "soft_delete_backing_data") await api("POST", `/configuration-versions/${cv}/actions/soft_delete_backing_data`);
        return { path: `/configuration-versions/${cv}/actions/${action}` };
      },
    }),
  ),
  {
    // 302 to the signed archive URL, which api() follows: a permitted caller receives the archive.
    method: "GET",
    route: "/api/v2/configuration-versions/:configuration_version_id/download",
    ok: 200,
    make: async () => ({ path: `/configuration-versions/${(await uploadedCv()).cv}/download` }),
  },
  {
    method: "GET",
    route: "/api/v2/state-version-outputs/:output_id",
    ok: 200,
    make: async () => ({
      path: `/state-version-outputs/${(await api("GET", `/state-versions/${(await stateVersion()).sv}`)).body.data.relationships.outputs.data[0].id}`,
    }),
  },

  // ---- runs (docs/runs.md) ----
  {
    method: "POST",
    route: "/api/v2/runs",
    ok: 201,
    make: async () => {
      const ws = await workspace();
      await seedCv(env.WORKSPACES.getByName(ws.id));
      return { path: "/runs", body: { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: ws.id } } } } } };
    },
  },
  {
    method: "POST",
    route: "/api/v2/runs",
    needs: "runs.destroy",
    ok: 201,
    make: async () => {
      const ws = await workspace();
      await seedCv(env.WORKSPACES.getByName(ws.id));
      return {
        path: "/runs",
        body: { data: { type: "runs", attributes: { "is-destroy": true }, relationships: { workspace: { data: { type: "workspaces", id: ws.id } } } } },
      };
    },
  },
  { method: "GET", route: "/api/v2/runs/:run_id", ok: 200, make: async () => ({ path: `/runs/${(await matrixRun()).run}` }) },
  { method: "GET", route: "/api/v2/workspaces/:workspace_id/runs", ok: 200, make: async () => ({ path: `/workspaces/${(await matrixRun()).ws}/runs` }) },
  {
    method: "GET",
    route: "/api/v2/runs/:run_id/configuration-version",
    ok: 200,
    make: async () => ({ path: `/runs/${(await matrixRun()).run}/configuration-version` }),
  },
  {
    method: "GET",
    route: "/api/v2/runs/:run_id/configuration-version/download",
    ok: 200,
    make: async () => ({ path: `/runs/${(await matrixRun()).run}/configuration-version/download` }),
  },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/actions/apply",
    ok: 202,
    make: async () => ({ path: `/runs/${(await matrixRun("planned")).run}/actions/apply`, body: {} }),
  },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/actions/discard",
    ok: 202,
    make: async () => ({ path: `/runs/${(await matrixRun("planned")).run}/actions/discard` }),
  },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/actions/cancel",
    ok: 202,
    make: async () => ({ path: `/runs/${(await matrixRun()).run}/actions/cancel`, body: {} }),
  },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/actions/force-cancel",
    ok: 202,
    make: async () => ({ path: `/runs/${(await matrixRun("cancelling")).run}/actions/force-cancel`, body: {} }),
  },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/actions/force-execute",
    ok: 202,
    make: async () => ({ path: `/runs/${(await matrixRun("pending")).run}/actions/force-execute` }),
  },
  { method: "GET", route: "/api/v2/plans/:plan_id", ok: 200, make: async () => ({ path: `/plans/plan-${suffix((await matrixRun()).run)}` }) },
  { method: "GET", route: "/api/v2/runs/:run_id/plan", ok: 200, make: async () => ({ path: `/runs/${(await matrixRun()).run}/plan` }) },
  { method: "GET", route: "/api/v2/applies/:apply_id", ok: 200, make: async () => ({ path: `/applies/apply-${suffix((await matrixRun()).run)}` }) },
  { method: "GET", route: "/api/v2/runs/:run_id/apply", ok: 200, make: async () => ({ path: `/runs/${(await matrixRun()).run}/apply` }) },
  // 204: the plan has not finished (plans-applies.test.ts follows the redirect once it has).
  {
    method: "GET",
    route: "/api/v2/plans/:plan_id/json-output",
    ok: 204,
    make: async () => ({ path: `/plans/plan-${suffix((await matrixRun()).run)}/json-output` }),
  },
  // 204: the run kept no errored state (runs.errored-state.test.ts follows the redirect when it has one).
  { method: "GET", route: "/api/v2/runs/:run_id/errored-state", ok: 204, make: async () => ({ path: `/runs/${(await matrixRun()).run}/errored-state` }) },
  { method: "GET", route: "/api/v2/runs/:run_id/plan/json-output", ok: 204, make: async () => ({ path: `/runs/${(await matrixRun()).run}/plan/json-output` }) },
  {
    method: "GET",
    route: "/api/v2/plans/:plan_id/json-output-redacted",
    ok: 204,
    make: async () => ({ path: `/plans/plan-${suffix((await matrixRun()).run)}/json-output-redacted` }),
  },
  // No apply leaves an errored state here: 404 for everyone, after the same check as the apply's.
  {
    method: "GET",
    route: "/api/v2/applies/:apply_id/errored-state",
    ok: 404,
    make: async () => ({ path: `/applies/apply-${suffix((await matrixRun()).run)}/errored-state` }),
  },
  { method: "GET", route: "/api/v2/runs/:run_id/run-events", ok: 200, make: async () => ({ path: `/runs/${(await matrixRun()).run}/run-events` }) },
  { method: "GET", route: "/api/v2/run-events/:run_event_id", ok: 200, make: async () => ({ path: `/run-events/${(await runComment()).event}` }) },
  { method: "GET", route: "/api/v2/runs/:run_id/comments", ok: 200, make: async () => ({ path: `/runs/${(await runComment()).run}/comments` }) },
  {
    method: "POST",
    route: "/api/v2/runs/:run_id/comments",
    ok: 201,
    make: async () => ({ path: `/runs/${(await matrixRun()).run}/comments`, body: { data: { type: "comments", attributes: { body: "hi" } } } }),
  },
  { method: "GET", route: "/api/v2/comments/:comment_id", ok: 200, make: async () => ({ path: `/comments/${(await runComment()).comment}` }) },
  { method: "GET", route: "/api/v2/organizations/:organization_name/runs", ok: 200, make: async () => ({ path: `/organizations/${org()}/runs` }) },
  { method: "GET", route: "/api/v2/organizations/:organization_name/runs/queue", ok: 200, make: async () => ({ path: `/organizations/${org()}/runs/queue` }) },
  { method: "GET", route: "/api/v2/organizations/:organization_name/capacity", ok: 200, make: async () => ({ path: `/organizations/${org()}/capacity` }) },
  // The audit trail reads the token's own organisation: only its organisation token (HCP refuses user and team tokens).
  { method: "GET", route: "/api/v2/organization/audit-trail", ok: 200, make: async () => ({ path: "/organization/audit-trail" }) },
  ...REGISTRY_ROWS,
  ...NOTIFY_ROWS,
  ...RUN_TASK_ROWS,
];

/** A throwaway organisation where the fixture's owners user (and, with "all", its teams' kinds) are owners. */
async function createOrgFor(_who: "owners" | "all"): Promise<string> {
  const name = await createOrg();
  await makeOwner(fx.ids.ownerUser, name);
  // The fixture's organisation token and teams belong to the fixture's organisation: here they are outsiders.
  return name;
}

function expected(row: Row, who: P, path: string): number {
  if (who === "none" || who === "invalid" || who === "expired") return 401;
  // Rows that make a throwaway organisation: only the owners user and the site admin have standing there.
  const throwaway =
    !path.includes(fx.org) &&
    /^\/organizations\/(?!.*\/workspaces)/.test(path) &&
    row.route.includes(":organization_name") &&
    !row.route.includes("/workspaces");
  const needs: readonly P[] = WHO[needsOf(row)];
  const allowed = throwaway ? needs.filter((p) => p === "owners" || p === "siteAdmin") : needs;
  if (allowed.includes(who)) return row.ok;
  const denied = row.deniedFor?.[who] ?? row.denied ?? 404;
  // Force delete: callers who cannot even read the workspace get 404, readers 403.
  if (denied === 403 && !WS_READ.includes(who)) return 404;
  return denied;
}

beforeAll(async () => {
  // Run tasks are verified on create: a receiver that answers 200 (left in place for the whole file).
  installFakeFetch({ "tasks.example.com": { fetch: async () => new Response("ok") } });
  const name = await createOrg();
  const owner = await makeUser({ ownerOf: name });
  const teams: Record<string, { id: string; token: string }> = {};
  for (const t of ["read", "plan", "write", "admin", "customLock", "projectMaintain", "readOutputs", "projectDelete"]) teams[t] = await makeTeam(name);
  teams.manageWorkspaces = await makeTeam(name, { "manage-workspaces": true, "read-workspaces": true });
  const orgDoc = await api("GET", `/organizations/${name}`);
  const defaultProject = orgDoc.body.data.relationships["default-project"].data.id;
  await grantProject(teams.projectMaintain.id, defaultProject, "maintain");
  await grantProject(teams.projectDelete.id, defaultProject, "custom", { "workspace-access": { runs: "read", delete: true } });
  const orgToken = await makeOrgToken(name);
  const other = await createOrg();
  const otherOwner = await makeUser({ ownerOf: other });
  const expiredUser = await makeUser({ ownerOf: name, expiredAt: new Date(Date.now() - 1000).toISOString() });
  fx = {
    org: name,
    tokens: {
      none: null,
      invalid: "nope.atlasv1.invalid",
      expired: expiredUser.token,
      read: teams.read.token,
      plan: teams.plan.token,
      write: teams.write.token,
      admin: teams.admin.token,
      customLock: teams.customLock.token,
      projectMaintain: teams.projectMaintain.token,
      owners: owner.token,
      orgToken: orgToken.token,
      siteAdmin: "test-admin-token",
      otherOrg: otherOwner.token,
      manageWorkspaces: teams.manageWorkspaces.token,
      readOutputs: teams.readOutputs.token,
      projectDelete: teams.projectDelete.token,
    },
    ids: { ownerUser: owner.id, teams: Object.fromEntries(Object.entries(teams).map(([k, v]) => [k, v.id])), defaultProject },
  };
  // Every team has standing on the base workspace, which also makes the default project readable to them.
  await workspace();
});

describe("authorisation matrix", () => {
  it("has a row for every API route", () => {
    const served = app.routes
      .filter(
        (r) =>
          (r.path.startsWith("/api/v2/") || r.path.startsWith("/api/registry/")) &&
          !r.path.endsWith("*") &&
          r.method !== "ALL" &&
          r.path !== "/api/v2/openapi.json" &&
          // A run task integration's callback takes its task request's access token, no API token (run-tasks.test.ts).
          r.path !== "/api/v2/task-results/:id/callback",
      )
      .map((r) => `${r.method} ${r.path}`);
    const rows = new Set(ROWS.map((r) => `${r.method} ${r.route}`));
    expect([...new Set(served)].filter((r) => !rows.has(r)).sort()).toEqual([]);
    // The declarations name exactly the served routes, and every declared route has a row.
    expect(Object.keys(ROUTE_ACTIONS).sort()).toEqual([...new Set(served)].sort());
    expect(Object.keys(ROUTE_ACTIONS).filter((r) => !rows.has(r))).toEqual([]);
    expect(ROWS.length * PRINCIPALS.length).toBeGreaterThan(1000);
  });

  for (const row of ROWS) {
    it(`${row.method} ${row.route}${row.needs ? ` (${row.needs})` : ""}`, async () => {
      const cells = await Promise.all(
        PRINCIPALS.map(async (who) => {
          const target = await row.make(fx, who);
          const res = await api(row.method, target.path, { token: fx.tokens[who], body: target.body, edition: row.edition });
          return { who, got: res.status, want: expected(row, who, target.path) };
        }),
      );
      expect(cells.filter((c) => c.got !== c.want)).toEqual([]);
    });
  }
});

/** The workspace a target path acts on (by id, by organisation and name, or through a state version). */
async function workspaceOf(path: string): Promise<string> {
  // By name first: generated workspace names also start with "ws-".
  const byName = /^\/organizations\/([^/]+)\/workspaces\/([^/?]+)/.exec(path);
  if (byName) return (await api("GET", `/organizations/${byName[1]}/workspaces/${byName[2]}`)).body.data.id;
  const byId = /\/workspaces\/(ws-[A-Za-z0-9]+)/.exec(path)?.[1];
  if (byId) return byId;
  const sv = /state-versions\/(sv-[A-Za-z0-9]+)/.exec(path)?.[1];
  if (sv) return (await api("GET", `/state-versions/${sv}`)).body.data.relationships.workspace.data.id;
  throw new Error(`no workspace in ${path}`);
}

describe("permission flags match what the endpoints allow", () => {
  const FLAG_ROUTES: Array<{ flag: string; row: string }> = [
    { flag: "can-update", row: "PATCH /api/v2/workspaces/:workspace_id" },
    { flag: "can-lock", row: "POST /api/v2/workspaces/:workspace_id/actions/lock" },
    { flag: "can-force-unlock", row: "POST /api/v2/workspaces/:workspace_id/actions/force-unlock" },
    { flag: "can-force-delete", row: "DELETE /api/v2/workspaces/:workspace_id" },
    { flag: "can-destroy", row: "POST /api/v2/workspaces/:workspace_id/actions/safe-delete" },
    { flag: "can-manage-tags", row: "PATCH /api/v2/workspaces/:workspace_id/tag-bindings" },
    { flag: "can-create-state-versions", row: "POST /api/v2/workspaces/:workspace_id/state-versions" },
    { flag: "can-create-state-versions", row: "PATCH /api/v2/workspaces/:workspace_id/state-versions" },
    { flag: "can-read-state-versions", row: "GET /api/v2/state-versions/:state_version_id" },
    { flag: "can-read-state-versions", row: "GET /api/v2/workspaces/:workspace_id/current-state-version" },
    { flag: "can-read-state-outputs", row: "GET /api/v2/workspaces/:workspace_id/current-state-version-outputs" },
    { flag: "can-read-state-outputs", row: "GET /api/v2/state-versions/:state_version_id/outputs" },
    { flag: "can-unlock", row: "POST /api/v2/workspaces/:workspace_id/actions/unlock" },
    { flag: "can-update", row: "PATCH /api/v2/workspaces/:workspace_id/relationships/ssh-key" },
    { flag: "can-update", row: "PATCH /api/v2/organizations/:organization_name/workspaces/:name" },
    { flag: "can-manage-tags", row: "POST /api/v2/workspaces/:workspace_id/relationships/tags" },
    { flag: "can-read-settings", row: "GET /api/v2/workspaces/:workspace_id" },
    { flag: "can-force-delete", row: "DELETE /api/v2/organizations/:organization_name/workspaces/:name" },
    { flag: "can-destroy", row: "POST /api/v2/organizations/:organization_name/workspaces/:name/actions/safe-delete" },
    { flag: "can-read-variable", row: "GET /api/v2/workspaces/:workspace_id/vars" },
    { flag: "can-read-variable", row: "GET /api/v2/workspaces/:workspace_id/all-vars" },
    { flag: "can-update-variable", row: "POST /api/v2/workspaces/:workspace_id/vars" },
    { flag: "can-update-variable", row: "PATCH /api/v2/workspaces/:workspace_id/vars/:var_id" },
  ];
  for (const { flag, row: key } of FLAG_ROUTES) {
    it(`${flag} ⇔ ${key} succeeds`, async () => {
      const row = ROWS.find((r) => `${r.method} ${r.route}` === key)!;
      for (const who of [...PRINCIPALS, ...FLAG_EXTRAS].filter((p) => WS_READ.includes(p))) {
        const target = await row.make(fx, who);
        const wsId = await workspaceOf(target.path);
        const shown = await api("GET", `/workspaces/${wsId}`, { token: fx.tokens[who] });
        const res = await api(row.method, target.path, { token: fx.tokens[who], body: target.body });
        expect({ who, flag: shown.body.data.attributes.permissions[flag], succeeded: res.status === row.ok }).toEqual({
          who,
          flag: res.status === row.ok,
          succeeded: res.status === row.ok,
        });
      }
    });
  }
});

/**
 * Delegated roles against the owners team: callers holding only
 * manage-membership, only manage-teams (or both), custom state access on a workspace, and the
 * organisation token may not change the owners team, invite into it, or hold its tokens; an owner may.
 */
describe("delegated roles against owners-team targets", () => {
  const CALLERS = ["owners", "orgToken", "manageMembership", "manageTeamsOnly", "manageTeams", "stateReadOutputs", "stateRead", "stateWrite"] as const;
  type Caller = (typeof CALLERS)[number];
  const tokens = {} as Record<Caller, string>;
  let owners = "";

  /** A second owner (so the last-owner rule never decides) and its membership. */
  async function secondOwner(): Promise<{ userId: string; membership: string }> {
    const u = await makeUser();
    await api("POST", `/teams/${owners}/relationships/users`, { body: { data: [{ type: "users", id: u.id }] } });
    const list = await api("GET", `/organizations/${fx.org}/organization-memberships?q=${u.id}`);
    return { userId: u.id, membership: list.body.data[0].id };
  }
  const invitation = async () =>
    (
      await adminPost(`/organizations/${fx.org}/organization-memberships`, {
        data: { type: "organization-memberships", attributes: { email: `${uniqueName("m")}@x.test` } },
      })
    ).id as string;

  const TARGETS: Array<{ name: string; method: string; ok: number; make: () => Promise<Target> }> = [
    {
      name: "add a user to the owners team",
      method: "POST",
      ok: 204,
      make: async () => ({ path: `/teams/${owners}/relationships/users`, body: { data: [{ type: "users", id: (await makeUser()).id }] } }),
    },
    {
      name: "remove an owner from the owners team",
      method: "DELETE",
      ok: 204,
      make: async () => ({ path: `/teams/${owners}/relationships/users`, body: { data: [{ type: "users", id: (await secondOwner()).userId }] } }),
    },
    {
      name: "add a membership to the owners team",
      method: "POST",
      ok: 204,
      make: async () => ({
        path: `/teams/${owners}/relationships/organization-memberships`,
        body: { data: [{ type: "organization-memberships", id: await invitation() }] },
      }),
    },
    {
      name: "remove an owner's membership from the owners team",
      method: "DELETE",
      ok: 204,
      make: async () => ({
        path: `/teams/${owners}/relationships/organization-memberships`,
        body: { data: [{ type: "organization-memberships", id: (await secondOwner()).membership }] },
      }),
    },
    {
      name: "invite into the owners team",
      method: "POST",
      ok: 201,
      make: async () => ({
        path: `/organizations/${fx.org}/organization-memberships`,
        body: {
          data: {
            type: "organization-memberships",
            attributes: { email: `${uniqueName("m")}@x.test` },
            relationships: { teams: { data: [{ type: "teams", id: owners }] } },
          },
        },
      }),
    },
    {
      name: "remove an owner from the organisation",
      method: "DELETE",
      ok: 204,
      make: async () => ({ path: `/organization-memberships/${(await secondOwner()).membership}` }),
    },
    { name: "replace the owners team's legacy token", method: "POST", ok: 201, make: async () => ({ path: `/teams/${owners}/authentication-token` }) },
    {
      name: "create a never-expiring owners-team token",
      method: "POST",
      ok: 201,
      make: async () => ({
        path: `/teams/${owners}/authentication-tokens`,
        body: { data: { type: "authentication-tokens", attributes: { "expired-at": null } } },
      }),
    },
    { name: "list the owners team's tokens", method: "GET", ok: 200, make: async () => ({ path: `/teams/${owners}/authentication-tokens` }) },
    { name: "revoke the owners team's tokens", method: "DELETE", ok: 204, make: async () => ({ path: `/teams/${owners}/authentication-tokens` }) },
  ];

  beforeAll(async () => {
    owners = (await api("GET", `/organizations/${fx.org}/teams?filter%5Bnames%5D=owners`)).body.data[0].id;
    tokens.owners = fx.tokens.owners!;
    tokens.orgToken = fx.tokens.orgToken!;
    tokens.manageMembership = (await makeTeam(fx.org, { "manage-membership": true })).token;
    tokens.manageTeamsOnly = (await makeTeam(fx.org, { "manage-teams": true })).token;
    tokens.manageTeams = (await makeTeam(fx.org, { "manage-membership": true, "manage-teams": true })).token;
    const ws = await createWorkspace(fx.org);
    for (const [who, level] of [
      ["stateReadOutputs", "read-outputs"],
      ["stateRead", "read"],
      ["stateWrite", "write"],
    ] as const) {
      const t = await makeTeam(fx.org);
      await grantWorkspace(t.id, ws.id, "custom", { runs: "read", "state-versions": level });
      tokens[who] = t.token;
    }
  });

  for (const target of TARGETS) {
    it(target.name, async () => {
      const cells = [];
      // One caller at a time: several targets act on the same owners team.
      for (const who of CALLERS) {
        const t = await target.make();
        const res = await api(target.method, t.path, { token: tokens[who], body: t.body });
        cells.push({ who, got: res.status, want: who === "owners" ? target.ok : 404 });
      }
      expect(cells.filter((c) => c.got !== c.want)).toEqual([]);
    });
  }
});

/**
 * Variable sets a project owns: besides the organisation permissions, a team's access to the owning project decides
 * (`project-access.variable-sets` read / write; the admin role writes; maintain and custom without it give nothing),
 * on every route of a set and on creating one for the project. The action each route needs comes from the route
 * table; who holds it on a project-owned set is this block's oracle.
 */
describe("variable sets a project owns", () => {
  const CALLERS = ["owners", "orgToken", "manageWorkspaces", "projectMaintain", "read", "setsRead", "setsWrite", "projectAdmin", "otherSetsWrite"] as const;
  type Caller = (typeof CALLERS)[number];
  const ORG: Caller[] = ["owners", "orgToken", "manageWorkspaces"];
  const OWNED_WHO: Partial<Record<Action, Caller[]>> = {
    "varsets.read": [...ORG, "setsRead", "setsWrite", "projectAdmin"],
    "varsets.manage": [...ORG, "setsWrite", "projectAdmin"],
  };
  const tokens = {} as Record<Caller, string>;
  const owned = () => ({ parent: { data: { type: "projects", id: fx.ids.defaultProject } } });
  const ownedSet = async () =>
    (await adminPost(`/organizations/${fx.org}/varsets`, { data: { type: "varsets", attributes: { name: uniqueName("vs") }, relationships: owned() } }))
      .id as string;
  const ownedVar = async () => {
    const set = await ownedSet();
    return { set, v: (await adminPost(`/varsets/${set}/relationships/vars`, varBody())).id as string };
  };
  const wsRef = async () => ({ data: [{ type: "workspaces", id: (await workspace()).id }] });
  const prjRef = () => ({ data: [{ type: "projects", id: fx.ids.defaultProject }] });

  const TARGETS: Array<{ method: string; route: string; ok: number; make: () => Promise<Target> }> = [
    {
      method: "POST",
      route: "/api/v2/organizations/:organization_name/varsets",
      ok: 201,
      make: async () => ({
        path: `/organizations/${fx.org}/varsets`,
        body: { data: { type: "varsets", attributes: { name: uniqueName("vs") }, relationships: owned() } },
      }),
    },
    { method: "GET", route: "/api/v2/varsets/:varset_id", ok: 200, make: async () => ({ path: `/varsets/${await ownedSet()}?include=vars` }) },
    {
      method: "PATCH",
      route: "/api/v2/varsets/:varset_id",
      ok: 200,
      make: async () => ({ path: `/varsets/${await ownedSet()}`, body: { data: { type: "varsets", attributes: { description: "d" } } } }),
    },
    { method: "DELETE", route: "/api/v2/varsets/:varset_id", ok: 204, make: async () => ({ path: `/varsets/${await ownedSet()}` }) },
    ...(["POST", "DELETE"] as const).flatMap((method) => [
      {
        method,
        route: "/api/v2/varsets/:varset_id/relationships/workspaces",
        ok: 204,
        make: async () => ({ path: `/varsets/${await ownedSet()}/relationships/workspaces`, body: await wsRef() }),
      },
      {
        method,
        route: "/api/v2/varsets/:varset_id/relationships/projects",
        ok: 204,
        make: async () => ({ path: `/varsets/${await ownedSet()}/relationships/projects`, body: prjRef() }),
      },
    ]),
    {
      method: "GET",
      route: "/api/v2/varsets/:varset_id/relationships/vars",
      ok: 200,
      make: async () => ({ path: `/varsets/${(await ownedVar()).set}/relationships/vars` }),
    },
    {
      method: "POST",
      route: "/api/v2/varsets/:varset_id/relationships/vars",
      ok: 201,
      make: async () => ({ path: `/varsets/${await ownedSet()}/relationships/vars`, body: varBody() }),
    },
    ...(["GET", "PATCH", "DELETE"] as const).map((method) => ({
      method,
      route: "/api/v2/varsets/:varset_id/relationships/vars/:var_id",
      ok: method === "GET" ? 200 : method === "PATCH" ? 200 : 204,
      make: async () => {
        const x = await ownedVar();
        return {
          path: `/varsets/${x.set}/relationships/vars/${x.v}`,
          body: method === "PATCH" ? { data: { type: "vars", attributes: { value: "w" } } } : undefined,
        };
      },
    })),
  ];

  beforeAll(async () => {
    for (const who of ["owners", "orgToken", "manageWorkspaces", "projectMaintain", "read"] as const) tokens[who] = fx.tokens[who]!;
    const other = await project();
    const grants: Array<[Exclude<Caller, "owners" | "orgToken" | "manageWorkspaces" | "projectMaintain" | "read">, string, string, unknown]> = [
      ["setsRead", fx.ids.defaultProject, "custom", { "project-access": { "variable-sets": "read" } }],
      ["setsWrite", fx.ids.defaultProject, "custom", { "project-access": { "variable-sets": "write" } }],
      ["projectAdmin", fx.ids.defaultProject, "admin", undefined],
      ["otherSetsWrite", other.id, "custom", { "project-access": { "variable-sets": "write" } }],
    ];
    for (const [who, projectId, access, perms] of grants) {
      const t = await makeTeam(fx.org);
      await grantProject(t.id, projectId, access, perms as Record<string, unknown> | undefined);
      tokens[who] = t.token;
    }
  });

  it("covers every route of a set, and creating one", () => {
    const routes = Object.keys(ROUTE_ACTIONS).filter((r) => r.includes("/api/v2/varsets/:varset_id"));
    expect(routes.filter((r) => !TARGETS.some((t) => `${t.method} ${t.route}` === r))).toEqual([]);
  });

  for (const target of TARGETS) {
    it(`${target.method} ${target.route}`, async () => {
      const action = ROUTE_ACTIONS[`${target.method} ${target.route}`]!;
      const allowed = OWNED_WHO[action];
      expect(allowed, action).toBeDefined();
      const cells = await Promise.all(
        CALLERS.map(async (who) => {
          const t = await target.make();
          const res = await api(target.method, t.path, { token: tokens[who], body: t.body });
          return { who, got: res.status, want: allowed!.includes(who) ? target.ok : 404 };
        }),
      );
      expect(cells.filter((c) => c.got !== c.want)).toEqual([]);
    });
  }
});

/**
 * The list's SQL decides visibility itself (one batch, no per-row check); it must agree with the
 * requirement table's `workspace.read`, which GET /workspaces/:id enforces, for every caller.
 */
describe("the list's visibility rule agrees with workspace.read", () => {
  it("every caller lists exactly the workspaces it may show", async () => {
    const prefix = uniqueName("vis");
    const granted = await workspace({ name: `${prefix}-granted` });
    const bare = await createWorkspace(fx.org, { name: `${prefix}-bare` });
    const ids = [granted.id, bare.id];
    const cells = [];
    for (const who of [...PRINCIPALS, ...FLAG_EXTRAS].filter((p) => fx.tokens[p] && p !== "invalid" && p !== "expired")) {
      const token = fx.tokens[who]!;
      const listed = await api("GET", `/organizations/${fx.org}/workspaces?search%5Bname%5D=${prefix}&page%5Bsize%5D=100`, { token });
      const shown = [];
      for (const id of ids) if ((await api("GET", `/workspaces/${id}`, { token })).status === 200) shown.push(id);
      const got = listed.status === 200 ? (listed.body.data as Array<{ id: string }>).map((w) => w.id).sort() : [];
      cells.push({ who, listed: got, shown: shown.sort() });
    }
    expect(cells.filter((c) => JSON.stringify(c.listed) !== JSON.stringify(c.shown))).toEqual([]);
    // Not vacuous: someone sees both, someone only the granted one, someone neither.
    expect(cells.some((c) => c.shown.length === 2) && cells.some((c) => c.shown.length === 1) && cells.some((c) => c.shown.length === 0)).toBe(true);
  });
});
