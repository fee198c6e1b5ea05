// Every transition of the lock (lock, unlock, force-unlock; 409 and 503 included), with the texts go-tfe classifies.
import { describe, expect, it } from "vitest";
import { addTeamToken, createOrg, createWorkspace, grantWorkspace, makeOrgToken, makeTeam, makeUser, workspaceWithTeam } from "../fixtures";
import { api } from "../helpers";

const lock = (id: string, token?: string, body?: unknown) => api("POST", `/workspaces/${id}/actions/lock`, { token, body });
const unlock = (id: string, token?: string) => api("POST", `/workspaces/${id}/actions/unlock`, { token });
const forceUnlock = (id: string, token?: string) => api("POST", `/workspaces/${id}/actions/force-unlock`, { token });

describe("lock", () => {
  it("locks an unlocked workspace with the reason and holder, accepting go-tfe's wrapped body", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const res = await lock(ws.id, undefined, { data: { type: "", attributes: { reason: "Locked by Terraform" } } });
    expect(res.status).toBe(200);
    expect(res.body.data.attributes.locked).toBe(true);
    expect(res.body.data.attributes["locked-reason"]).toBe("Locked by Terraform");
    expect(res.body.data.relationships["locked-by"].data.type).toBe("users");
    const shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.body.data).toEqual(res.body.data);
  });

  it("accepts a bare {reason} body and no body at all", async () => {
    const org = await createOrg();
    const a = await createWorkspace(org);
    const b = await createWorkspace(org);
    expect((await lock(a.id, undefined, { reason: "maintenance" })).body.data.attributes["locked-reason"]).toBe("maintenance");
    // No body but a JSON:API Content-Type (as curl users and some clients send).
    const empty = await api("POST", `/workspaces/${b.id}/actions/lock`, { raw: "" });
    expect(empty.status).toBe(200);
    expect(empty.body.data.attributes["locked-reason"]).toBe("");
  });

  it("accepts go-tfe's body without a reason, and refuses JSON that does not parse", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const garbage = await api("POST", `/workspaces/${ws.id}/actions/lock`, { raw: "{not json" });
    expect(garbage.status).toBe(400);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
    const res = await lock(ws.id, undefined, { data: { type: "" } });
    expect(res.status).toBe(200);
    expect(res.body.data.attributes["locked-reason"]).toBe("");
  });

  it("include=locked_by embeds the holder: a user, or a team for a team token", async () => {
    const org = await createOrg();
    const a = await createWorkspace(org);
    const b = await createWorkspace(org);
    const user = await makeUser({ ownerOf: org });
    const team = await makeTeam(org);
    await grantWorkspace(team.id, b.id, "write");
    await lock(a.id, user.token);
    await lock(b.id, team.token);
    const byUser = await api("GET", `/workspaces/${a.id}?include=locked_by`);
    expect(byUser.body.included).toEqual([expect.objectContaining({ id: user.id, type: "users" })]);
    const byTeam = await api("GET", `/workspaces/${b.id}?include=locked_by`);
    expect(byTeam.body.included).toEqual([expect.objectContaining({ id: team.id, type: "teams" })]);
  });

  it("answers 409 conflict when already locked", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect((await lock(ws.id)).status).toBe(200);
    const again = await lock(ws.id);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].title).toBe("conflict");
  });

  it("refuses a malformed lock body and changes nothing", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const bad = await lock(ws.id, undefined, { data: { attributes: { reason: 5 } } });
    expect(bad.status).toBe(422);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
  });

  it("100 concurrent lockers from distinct principals: exactly one wins", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const users = await Promise.all(Array.from({ length: 100 }, () => makeUser({ ownerOf: org })));
    const results = await Promise.all(users.map((u) => lock(ws.id, u.token, { reason: u.id })));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(99);
    const shown = await api("GET", `/workspaces/${ws.id}`);
    const winner = users.find((u) => u.id === winners[0].body.data.attributes["locked-reason"])!;
    expect(shown.body.data.relationships["locked-by"].data).toEqual({ id: winner.id, type: "users" });
  });
});

describe("unlock", () => {
  it("unlocks by the locker, then 409 when already unlocked", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await lock(ws.id);
    const res = await unlock(ws.id);
    expect(res.status).toBe(200);
    expect(res.body.data.attributes.locked).toBe(false);
    expect(res.body.data.relationships["locked-by"]).toEqual({ data: null });
    const again = await unlock(ws.id);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].detail).not.toMatch(/is locked by/);
  });

  it("refuses to unlock a workspace locked by a team, naming the team as go-tfe expects", async () => {
    const { ws, team } = await workspaceWithTeam("write");
    const locked = await lock(ws.id, team.token);
    expect(locked.status).toBe(200);
    expect(locked.body.data.relationships["locked-by"].data).toEqual({ id: team.id, type: "teams" });
    const res = await unlock(ws.id);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe(`Unable to unlock workspace. The workspace is locked by Team ${team.id} and may not be unlocked except by them.`);
    expect((await unlock(ws.id, team.token)).status).toBe(200);
  });

  it("refuses to unlock a workspace locked by another user, even for the site admin (who may force-unlock)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await makeUser({ ownerOf: org });
    await lock(ws.id, other.token);
    const res = await unlock(ws.id); // the default test token is the site admin
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe(`Unable to unlock workspace. The workspace is locked by User ${other.id} and may not be unlocked except by them.`);
    const owner = await makeUser({ ownerOf: org });
    expect((await unlock(ws.id, owner.token)).body.errors[0].detail).toContain(`is locked by User ${other.id}`);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(true);
    expect((await forceUnlock(ws.id)).status).toBe(200);
  });

  it("another token of the same holder may unlock (the lock belongs to the user or team, not the token)", async () => {
    const { org, ws, team } = await workspaceWithTeam("write");
    const secondToken = await addTeamToken(team.id, org);
    expect((await lock(ws.id, team.token)).status).toBe(200);
    expect((await unlock(ws.id, secondToken)).status).toBe(200);
  });

  it("an organisation token's lock is held by its service user (type users)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const orgToken = await makeOrgToken(org);
    const res = await lock(ws.id, orgToken.token);
    expect(res.status).toBe(200);
    expect(res.body.data.relationships["locked-by"].data.type).toBe("users");
  });
});

describe("force-unlock", () => {
  it("unlocks whoever holds the lock for an admin, then 409 when unlocked", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await makeUser({ ownerOf: org });
    await lock(ws.id, other.token);
    const res = await forceUnlock(ws.id);
    expect(res.status).toBe(200);
    expect(res.body.data.attributes.locked).toBe(false);
    expect((await forceUnlock(ws.id)).status).toBe(409);
  });

  it("needs admin; lock needs the lock permission (404 otherwise)", async () => {
    const { org, ws, team: reader } = await workspaceWithTeam("read");
    expect((await lock(ws.id, reader.token)).status).toBe(404);
    const writer = await makeTeam(org);
    await grantWorkspace(writer.id, ws.id, "write");
    expect((await lock(ws.id, writer.token)).status).toBe(200);
    expect((await forceUnlock(ws.id, writer.token)).status).toBe(404);
    const custom = await makeTeam(org);
    await grantWorkspace(custom.id, ws.id, "custom", { "workspace-locking": true });
    expect((await unlock(ws.id, custom.token)).status).toBe(409); // may try, but is not the holder
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(true);
  });
});

describe("locking and updates", () => {
  it("interleaved lock/unlock and attribute updates lose no update", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const locks: Promise<{ status: number }>[] = [];
    const unlocks: Promise<{ status: number }>[] = [];
    const writes: Promise<{ status: number }>[] = [];
    for (let i = 0; i < 10; i++) {
      // Each write touches something no other write touches, so every one must survive.
      writes.push(
        api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: `k${i}`, value: `v${i}` } }] } }),
      );
      writes.push(api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: `flat-${i}` } }] } }));
      locks.push(lock(ws.id));
      unlocks.push(unlock(ws.id));
    }
    writes.push(api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { description: "kept" } } } }));
    const [l, u, w] = await Promise.all([Promise.all(locks), Promise.all(unlocks), Promise.all(writes)]);
    expect(w.every((r) => r.status < 300)).toBe(true);
    const final = await api("GET", `/workspaces/${ws.id}`);
    const tb = await api("GET", `/workspaces/${ws.id}/tag-bindings`);
    // Flat tags and bindings are two sets: each write lands in its own.
    expect(tb.body.data.map((b: { attributes: { key: string } }) => b.attributes.key).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
    expect([...final.body.data.attributes["tag-names"]].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `flat-${i}`).sort());
    expect(final.body.data.attributes.description).toBe("kept");
    // The lock state is what the successful transitions add up to in a serial order.
    const locked = l.filter((r) => r.status === 200).length - u.filter((r) => r.status === 200).length;
    expect([0, 1]).toContain(locked);
    expect(final.body.data.attributes.locked).toBe(locked === 1);
    expect([...l, ...u].every((r) => r.status === 200 || r.status === 409)).toBe(true);
    // The index copy agrees with the DO after the burst.
    const byName = await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`);
    expect(byName.body.data).toEqual(final.body.data);
  });
});
