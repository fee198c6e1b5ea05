// What the run engine calls inside the workspace's object: which configuration version a run uses, when a provisional
// one becomes current, and how runs using a version hold off its archive and a new upload.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { promoteProvisional, resolveCvForRun } from "../../src/configuration-versions/configuration-versions.store";
import { CONFIGURATION_VERSION_TABLES, ensure, RUN_TABLES } from "../../src/workspaces/workspace.migrations";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { createOrg, createWorkspace } from "../fixtures";
import { api } from "../helpers";

async function cv(ws: string, attributes: Record<string, unknown> = {}, upload = true): Promise<string> {
  const res = await api("POST", `/workspaces/${ws}/configuration-versions`, {
    body: { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false, ...attributes } } },
  });
  if (upload) {
    const put = await exports.default.fetch(new Request(res.body.data.attributes["upload-url"], { method: "PUT", body: new Uint8Array([1, 2, 3]) }));
    expect(put.status).toBe(200);
  }
  return res.body.data.id;
}

/** Runs `fn` with the object's SQL (the configuration-version tables made, as by a first version) and its live record. */
async function inObject<T>(ws: string, fn: (sql: SqlStorage, w: WorkspaceRecord) => T): Promise<T> {
  return runInDurableObject(env.WORKSPACES.getByName(ws), (_instance, state) => {
    const sql = ensure(state.storage.sql, CONFIGURATION_VERSION_TABLES);
    const w = JSON.parse(sql.exec<{ record: string }>("SELECT record FROM workspace").one().record) as WorkspaceRecord;
    return fn(sql, w);
  });
}

/** A run using `cvId` in the engine's `runs` table (src/runs/runs.store.ts, made on first use), in any status. */
const addRun = (ws: string, cvId: string, status: string) =>
  inObject(ws, (sql) => {
    ensure(sql, RUN_TABLES);
    const seq = (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM runs").one().n ?? 0) + 1;
    const id = `run-test${seq}`;
    sql.exec(
      "INSERT INTO runs (id, seq, record, status, bypass, plan_only) VALUES (?, ?, ?, ?, 1, 1)",
      id,
      seq,
      JSON.stringify({ id, configurationVersionId: cvId, status }),
      status,
    );
    return id;
  });
const setRunStatus = (ws: string, runId: string, status: string) =>
  inObject(ws, (sql) => sql.exec("UPDATE runs SET record = json_set(record, '$.status', ?), status = ?1 WHERE id = ?2", status, runId));

describe("resolveCvForRun", () => {
  it("names the failure of each wrong choice, and defaults to the workspace's current version", async () => {
    const ws = (await createWorkspace(await createOrg())).id as string;
    const code = (r: unknown) => (r as { code?: string }).code;
    expect(code(await inObject(ws, (sql, w) => resolveCvForRun(sql, null, w.currentConfigurationVersionId)))).toBe("cv_none");
    const pending = await cv(ws, {}, false);
    expect(await inObject(ws, (sql, w) => resolveCvForRun(sql, null, w.currentConfigurationVersionId))).toMatchObject({
      code: "cv_not_uploaded",
      pointer: "/data/relationships/configuration-version/data/id",
    });
    expect(code(await inObject(ws, (sql) => resolveCvForRun(sql, "cv-notinthisworkspace")))).toBe("cv_not_found");
    const current = await cv(ws);
    // A newer provisional version is not the default.
    const provisional = await cv(ws, { provisional: true });
    expect(await inObject(ws, (sql, w) => resolveCvForRun(sql, null, w.currentConfigurationVersionId))).toMatchObject({ id: current, status: "uploaded" });
    // Without the record's pointer: the newest non-provisional version.
    expect(await inObject(ws, (sql) => resolveCvForRun(sql, null))).toMatchObject({ id: current });
    expect(await inObject(ws, (sql) => resolveCvForRun(sql, provisional))).toMatchObject({ id: provisional, provisional: true });
    expect(code(await inObject(ws, (sql) => resolveCvForRun(sql, pending)))).toBe("cv_not_uploaded");
  });
});

describe("promoteProvisional", () => {
  it("makes an applied provisional version current only when no newer version exists", async () => {
    const ws = (await createWorkspace(await createOrg())).id as string;
    const base = await cv(ws);
    const older = await cv(ws, { provisional: true });
    await cv(ws, { provisional: true });
    const newest = await cv(ws, { provisional: true });
    expect(await inObject(ws, (sql, w) => ({ changed: promoteProvisional(sql, w, older), current: w.currentConfigurationVersionId }))).toEqual({
      changed: false,
      current: base,
    });
    expect(await inObject(ws, (sql, w) => ({ changed: promoteProvisional(sql, w, base), current: w.currentConfigurationVersionId }))).toEqual({
      changed: false,
      current: base,
    });
    expect(await inObject(ws, (sql, w) => ({ changed: promoteProvisional(sql, w, newest), current: w.currentConfigurationVersionId }))).toEqual({
      changed: true,
      current: newest,
    });
  });
});

describe("runs using a configuration version", () => {
  it("an unfinished run holds off its archive; any run closes it to new uploads", async () => {
    const ws = (await createWorkspace(await createOrg())).id as string;
    const old = await cv(ws);
    const uploadUrl = (await api("POST", `/workspaces/${ws}/configuration-versions`, { body: { data: { type: "configuration-versions" } } })).body.data
      .attributes["upload-url"];
    const run = await addRun(ws, old, "planning");
    const refused = await api("POST", `/configuration-versions/${old}/actions/archive`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0]).toMatchObject({ title: "transition not allowed", detail: expect.stringContaining("run") });
    // The archive still downloads: nothing was dropped.
    expect((await api("GET", `/configuration-versions/${old}`)).body.data.attributes.status).toBe("uploaded");
    await setRunStatus(ws, run, "applied");
    expect((await api("POST", `/configuration-versions/${old}/actions/archive`)).status).toBe(202);
    // The newer (current) version's first upload is taken; once a run uses it, another is refused.
    expect((await exports.default.fetch(new Request(uploadUrl, { method: "PUT", body: new Uint8Array([9]) }))).status).toBe(200);
    const current = (await api("GET", `/workspaces/${ws}`)).body.data.relationships["current-configuration-version"].data.id as string;
    await addRun(ws, current, "planned_and_finished");
    const again = await exports.default.fetch(new Request(uploadUrl, { method: "PUT", body: new Uint8Array([8]) }));
    expect(again.status).toBe(409);
  });
});
