// A run's artifacts and logs at the sizes a large state brings: artifacts stream in and out in pieces past what one
// request or call may carry, a phase's log stops at its bound with a line saying so, and the state an apply could not
// save is kept with the run for a workspace admin to recover.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { truncatedLine } from "../../src/runs/logs.store";
import { createOrg, createWorkspace, teamToken } from "../fixtures";
import { api } from "../helpers";
import { createRun, run, seedCv, value } from "../do/runs.helpers";
import { agentFetch as agentCall, jobPath, nextJob as next, registerAgent as register } from "../agent-client";

const MiB = 1024 * 1024;

/** A remote workspace's queued run, its plan claimed by an agent of the default pool (earlier leftovers drained). */
async function plannedJob(org?: string) {
  const agent = await register();
  while (await next(agent)) {}
  const o = org ?? (await createOrg());
  const ws = await createWorkspace(o, { "execution-mode": "remote" });
  const stub = env.WORKSPACES.getByName(ws.id);
  const r = await createRun(stub, await seedCv(stub));
  const job = await next(agent);
  expect(job?.run).toBe(r.id);
  return { org: o, ws: ws.id, stub, agent, job: job! };
}

/** Bytes that are not text and not a repeat of one piece, so a misplaced or lost piece changes them. */
function generated(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 2463534242;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

async function sha256(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const finishBody = (status: string, extra: Record<string, unknown> = {}) => ({
  status,
  hasChanges: false,
  resourceAdditions: 0,
  resourceChanges: 0,
  resourceDestructions: 0,
  resourceImports: 0,
  ...extra,
});

/** Follows a 307 of the API to its signed URL (no token) and answers what it serves. */
async function followRedirect(path: string, token?: string): Promise<Response> {
  const res = await exports.default.fetch(
    new Request(`http://localhost/api/v2${path}`, { headers: { Authorization: `Bearer ${token ?? "test-admin-token"}` }, redirect: "manual" }),
  );
  expect(res.status).toBe(307);
  return exports.default.fetch(new Request(res.headers.get("Location")!));
}

describe("artifacts larger than one request used to carry", () => {
  it("stream in and out in pieces: the agent reads back, and the API serves, exactly the bytes uploaded", async () => {
    const { ws, job } = await plannedJob();
    // Past the 16 MiB a single artifact request used to be limited to, and not a whole number of pieces.
    const planJson = generated(17 * MiB + 12_345);
    const put = await agentCall("PUT", jobPath(job, "artifacts/plan-json"), { token: job.token, bytes: planJson });
    expect(put.status).toBe(204);
    const back = await agentCall("GET", jobPath(job, "artifacts/plan-json"), { token: job.token });
    expect(back.status).toBe(200);
    const backBytes = await back.arrayBuffer();
    expect(backBytes.byteLength).toBe(planJson.byteLength);
    expect(await sha256(backBytes)).toBe(await sha256(planJson));

    // A second upload replaces the first whole (nothing of the longer one is left behind).
    const shorter = generated(3 * MiB + 1).reverse();
    expect((await agentCall("PUT", jobPath(job, "artifacts/plan-json"), { token: job.token, bytes: shorter })).status).toBe(204);
    const again = await (await agentCall("GET", jobPath(job, "artifacts/plan-json"), { token: job.token })).arrayBuffer();
    expect(await sha256(again)).toBe(await sha256(shorter));
    expect((await agentCall("PUT", jobPath(job, "artifacts/plan-json"), { token: job.token, bytes: planJson })).status).toBe(204);

    // An artifact of another phase's kind is refused, and a token of no job cannot upload.
    const wrongPhase = await agentCall("PUT", jobPath(job, "artifacts/errored-state"), { token: job.token, bytes: planJson.subarray(0, 10) });
    expect(wrongPhase.status).toBe(409);
    expect((await agentCall("PUT", jobPath(job, "artifacts/plan-json"), { bytes: planJson.subarray(0, 10) })).status).toBe(401);

    const done = await agentCall("POST", jobPath(job, "finish"), { token: job.token, json: finishBody("finished") });
    expect(done.status).toBe(200);
    // The full JSON plan through the API's signed URL, streamed out of the workspace's object.
    const served = await followRedirect(`/runs/${job.run}/plan/json-output`);
    expect(served.status).toBe(200);
    expect(served.headers.get("Content-Type")).toBe("application/json");
    expect(await sha256(await served.arrayBuffer())).toBe(await sha256(planJson));
    expect(ws).toMatch(/^ws-/);
  });

  it("arrive in several requests when the agent splits them: a retried part replaces itself, a gap is refused", async () => {
    const { job } = await plannedJob();
    const artifact = generated(5 * MiB + 777);
    const part = (i: number) => artifact.subarray(i * 2 * MiB, (i + 1) * 2 * MiB);
    const put = (offset: number, bytes: Uint8Array, final: 0 | 1, upload = "upload-0001") =>
      agentCall("PUT", jobPath(job, `artifacts/plan-binary?upload=${upload}&offset=${offset}&final=${final}`), { token: job.token, bytes });
    expect((await put(0, part(0), 0)).status).toBe(204);
    // Nothing is stored until the final part.
    expect((await agentCall("GET", jobPath(job, "artifacts/plan-binary"), { token: job.token })).status).toBe(404);
    // The second part, cut short (a broken request), then sent again whole.
    expect((await put(2 * MiB, part(1).subarray(0, MiB + 5), 0)).status).toBe(204);
    expect((await put(2 * MiB, part(1), 0)).status).toBe(204);
    // A part past the end of what is staged would leave a gap; one off a piece boundary is refused too.
    const gap = await put(6 * MiB, part(2), 1);
    expect(gap.status).toBe(400);
    expect(((await gap.json()) as { errors: { detail: string }[] }).errors[0].detail).toContain("gap");
    expect((await put(4 * MiB + 1, part(2), 1)).status).toBe(400);
    expect((await put(0, part(0), 0, "no")).status).toBe(400);
    expect((await put(4 * MiB, part(2), 1)).status).toBe(204);
    const back = await (await agentCall("GET", jobPath(job, "artifacts/plan-binary"), { token: job.token })).arrayBuffer();
    expect(back.byteLength).toBe(artifact.byteLength);
    expect(await sha256(back)).toBe(await sha256(artifact));
    // The total bound holds across parts.
    const tooFar = await put(LIMITS.agentArtifactBytes, new Uint8Array(10), 1, "upload-0002");
    expect(tooFar.status).toBe(413);
  });
});

describe("an upload the agent left unfinished", () => {
  const staged = (stub: DurableObjectStub, runId: string) =>
    runInDurableObject(
      stub,
      (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM run_artifacts WHERE run_id = ? AND kind LIKE '%@%'", runId).one().n,
    );
  const firstPart = (job: { token: string }, path: string) => agentCall("PUT", path, { token: job.token, bytes: generated(2 * MiB) });

  it("is dropped when its job ends, finished or lost", async () => {
    const { stub, job } = await plannedJob();
    expect((await firstPart(job, jobPath(job, "artifacts/plan-binary?upload=upload-0005&offset=0&final=0"))).status).toBe(204);
    expect(await staged(stub, job.run)).toBeGreaterThan(0);
    expect((await agentCall("POST", jobPath(job, "finish"), { token: job.token, json: finishBody("finished") })).status).toBe(200);
    expect(await staged(stub, job.run)).toBe(0);

    // A job whose agent stops answering: the alarm ends it at its lease, and its staged pieces go too.
    const lost = await plannedJob();
    expect((await firstPart(lost.job, jobPath(lost.job, "artifacts/plan-binary?upload=upload-0006&offset=0&final=0"))).status).toBe(204);
    await runInDurableObject(lost.stub, (_o, state) =>
      state.storage.sql.exec("UPDATE run_jobs SET lease_until = ? WHERE run_id = ?", Date.now() - 1, lost.job.run),
    );
    expect(await runDurableObjectAlarm(lost.stub)).toBe(true);
    expect((await run(lost.stub, lost.job.run)).status).toBe("errored");
    expect(await staged(lost.stub, lost.job.run)).toBe(0);
  });
});

describe("a phase's log", () => {
  it("keeps the agent's bytes up to its bound, then ends with a line saying it was cut; the agent's offsets go on", async () => {
    const { stub, job } = await plannedJob();
    const chunk = new Uint8Array(LIMITS.agentLogChunkBytes).fill(0x61);
    const chunks = Math.ceil(LIMITS.runLogPhaseBytes / chunk.byteLength) + 1;
    let size = 0;
    for (let i = 0; i < chunks; i++) {
      const res = await agentCall("POST", jobPath(job, `logs?offset=${size}`), { token: job.token, bytes: chunk });
      expect(res.status).toBe(200);
      size = ((await res.json()) as { size: number }).size;
    }
    // Every byte the agent sent is acknowledged, so it never resends.
    expect(size).toBe(chunks * chunk.byteLength);
    const line = truncatedLine();
    expect(line).toContain("Log truncated:");
    // STX, then exactly the bound of the agent's bytes, then the line once.
    const tail = value(await stub.readLog({ runId: job.run, phase: "plan", offset: 1 + LIMITS.runLogPhaseBytes - 3, limit: 4096 })).bytes;
    expect(new TextDecoder().decode(tail)).toBe(`aaa${line}`);
    expect((await agentCall("POST", jobPath(job, "finish"), { token: job.token, json: finishBody("finished") })).status).toBe(200);
    const end = value(await stub.readLog({ runId: job.run, phase: "plan", offset: 1 + LIMITS.runLogPhaseBytes, limit: 4096 })).bytes;
    expect(new TextDecoder().decode(end)).toBe(`${line}\u0003`);
  });
});

describe("an apply whose state upload was refused", () => {
  it("keeps the state with the run: a workspace admin downloads it and pushes it back; a caller without admin is refused", async () => {
    const { org, ws, stub, agent, job: planJob } = await plannedJob();
    const planned = await agentCall("POST", jobPath(planJob, "finish"), {
      token: planJob.token,
      json: finishBody("finished", { hasChanges: true, resourceAdditions: 1 }),
    });
    expect(planned.status).toBe(200);
    // Nothing kept yet: 204 for an admin.
    expect((await api("GET", `/runs/${planJob.run}/errored-state`)).status).toBe(204);
    expect((await api("POST", `/runs/${planJob.run}/actions/apply`, { body: {} })).status).toBe(202);
    const applyJob = (await next(agent))!;
    expect(applyJob).toMatchObject({ run: planJob.run, phase: "apply" });

    // Terraform's errored.tfstate: large enough to take several pieces.
    const resources = Array.from({ length: 3000 }, (_, i) => ({
      mode: "managed",
      type: "terraform_data",
      name: `r${i}`,
      instances: [{ attributes: { id: `id-${i}`, input: "x".repeat(1000) } }],
    }));
    const errored = new TextEncoder().encode(
      JSON.stringify({ version: 4, terraform_version: "1.11.4", serial: 7, lineage: "lineage-errored-1", outputs: {}, resources }),
    );
    expect(errored.byteLength).toBeGreaterThan(2 * MiB);
    // Only the apply stores it.
    expect((await agentCall("PUT", jobPath(applyJob, "artifacts/plan-json"), { token: applyJob.token, bytes: errored })).status).toBe(409);
    expect((await agentCall("PUT", jobPath(applyJob, "artifacts/errored-state"), { token: applyJob.token, bytes: errored })).status).toBe(204);
    const failed = await agentCall("POST", jobPath(applyJob, "finish"), {
      token: applyJob.token,
      json: finishBody("errored", { error: "Terraform could not save the new state; it is kept with this run as its errored state" }),
    });
    expect(failed.status).toBe(200);
    expect((await run(stub, planJob.run)).status).toBe("errored");

    // A workspace admin (here the site admin) downloads it, byte for byte.
    const served = await followRedirect(`/runs/${planJob.run}/errored-state`);
    expect(served.status).toBe(200);
    const bytes = new Uint8Array(await served.arrayBuffer());
    expect(await sha256(bytes)).toBe(await sha256(errored));

    // Readers of the run and of its state who are not workspace admins are refused, and learn nothing of it.
    for (const access of ["read", "write"]) {
      const token = await teamToken(org, { workspaces: { [ws]: access } });
      expect((await api("GET", `/runs/${planJob.run}`, { token })).status).toBe(200);
      const refused = await api("GET", `/runs/${planJob.run}/errored-state`, { token });
      expect(refused.status).toBe(404);
      expect(refused.body.errors[0].status).toBe("404");
    }
    // The signed URL names its run and kind: it cannot be turned to another artifact.
    const res = await exports.default.fetch(
      new Request(`http://localhost/api/v2/runs/${planJob.run}/errored-state`, { headers: { Authorization: "Bearer test-admin-token" }, redirect: "manual" }),
    );
    const forged = res.headers.get("Location")!.replace("/errored-state/", "/plan-json/");
    expect((await exports.default.fetch(new Request(forged))).status).toBe(403);

    // Recovery is an ordinary state version under the admin's lock.
    expect((await api("POST", `/workspaces/${ws}/actions/lock`, { body: { reason: "recover" } })).status).toBe(200);
    const md5 = await md5Hex(bytes);
    const created = await api("POST", `/workspaces/${ws}/state-versions`, {
      body: { data: { type: "state-versions", attributes: { serial: 7, md5, lineage: "lineage-errored-1" } } },
    });
    expect(created.status).toBe(201);
    const upload = await exports.default.fetch(new Request(created.body.data.attributes["hosted-state-upload-url"], { method: "PUT", body: bytes }));
    expect(upload.status).toBe(200);
    expect((await api("POST", `/workspaces/${ws}/actions/unlock`, { body: {} })).status).toBe(200);
    const current = await api("GET", `/workspaces/${ws}/current-state-version`);
    expect(current.status).toBe(200);
    expect(current.body.data.attributes.serial).toBe(7);
  });
});

async function md5Hex(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("MD5", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
