// What the workspace object stores at rest: a state's resources and outputs, its JSON state, a run's logs and plans and
// a configuration archive are sealed (src/platform/seal.ts), so the SQLite file holds none of their plaintext, while
// every reader still gets the bytes it sent. A value that does not open fails the request; it never reads as empty.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { deriveSealer, useSealer } from "../../src/platform/seal";
import { api } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { claim, finish, setup } from "../do/runs.helpers";
import { stateDoc } from "../state-docs";

const ATTRIBUTE_SECRET = "attr-secret-5f3a9c1e";
const OUTPUT_SECRET = "output-secret-7b2d4e60";
const PASSWORD = { mode: "managed", type: "random_password", name: "db", provider: 'provider["registry.terraform.io/hashicorp/random"]' };
const STATE = stateDoc({
  terraformVersion: "1.11.4",
  lineage: "lineage-sealed",
  outputs: { token: { value: OUTPUT_SECRET, type: "string" } },
  resources: [{ ...PASSWORD, instances: [{ schema_version: 3, attributes: { id: "none", result: ATTRIBUTE_SECRET } }] }],
});
const JSON_STATE = JSON.stringify({
  format_version: "1.0",
  terraform_version: "1.11.4",
  values: {
    outputs: { token: { sensitive: false, value: OUTPUT_SECRET, type: "string" } },
    root_module: { resources: [{ address: "random_password.db", mode: "managed", type: "random_password", name: "db", values: { result: ATTRIBUTE_SECRET } }] },
  },
});

const raw = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url, init));
const encoder = new TextEncoder();

/** Every value of every row of the object's tables, as bytes: what a copy of its SQLite file holds. */
async function storedBytes(wsId: string): Promise<Uint8Array[]> {
  return runInDurableObject(env.WORKSPACES.getByName(wsId), (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .toArray();
    const out: Uint8Array[] = [];
    for (const { name } of tables) {
      for (const row of sql.exec(`SELECT * FROM "${name}"`)) {
        for (const v of Object.values(row)) {
          if (v instanceof ArrayBuffer) out.push(new Uint8Array(v.slice(0)));
          else if (typeof v === "string") out.push(encoder.encode(v));
        }
      }
    }
    return out;
  });
}

function contains(haystack: Uint8Array, needle: string): boolean {
  const n = encoder.encode(needle);
  outer: for (let i = 0; i + n.length <= haystack.length; i++) {
    for (let j = 0; j < n.length; j++) if (haystack[i + j] !== n[j]) continue outer;
    return true;
  }
  return false;
}

const holds = async (wsId: string, secret: string) => (await storedBytes(wsId)).some((b) => contains(b, secret));

async function workspaceWithState() {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  const res = await api("POST", `/workspaces/${ws.id}/state-versions`, {
    body: {
      data: {
        type: "state-versions",
        attributes: { serial: 1, lineage: "lineage-sealed", md5: SparkMD5.hash(STATE), state: btoa(STATE), "json-state": btoa(JSON_STATE) },
      },
    },
  });
  expect(res.status).toBe(201);
  return { ws, sv: res.body.data };
}

const outputValues = async (svId: string) =>
  (await api("GET", `/state-versions/${svId}/outputs`)).body.data.map((o: { attributes: Record<string, unknown> }) => [o.attributes.name, o.attributes.value]);

describe("sealed at rest", () => {
  it("a state version: no plaintext of its attributes or outputs in the store, the API serves them unchanged", async () => {
    const { ws, sv } = await workspaceWithState();
    expect(await holds(ws.id, ATTRIBUTE_SECRET)).toBe(false);
    expect(await holds(ws.id, OUTPUT_SECRET)).toBe(false);
    // Metadata stays readable: the queries on serial, lineage and md5 need it.
    expect(await holds(ws.id, "lineage-sealed")).toBe(true);

    expect(await outputValues(sv.id)).toEqual([["token", OUTPUT_SECRET]]);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(STATE);
    expect(await (await raw(sv.attributes["hosted-json-state-download-url"])).text()).toBe(JSON_STATE);
    const current = (await api("GET", `/workspaces/${ws.id}/current-state-version`)).body.data;
    expect(current.attributes.resources).toEqual([expect.objectContaining({ name: "db", type: "random_password", count: 1 })]);
  });

  it("a rollback copies the sealed state, and it still reads", async () => {
    const { ws, sv } = await workspaceWithState();
    const next = JSON.stringify({ ...JSON.parse(STATE), serial: 2, outputs: {}, resources: [] });
    const created = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "state-versions", attributes: { serial: 2, lineage: "lineage-sealed", md5: SparkMD5.hash(next), state: btoa(next) } } },
    });
    expect(created.status).toBe(201);
    const back = await api("PATCH", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "state-versions", relationships: { "rollback-state-version": { data: { type: "state-versions", id: sv.id } } } } },
    });
    expect(back.status).toBe(201);
    expect(await outputValues(back.body.data.id)).toEqual([["token", OUTPUT_SECRET]]);
    expect(await (await raw(back.body.data.attributes["hosted-state-download-url"])).text()).toBe(STATE);
    expect(await holds(ws.id, OUTPUT_SECRET)).toBe(false);
  });

  it("a run's log and JSON plans: sealed, and read back byte for byte", async () => {
    const { id, stub } = await setup();
    const run = await api("POST", "/runs", {
      body: { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id } } } } },
    });
    const runId = run.body.data.id as string;
    const job = await claim(stub, runId, "plan");
    const line = encoder.encode(`random_password.db: result = "${ATTRIBUTE_SECRET}"\n`);
    expect((await stub.appendLog({ runId, phase: "plan", claimId: job.claimId, offset: 0, bytes: line, now: new Date().toISOString() })).ok).toBe(true);
    const plan = JSON.stringify({ format_version: "1.2", planned_values: { outputs: { token: { value: OUTPUT_SECRET } } } });
    expect((await stub.putArtifact({ runId, claimId: job.claimId, kind: "plan-json", bytes: encoder.encode(plan) })).ok).toBe(true);
    await finish(stub, job, "finished", { hasChanges: true, resourceAdditions: 1 });

    expect(await holds(id, ATTRIBUTE_SECRET)).toBe(false);
    expect(await holds(id, OUTPUT_SECRET)).toBe(false);
    const logUrl = (await api("GET", `/runs/${runId}/plan`)).body.data.attributes["log-read-url"] as string;
    const log = await (await raw(logUrl)).text();
    expect(log).toBe(`\u0002${new TextDecoder().decode(line)}\u0003`);
    const location = (
      await raw(`http://localhost/api/v2/runs/${runId}/plan/json-output`, { headers: { Authorization: "Bearer test-admin-token" }, redirect: "manual" })
    ).headers.get("Location")!;
    expect(await (await raw(location)).text()).toBe(plan);
  });

  it("a configuration archive is sealed and downloads byte for byte", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cv = (
      await api("POST", `/workspaces/${ws.id}/configuration-versions`, {
        body: { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } },
      })
    ).body.data;
    const body = encoder.encode(`variable "x" { default = "${ATTRIBUTE_SECRET}" }\n`);
    const put = await raw(cv.attributes["upload-url"], { method: "PUT", body, headers: { "Content-Type": "application/octet-stream" } });
    expect(put.status).toBe(200);
    expect(await holds(ws.id, ATTRIBUTE_SECRET)).toBe(false);
    const location = (
      await raw(`http://localhost/api/v2/configuration-versions/${cv.id}/download`, {
        redirect: "manual",
        headers: { Authorization: "Bearer test-admin-token" },
      })
    ).headers.get("Location")!;
    expect(new Uint8Array(await (await raw(location)).arrayBuffer())).toEqual(body);
  });
});

describe("a sealed value that does not open fails closed", () => {
  /** Rewrites the stored bytes of the version's chunks and `parsed` with `change` (as a damaged or foreign store). */
  const damage = (wsId: string, change: (b: Uint8Array) => void) =>
    runInDurableObject(env.WORKSPACES.getByName(wsId), (_instance, state) => {
      const sql = state.storage.sql;
      for (const row of sql.exec<{ sv_id: string; kind: string; seq: number; data: ArrayBuffer }>("SELECT * FROM state_chunks").toArray()) {
        const bytes = new Uint8Array(row.data.slice(0));
        change(bytes);
        sql.exec("UPDATE state_chunks SET data = ? WHERE sv_id = ? AND kind = ? AND seq = ?", bytes, row.sv_id, row.kind, row.seq);
      }
      for (const row of sql.exec<{ id: string; parsed: ArrayBuffer }>("SELECT id, parsed FROM state_versions").toArray()) {
        const bytes = new Uint8Array(row.parsed.slice(0));
        change(bytes);
        sql.exec("UPDATE state_versions SET parsed = ? WHERE id = ?", bytes, row.id);
      }
    });

  for (const [what, change] of [
    ["a key this deployment does not have", (b: Uint8Array) => b.set([0xde, 0xad, 0xbe, 0xef], 0)],
    ["an altered ciphertext", (b: Uint8Array) => (b[b.length - 1] ^= 0x01)],
  ] as const) {
    it(`${what}: the state, its outputs and its download are errors, never empty`, async () => {
      const { ws, sv } = await workspaceWithState();
      await damage(ws.id, change);
      const shown = await api("GET", `/state-versions/${sv.id}`);
      expect(shown.status).toBe(500);
      expect((await api("GET", `/state-versions/${sv.id}/outputs`)).status).toBe(500);
      expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).status).toBe(500);
      expect((await raw(sv.attributes["hosted-state-download-url"])).status).toBe(500);
    });
  }
});

describe("stores written in clear, and a rotation of the secret", () => {
  it("rows stored in clear by earlier code read as they are, and the next start seals them", async () => {
    const { ws, sv } = await workspaceWithState();
    const stub = env.WORKSPACES.getByName(ws.id);
    // As the previous version stored it: chunks and `parsed` in clear, no `sealed_with` mark.
    await runInDurableObject(stub, async (instance, state) => {
      const sql = state.storage.sql;
      const parsed = (instance as unknown as { states: { get(id: string): { value: { stateVersion: { parsed: unknown } } } } }).states.get(sv.id).value
        .stateVersion.parsed;
      sql.exec("DELETE FROM state_chunks");
      sql.exec("INSERT INTO state_chunks (sv_id, kind, seq, data, sealed) VALUES (?, 'state', 0, ?, 0)", sv.id, encoder.encode(STATE));
      sql.exec("INSERT INTO state_chunks (sv_id, kind, seq, data, sealed) VALUES (?, 'json', 0, ?, 0)", sv.id, encoder.encode(JSON_STATE));
      sql.exec("UPDATE state_versions SET parsed = ? WHERE id = ?", JSON.stringify(parsed), sv.id);
      sql.exec("DELETE FROM meta WHERE key = 'sealed_with'");
    });
    expect(await holds(ws.id, OUTPUT_SECRET)).toBe(true);
    expect(await outputValues(sv.id)).toEqual([["token", OUTPUT_SECRET]]);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(STATE);

    await runInDurableObject(stub, (instance) => (instance as unknown as { migrate(): void }).migrate());
    expect(await holds(ws.id, OUTPUT_SECRET)).toBe(false);
    expect(await holds(ws.id, ATTRIBUTE_SECRET)).toBe(false);
    expect(await outputValues(sv.id)).toEqual([["token", OUTPUT_SECRET]]);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(STATE);
    expect(await (await raw(sv.attributes["hosted-json-state-download-url"])).text()).toBe(JSON_STATE);
  });

  it("a new secret with the old one as the previous key: everything still reads, and the start reseals under the new one", async () => {
    const { ws, sv } = await workspaceWithState();
    const stub = env.WORKSPACES.getByName(ws.id);
    const keyIds = () =>
      runInDurableObject(stub, (_instance, state) => {
        const hex = (b: ArrayBuffer) => Array.from(new Uint8Array(b.slice(0, 4)), (x) => x.toString(16).padStart(2, "0")).join("");
        const sql = state.storage.sql;
        return [
          ...sql
            .exec<{ data: ArrayBuffer }>("SELECT data FROM state_chunks")
            .toArray()
            .map((r) => hex(r.data)),
          ...sql
            .exec<{ parsed: ArrayBuffer }>("SELECT parsed FROM state_versions")
            .toArray()
            .map((r) => hex(r.parsed)),
        ];
      });
    const before = new Set(await keyIds());
    expect(before.size).toBe(1);
    const rotated = await runInDurableObject(stub, async (_instance, state) => {
      const sealer = await deriveSealer(
        { STATE_ENCRYPTION_KEY: "a-new-secret", STATE_ENCRYPTION_KEY_PREVIOUS: "test-state-encryption-key" },
        state.id.toString(),
      );
      useSealer(state.storage.sql, sealer);
      return sealer.current!.id;
    });
    // Before the reseal: the previous key still opens every row.
    expect(await outputValues(sv.id)).toEqual([["token", OUTPUT_SECRET]]);
    await runInDurableObject(stub, (instance) => (instance as unknown as { migrate(): void }).migrate());
    expect(new Set(await keyIds())).toEqual(new Set([rotated]));
    expect([...before][0]).not.toBe(rotated);
    // Without the previous key now: the resealed rows open under the new one alone.
    await runInDurableObject(stub, async (_instance, state) => {
      useSealer(state.storage.sql, await deriveSealer({ STATE_ENCRYPTION_KEY: "a-new-secret" }, state.id.toString()));
    });
    expect(await outputValues(sv.id)).toEqual([["token", OUTPUT_SECRET]]);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(STATE);
    expect(await holds(ws.id, OUTPUT_SECRET)).toBe(false);
  });
});
