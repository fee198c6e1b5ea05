// The consistency contract (docs/consistency.md) against a stand-in read replica that trails the primary
// (test/replica-double.ts): each kind of staleness, and its bound.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../src/index";
import { REPLICA_FENCE_MS } from "../../src/platform/replica-fence";
import { createOrg, createWorkspace, makeUser } from "../fixtures";
import { ADMIN as ADMIN_TOKEN, api, indexSettled, uniqueName } from "../helpers";
import { laggingD1, prepareReplica, type LaggingD1 } from "../replica-double";

let replica: LaggingD1;

/** A request through the Worker whose D1 has the lagging replica (the objects keep the real primary). */
async function viaReplica(method: string, path: string, token: string, body?: unknown) {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "application/vnd.api+json" };
  if (body) headers["Content-Type"] = "application/vnd.api+json";
  const res = await app.fetch(new Request(`http://localhost/api/v2${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined }), {
    ...env,
    DB: replica.db,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const update = (attributes: Record<string, unknown>) => ({ data: { type: "workspaces", attributes } });

beforeAll(async () => {
  await prepareReplica(env.REPLICA_DB);
  replica = laggingD1(env.DB, env.REPLICA_DB);
});

/** An organisation's owner and a workspace of it (named with `prefix`), the replica caught up with both. */
async function ownersWorkspace(prefix: string) {
  const org = await createOrg();
  const { token } = await makeUser({ ownerOf: org });
  const ws = await createWorkspace(org, { name: uniqueName(prefix) });
  await replica.sync();
  return { org, token, ws };
}

describe("read-your-writes under replica lag", () => {
  it("a client's read-back by id and by name sees its own acknowledged write", async () => {
    const { org, token, ws } = await ownersWorkspace("ryw");
    const before = replica.replicaReads;

    const patched = await viaReplica("PATCH", `/workspaces/${ws.id}`, token, update({ description: "after" }));
    expect(patched.status).toBe(200);
    const locked = await viaReplica("POST", `/workspaces/${ws.id}/actions/lock`, token);
    expect(locked.status).toBe(200);
    // The replica still has the old row; the reads are served beside it from the workspace's object.
    for (const path of [`/workspaces/${ws.id}`, `/organizations/${org}/workspaces/${ws.attributes.name}`]) {
      const read = await viaReplica("GET", path, token);
      expect(read.status).toBe(200);
      expect(read.body.data.attributes.description).toBe("after");
      expect(read.body.data.attributes.locked).toBe(true);
    }
    expect(replica.replicaReads).toBeGreaterThan(before);
  });

  it("go-tfe's create → read → update → read sequence sees each write, the name included", async () => {
    const org = await createOrg();
    const { token } = await makeUser({ ownerOf: org });
    await replica.sync();
    const name = uniqueName("gotfe");
    const created = await viaReplica("POST", `/organizations/${org}/workspaces`, token, update({ name }));
    expect(created.status).toBe(201);
    // The replica knows neither the workspace nor its name: the primary answers what the replica cannot find.
    expect((await viaReplica("GET", `/organizations/${org}/workspaces/${name}`, token)).body.data.id).toBe(created.body.data.id);
    const renamed = uniqueName("gotfe");
    expect((await viaReplica("PATCH", `/organizations/${org}/workspaces/${name}`, token, update({ name: renamed }))).status).toBe(200);
    await replica.sync();
    const again = uniqueName("gotfe");
    expect((await viaReplica("PATCH", `/workspaces/${created.body.data.id}`, token, update({ name: again }))).status).toBe(200);
    // The replica maps `renamed` to the workspace, whose object says otherwise: not found, as on the primary.
    expect((await viaReplica("GET", `/organizations/${org}/workspaces/${renamed}`, token)).status).toBe(404);
    const read = await viaReplica("GET", `/organizations/${org}/workspaces/${again}`, token);
    expect(read.status).toBe(200);
    expect(read.body.data.attributes.name).toBe(again);
  });
});

describe("lists under replica lag", () => {
  it("may trail an acknowledged write until the replica has it, and never show one that was not acknowledged", async () => {
    const { org, token, ws } = await ownersWorkspace("lst");
    expect((await viaReplica("PATCH", `/workspaces/${ws.id}`, token, update({ description: "new" }))).status).toBe(200);
    // A create whose object refuses answers an error: nothing of it reaches the index, primary or replica.
    const refused = uniqueName("lst");
    const failed = await api("POST", `/organizations/${org}/workspaces`, {
      token,
      headers: { "X-Fault-Fail-Create": "result" },
      body: update({ name: refused }),
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);

    const trailing = await viaReplica("GET", `/organizations/${org}/workspaces`, token);
    expect(trailing.status).toBe(200);
    expect(trailing.body.data.map((w: any) => w.attributes.description)).toEqual([null]);
    await replica.sync();
    const caught = await viaReplica("GET", `/organizations/${org}/workspaces`, token);
    expect(caught.body.data.map((w: any) => [w.attributes.name, w.attributes.description])).toEqual([[ws.attributes.name, "new"]]);
  });

  it("a replica older than the fence is not trusted: the list comes from the primary", async () => {
    const org = await createOrg();
    const { token } = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, { name: uniqueName("old") });
    await replica.sync({ clockAt: Date.now() - REPLICA_FENCE_MS - 1_000 });
    expect((await viaReplica("PATCH", `/workspaces/${ws.id}`, token, update({ description: "fresh" }))).status).toBe(200);
    const list = await viaReplica("GET", `/organizations/${org}/workspaces`, token);
    expect(list.body.data.map((w: any) => w.attributes.description)).toEqual(["fresh"]);
  });
});

describe("revocation under replica lag", () => {
  it("a revoked token works only while the replica that has not seen it is within the fence", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    // Resolved once, so its principal is cached and each request rechecks it in its first batch.
    expect((await viaReplica("GET", `/organizations/${org}/workspaces`, user.token)).status).toBe(200);
    await replica.sync();
    await env.DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(user.id).run();

    // The replica has not seen the deletion and is younger than the fence: the token still reads (the stated bound).
    expect((await viaReplica("GET", "/ping", user.token)).status).toBe(204);
    // Once the replica is older than the fence, the primary answers: 401 everywhere.
    await env.REPLICA_DB.prepare("UPDATE replica_clock SET at = ?")
      .bind(Date.now() - REPLICA_FENCE_MS - 1)
      .run();
    expect((await viaReplica("GET", "/ping", user.token)).status).toBe(401);
  });

  it("a replica that has the revocation refuses at once", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    expect((await viaReplica("GET", `/organizations/${org}/workspaces`, user.token)).status).toBe(200);
    await env.DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(user.id).run();
    await replica.sync();
    expect((await viaReplica("GET", `/organizations/${org}/workspaces`, user.token)).status).toBe(401);
    expect((await viaReplica("POST", `/organizations/${org}/workspaces`, user.token, update({ name: uniqueName("no") }))).status).toBe(401);
  });
});

// Lock, unlock, force-unlock and the state path answer once the object's commit is durable; the index write follows
// the answer (docs/consistency.md, "lists and search").
describe("the index write that follows the answer", () => {
  const FAIL_ONE = { "X-Fault-Fail-Index-Writes": "1" };
  const indexedVersion = (id: string) => env.DB.prepare("SELECT version FROM workspaces WHERE id = ?").bind(id).first<number>("version");
  const listedLock = async (org: string, id: string, token: string) =>
    (await api("GET", `/organizations/${org}/workspaces`, { token })).body.data.find((w: any) => w.id === id).attributes.locked;

  it("an acknowledged lock is seen by the object's reads at once and by the list once the outbox drains", async () => {
    const org = await createOrg();
    const { token } = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, { name: uniqueName("idx") });
    // Its index write fails: the list keeps the unlocked row until the alarm writes it, whatever the timing.
    const locked = await api("POST", `/workspaces/${ws.id}/actions/lock`, { token, headers: FAIL_ONE });
    expect(locked.status).toBe(200);
    // No bookmark: none covers a write the index does not have yet.
    expect(locked.headers.get("X-D1-Bookmark")).toBeNull();
    await indexSettled(ws.id);
    expect((await api("GET", `/workspaces/${ws.id}`, { token })).body.data.attributes.locked).toBe(true);
    expect((await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`, { token })).body.data.attributes.locked).toBe(true);
    expect(await listedLock(org, ws.id, token)).toBe(false);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(ws.id))).toBe(true);
    expect(await listedLock(org, ws.id, token)).toBe(true);
  });

  it("a refused lock never reaches the list, and the replica shows the lock once it has the index write", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const other = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, { name: uniqueName("idx") });
    await replica.sync();
    expect((await viaReplica("POST", `/workspaces/${ws.id}/actions/lock`, owner.token)).status).toBe(200);
    expect((await viaReplica("POST", `/workspaces/${ws.id}/actions/lock`, other.token)).status).toBe(409);
    await indexSettled(ws.id);
    // The replica trails (within the fence); the primary has the acknowledged lock, by its holder.
    const trailing = await viaReplica("GET", `/organizations/${org}/workspaces`, owner.token);
    expect(trailing.body.data.map((w: any) => w.attributes.locked)).toEqual([false]);
    await replica.sync();
    const caught = await viaReplica("GET", `/organizations/${org}/workspaces`, owner.token);
    expect(caught.body.data.map((w: any) => [w.attributes.locked, w.relationships["locked-by"].data?.id])).toEqual([[true, owner.id]]);
  });

  it("a crash between the answer and the index write: the write and the alarm that drains it were committed first", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { name: uniqueName("crash") });
    const stub = env.WORKSPACES.getByName(ws.id);
    const before = await indexedVersion(ws.id);
    // The index write is held back (3 s): the lock is acknowledged while D1 has not seen it.
    const locked = await api("POST", `/workspaces/${ws.id}/actions/lock`, { headers: { "X-Fault-Delay-Index-Writes-Ms": "3000" } });
    expect(locked.status).toBe(200);
    // What a crash now would leave: the committed lock, its outbox entry and the alarm, all in the object's storage
    // (a restarted object runs the alarm; \`npm run test:restart\` kills the process in that window).
    const durable = await runInDurableObject(stub, async (_object, state) => ({
      outbox: state.storage.sql
        .exec<{ version: number }>("SELECT json_extract(record, '$.version') AS version FROM workspace WHERE outbox IS NOT NULL")
        .toArray()[0]?.version,
      alarm: await state.storage.getAlarm(),
    }));
    expect(durable.outbox).toBe(before! + 1);
    expect(durable.alarm).not.toBeNull();
    expect(await indexedVersion(ws.id)).toBe(before);
    // The alarm drains it (behind the held write, which it does not overtake).
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await indexedVersion(ws.id)).toBe(before! + 1);
    expect(await listedLock(org, ws.id, ADMIN_TOKEN)).toBe(true);
  });
});
