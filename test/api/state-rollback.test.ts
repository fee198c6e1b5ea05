// Rollback to a previous state version (PATCH /workspaces/:id/state-versions, the real API's "Rollback to a Previous
// State Version"): a new current version duplicating an older one of the same workspace, under the caller's lock,
// with the power to create state versions. History is never rewritten.
import { exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { grantWorkspace, makeOrgToken, makeTeam } from "../fixtures";

const stateOf = (serial: number, resources: number, output: string) =>
  JSON.stringify({
    version: 4,
    terraform_version: "1.9.0",
    serial,
    lineage: "lin-1",
    outputs: { which: { value: output, type: "string" } },
    resources: [
      { mode: "managed", type: "null_resource", name: "n", provider: 'provider["registry.terraform.io/hashicorp/null"]', instances: Array(resources).fill({}) },
    ],
  });
const V1 = stateOf(1, 1, "first");
const V2 = stateOf(2, 3, "second");
const V3 = stateOf(3, 0, "third");
const JSON_V1 = JSON.stringify({ format_version: "1.0", terraform_version: "1.9.0", values: { root_module: {} } });

const md5 = (s: string) => SparkMD5.hash(s);
const raw = (url: string) => exports.default.fetch(new Request(url));
const POINTER = "/data/relationships/rollback-state-version/data/id";
const rollbackBody = (id: string) => ({
  data: { type: "state-versions", relationships: { "rollback-state-version": { data: { type: "state-versions", id } } } },
});
const rollback = (wsId: string, svId: string, token?: string) => api("PATCH", `/workspaces/${wsId}/state-versions`, { token, body: rollbackBody(svId) });

/** A workspace locked by the admin with three finalized versions (serials 1, 2, 3; the first with a JSON state). */
async function withHistory() {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  const ids: string[] = [];
  for (const [serial, state] of [
    [1, V1],
    [2, V2],
    [3, V3],
  ] as const) {
    const attrs: Record<string, unknown> = { serial, lineage: "lin-1", md5: md5(state), state: btoa(state) };
    if (serial === 1) attrs["json-state"] = btoa(JSON_V1);
    const res = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: { data: { type: "state-versions", attributes: attrs } } });
    expect(res.status).toBe(201);
    ids.push(res.body.data.id);
  }
  return { org, ws, ids };
}
const list = async (org: string, name: string) =>
  (await api("GET", `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${name}&filter%5Borganization%5D%5Bname%5D=${org}`)).body.data as Array<{
    id: string;
    attributes: Record<string, unknown>;
    relationships: Record<string, unknown>;
  }>;

describe("rollback to a previous state version", () => {
  it("creates a new current version holding the old state; every version stays in the history", async () => {
    const { org, ws, ids } = await withHistory();
    const before = await list(org, ws.attributes.name);
    const res = await rollback(ws.id, ids[0]!);
    expect(res.status).toBe(201);
    const sv = res.body.data;
    expect(sv.id).toMatch(/^sv-/);
    expect(ids).not.toContain(sv.id);
    // A duplicate of the old version: its serial and lineage (the bytes are the same), its resources and outputs.
    expect(sv.attributes).toMatchObject({
      status: "finalized",
      intermediate: false,
      serial: 1,
      lineage: "lin-1",
      size: V1.length,
      "resources-processed": true,
      "terraform-version": "1.9.0",
      "hosted-state-upload-url": null,
      "hosted-json-state-upload-url": null,
    });
    expect(sv.attributes.resources).toEqual([
      { name: "n", type: "null_resource", count: 1, module: "root", provider: 'provider["registry.terraform.io/hashicorp/null"]' },
    ]);
    expect(sv.relationships["rollback-state-version"].data).toEqual({ id: ids[0], type: "state-versions" });
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(V1);
    expect(await (await raw(sv.attributes["hosted-json-state-download-url"])).text()).toBe(JSON_V1);

    // Current, with the old version's count and outputs.
    const current = await api("GET", `/workspaces/${ws.id}/current-state-version?include=outputs`);
    expect(current.body.data.id).toBe(sv.id);
    expect(current.body.included.map((o: { attributes: { name: string; value: unknown } }) => [o.attributes.name, o.attributes.value])).toEqual([
      ["which", "first"],
    ]);
    const shown = (await api("GET", `/workspaces/${ws.id}`)).body.data;
    expect(shown.attributes["resource-count"]).toBe(1);
    expect(shown.attributes["latest-change-at"]).toBe(sv.attributes["created-at"]);
    expect(shown.relationships["current-state-version"].data).toEqual({ id: sv.id, type: "state-versions" });

    // History: every version listed, newest first, the older ones unchanged (and still downloadable).
    const after = await list(org, ws.attributes.name);
    expect(after.map((s) => s.id)).toEqual([sv.id, ids[2], ids[1], ids[0]]);
    expect(after.slice(1).map((s) => ({ id: s.id, serial: s.attributes.serial }))).toEqual(before.map((s) => ({ id: s.id, serial: s.attributes.serial })));
    expect(after.find((s) => s.id === ids[0])!.relationships).toMatchObject({ "rollback-state-version": { data: null } });
    expect(await (await raw(after[1]!.attributes["hosted-state-download-url"] as string)).text()).toBe(V3);
    expect((await api("GET", `/state-versions/${sv.id}`)).body.data.id).toBe(sv.id);
    // Nothing is pending: the holder unlocks as after any create.
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
  });

  it("a rollback to a version with resources makes safe delete refuse; back to an empty one lets it through", async () => {
    const { ws, ids } = await withHistory();
    expect((await rollback(ws.id, ids[1]!)).status).toBe(201);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(3);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(409);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    expect((await rollback(ws.id, ids[2]!)).status).toBe(201);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(204);
  });

  it("supersedes a pending version, as a create does", async () => {
    const { org, ws, ids } = await withHistory();
    const pending = (
      await api("POST", `/workspaces/${ws.id}/state-versions`, { body: { data: { type: "state-versions", attributes: { serial: 4, md5: md5(V2) } } } })
    ).body.data;
    expect((await rollback(ws.id, ids[0]!)).status).toBe(201);
    expect((await api("GET", `/state-versions/${pending.id}`)).body.data.attributes.status).toBe("discarded");
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    expect(await list(org, ws.attributes.name)).toHaveLength(5);
  });

  it("refuses without the caller's lock (409, as a create), and changes nothing", async () => {
    const { org, ws, ids } = await withHistory();
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "write");
    // Locked, but by someone else.
    const other = await rollback(ws.id, ids[0]!, team.token);
    expect(other.status).toBe(409);
    expect(other.body.errors[0]).toMatchObject({
      status: "409",
      title: "conflict",
      detail: "The workspace must be locked by the caller to create a state version",
    });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await rollback(ws.id, ids[0]!)).status).toBe(409);
    expect((await list(org, ws.attributes.name)).map((s) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).body.data.id).toBe(ids[2]);
  });

  it("refuses a version it does not have, another workspace's, or one without state (422 on the relationship)", async () => {
    const { org, ws, ids } = await withHistory();
    const elsewhere = await withHistory();
    const pending = (
      await api("POST", `/workspaces/${ws.id}/state-versions`, { body: { data: { type: "state-versions", attributes: { serial: 4, md5: md5(V2) } } } })
    ).body.data;
    // Superseded before its upload: discarded, with no state either.
    const discarded = pending.id;
    const pending2 = (
      await api("POST", `/workspaces/${ws.id}/state-versions`, { body: { data: { type: "state-versions", attributes: { serial: 5, md5: md5(V2) } } } })
    ).body.data;
    for (const id of ["sv-doesnotexist0000", elsewhere.ids[0]!, pending2.id, discarded]) {
      const res = await rollback(ws.id, id);
      expect({ id, status: res.status }).toEqual({ id, status: 422 });
      expect(res.body.errors[0]).toMatchObject({ status: "422", source: { pointer: POINTER } });
    }
    // Nothing changed: no new version here, the pending one still takes its upload, the other workspace untouched.
    expect((await list(org, ws.attributes.name)).map((s) => s.id)).toEqual([pending2.id, discarded, ids[2], ids[1], ids[0]]);
    expect((await api("GET", `/state-versions/${pending2.id}`)).body.data.attributes.status).toBe("pending");
    expect((await list(elsewhere.org, elsewhere.ws.attributes.name)).map((s) => s.id)).toEqual([...elsewhere.ids].reverse());
  });

  it("refuses a version whose backing data was soft deleted (no state to copy)", async () => {
    const { ws, ids } = await withHistory();
    expect((await api("POST", `/state-versions/${ids[0]}/actions/soft_delete_backing_data`)).status).toBe(204);
    const res = await rollback(ws.id, ids[0]!);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].source.pointer).toBe(POINTER);
    expect((await api("POST", `/state-versions/${ids[0]}/actions/restore_backing_data`)).status).toBe(204);
    expect((await rollback(ws.id, ids[0]!)).status).toBe(201);
  });

  it("validates the body (422 with a pointer) and answers 404 for an unknown workspace", async () => {
    const { ws, ids } = await withHistory();
    const bad = await api("PATCH", `/workspaces/${ws.id}/state-versions`, { body: { data: { type: "state-versions", relationships: {} } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toMatch(/^\/data\/relationships/);
    const wrongType = await api("PATCH", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "workspaces", relationships: { "rollback-state-version": { data: { type: "state-versions", id: ids[0] } } } } },
    });
    expect(wrongType.status).toBe(422);
    expect((await rollback("ws-doesnotexist0000", ids[0]!)).status).toBe(404);
  });

  it("needs the power to create state versions: readers, lock-only grants and organisation tokens are refused (404)", async () => {
    const { org, ws, ids } = await withHistory();
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    expect((await rollback(ws.id, ids[0]!, reader.token)).status).toBe(404);
    // May lock, and holds the lock, but may not write state.
    const locker = await makeTeam(org);
    await grantWorkspace(locker.id, ws.id, "custom", { runs: "read", "workspace-locking": true, "state-versions": "read" });
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: locker.token })).status).toBe(200);
    expect((await rollback(ws.id, ids[0]!, locker.token)).status).toBe(404);
    await api("POST", `/workspaces/${ws.id}/actions/force-unlock`);
    const orgToken = await makeOrgToken(org);
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: orgToken.token })).status).toBe(200);
    expect((await rollback(ws.id, ids[0]!, orgToken.token)).status).toBe(404);
    await api("POST", `/workspaces/${ws.id}/actions/force-unlock`);
    const outsider = await makeTeam(org);
    expect((await rollback(ws.id, ids[0]!, outsider.token)).status).toBe(404);
    // A writer holding its own lock may.
    const writer = await makeTeam(org);
    await grantWorkspace(writer.id, ws.id, "write");
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: writer.token })).status).toBe(200);
    const ok = await rollback(ws.id, ids[0]!, writer.token);
    expect(ok.status).toBe(201);
    expect(ok.body.data.relationships["created-by"].data).not.toBeNull();
    expect((await list(org, ws.attributes.name)).map((s) => s.id)).toEqual([ok.body.data.id, ids[2], ids[1], ids[0]]);
  });
});
