// A raw state the service cannot read (OpenTofu's encrypted envelope, or anything that is not a Terraform state) must
// never pass for an empty one: resources and outputs then come from the client's JSON state and outputs, and without
// them the workspace counts as managing resources (safe delete refuses it). The state itself is kept byte for byte.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { tofuEnvelope } from "../state-docs";
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { asStoreOfSchema } from "../old-store";

/** What OpenTofu 1.10 uploads as the raw state with `encryption { state { method = aes_gcm } }` (pbkdf2 key provider). */
const ENVELOPE = tofuEnvelope({
  serial: 3,
  lineage: "6a1c7f4e-1b2d-4c3e-9f8a-0d1e2f3a4b5c",
  key: "eyJzYWx0IjoiQUFBQSIsIml0ZXJhdGlvbnMiOjYwMDAwMH0=",
  data: "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJ",
});

const provider = (p: string) => `registry.opentofu.org/hashicorp/${p}`;
/** The plaintext `json-state` (`tofu show -json`) sent beside it: two null_resource instances and one in a child module. */
const JSON_STATE = JSON.stringify({
  format_version: "1.0",
  terraform_version: "1.10.5",
  values: {
    outputs: { greeting: { sensitive: false, value: "hello", type: "string" } },
    root_module: {
      resources: [
        { address: "null_resource.a[0]", mode: "managed", type: "null_resource", name: "a", index: 0, provider_name: provider("null"), values: {} },
        { address: "null_resource.a[1]", mode: "managed", type: "null_resource", name: "a", index: 1, provider_name: provider("null"), values: {} },
        { address: "data.null_data_source.d", mode: "data", type: "null_data_source", name: "d", provider_name: provider("null"), values: {} },
      ],
      child_modules: [
        {
          address: "module.pets",
          resources: [
            {
              address: 'module.pets.random_pet.p["x"]',
              mode: "managed",
              type: "random_pet",
              name: "p",
              index: "x",
              provider_name: provider("random"),
              values: {},
            },
          ],
        },
      ],
    },
  },
});
/** `json-state-outputs`: the `values.outputs` map, sensitive values included (the service hides them). */
const JSON_OUTPUTS = JSON.stringify({
  greeting: { sensitive: false, value: "hello", type: "string" },
  secret: { sensitive: true, value: "s3cr3t", type: "string" },
  tags: { sensitive: false, value: ["a", "b"], type: ["list", "string"] },
});
/** The JSON state of an empty state: `tofu show -json` leaves `values` out. */
const EMPTY_JSON_STATE = JSON.stringify({ format_version: "1.0" });

const md5 = (s: string) => SparkMD5.hash(s);
const b64 = (s: string) => btoa(s);
const raw = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url, init));
const put = (url: string, body: string) => raw(url, { method: "PUT", body, headers: { "Content-Type": "application/octet-stream" } });
const svBody = (attrs: Record<string, unknown>) => ({ data: { type: "state-versions", attributes: { serial: 3, lineage: "6a1c7f4e", ...attrs } } });

async function lockedWorkspace() {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  return { org, ws };
}
const createSv = (wsId: string, attrs: Record<string, unknown>) => api("POST", `/workspaces/${wsId}/state-versions`, { body: svBody(attrs) });
const workspaceAttrs = async (wsId: string) => (await api("GET", `/workspaces/${wsId}`)).body.data.attributes;
const currentSv = async (wsId: string) => (await api("GET", `/workspaces/${wsId}/current-state-version`)).body.data;
const outputsOf = async (svId: string) =>
  (await api("GET", `/state-versions/${svId}/outputs`)).body.data.map(
    (o: { attributes: Record<string, unknown> }) => [o.attributes.name, o.attributes.sensitive, o.attributes["output-type"], o.attributes.value] as const,
  );
const UNREADABLE = "workspace cannot be safely deleted because its current state could not be read";

describe("a raw state the service cannot read", () => {
  it("without a JSON state: resources unknown, safe delete refused (409, both routes), the state kept byte for byte", async () => {
    const { org, ws } = await lockedWorkspace();
    const created = await createSv(ws.id, { md5: md5(ENVELOPE), state: b64(ENVELOPE) });
    expect(created.status).toBe(201);
    const sv = created.body.data;
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    for (const path of [`/workspaces/${ws.id}/actions/safe-delete`, `/organizations/${org}/workspaces/${ws.attributes.name}/actions/safe-delete`]) {
      const res = await api("POST", path);
      expect(res.status).toBe(409);
      expect(res.body.errors[0]).toMatchObject({ status: "409", title: "conflict" });
      expect(res.body.errors[0].detail).toContain(UNREADABLE);
      // go-tfe would read a text with "locked" or "being processed" in it as another error.
      expect(res.body.errors[0].detail).not.toMatch(/locked|being processed/);
    }
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(200);
    // Stored and current as any state: downloadable byte for byte; what is known of it says it is not processed.
    expect((await currentSv(ws.id)).attributes).toMatchObject({
      status: "finalized",
      serial: 3,
      size: ENVELOPE.length,
      "resources-processed": false,
      resources: [],
    });
    expect(sv.attributes["resources-processed"]).toBe(false);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(ENVELOPE);
    expect((await workspaceAttrs(ws.id))["resource-count"]).toBe(0);
    expect((await api("GET", `/state-versions/${sv.id}/outputs`)).body.data).toEqual([]);
  });

  it("anything that is not a Terraform state counts as unreadable too (not JSON; JSON without version and resources)", async () => {
    for (const state of ["this is not json", JSON.stringify({ serial: 1, lineage: "x" }), JSON.stringify([1, 2])]) {
      const { ws } = await lockedWorkspace();
      const sv = (await createSv(ws.id, { md5: md5(state), state: b64(state) })).body.data;
      expect(sv.attributes["resources-processed"]).toBe(false);
      await api("POST", `/workspaces/${ws.id}/actions/unlock`);
      expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(409);
    }
  });

  it("with json-state and json-state-outputs inline: resources, outputs and version come from them", async () => {
    const { ws } = await lockedWorkspace();
    const created = await createSv(ws.id, {
      md5: md5(ENVELOPE),
      state: b64(ENVELOPE),
      "json-state": b64(JSON_STATE),
      "json-state-outputs": b64(JSON_OUTPUTS),
    });
    expect(created.status).toBe(201);
    const sv = created.body.data;
    expect(sv.attributes).toMatchObject({ "resources-processed": true, "terraform-version": "1.10.5" });
    expect(sv.attributes.resources).toEqual([
      { name: "a", type: "null_resource", count: 2, module: "root", provider: `provider["${provider("null")}"]` },
      { name: "p", type: "random_pet", count: 1, module: "module.pets", provider: `provider["${provider("random")}"]` },
    ]);
    expect(await outputsOf(sv.id)).toEqual([
      ["greeting", false, "string", "hello"],
      ["secret", true, "string", "s3cr3t"],
      ["tags", false, '["list","string"]', ["a", "b"]],
    ]);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const attrs = await workspaceAttrs(ws.id);
    expect(attrs["resource-count"]).toBe(3);
    const resources = await api("GET", `/workspaces/${ws.id}/resources`);
    expect(resources.body.data.map((r: { attributes: { address: string } }) => r.attributes.address)).toEqual([
      "null_resource.a[0]",
      "null_resource.a[1]",
      'pets.random_pet.p["x"]',
    ]);
    const current = await api("GET", `/workspaces/${ws.id}?include=outputs`);
    expect(current.body.data.relationships.outputs.data).toHaveLength(3);
    const del = await api("POST", `/workspaces/${ws.id}/actions/safe-delete`);
    expect(del.status).toBe(409);
    expect(del.body.errors[0].detail).toBe("workspace cannot be safely deleted because it is still managing resources");
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(ENVELOPE);
  });

  it("json-state-outputs alone: the outputs are known, the resources still are not", async () => {
    const { ws } = await lockedWorkspace();
    const sv = (await createSv(ws.id, { md5: md5(ENVELOPE), state: b64(ENVELOPE), "json-state-outputs": b64(JSON_OUTPUTS) })).body.data;
    expect(sv.attributes["resources-processed"]).toBe(false);
    expect((await outputsOf(sv.id)).map((o: readonly unknown[]) => o[0])).toEqual(["greeting", "secret", "tags"]);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(409);
  });

  it("a JSON state that shows no managed resources lets safe delete through (204)", async () => {
    const { ws } = await lockedWorkspace();
    const sv = (await createSv(ws.id, { md5: md5(ENVELOPE), state: b64(ENVELOPE), "json-state": b64(EMPTY_JSON_STATE) })).body.data;
    expect(sv.attributes).toMatchObject({ "resources-processed": true, resources: [] });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await workspaceAttrs(ws.id))["resource-count"]).toBe(0);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
  });

  // The cloud backend's sequence: json-state-outputs in the create, then the raw state and the JSON state through their URLs.
  for (const order of [
    ["state", "json"],
    ["json", "state"],
  ] as const) {
    it(`through the upload URLs, ${order.join(" then ")}: the JSON state decides once both are in`, async () => {
      const { ws } = await lockedWorkspace();
      const created = await createSv(ws.id, { md5: md5(ENVELOPE), "json-state-outputs": b64(JSON_OUTPUTS) });
      expect(created.body.data.attributes.status).toBe("pending");
      const urls = { state: created.body.data.attributes["hosted-state-upload-url"], json: created.body.data.attributes["hosted-json-state-upload-url"] };
      const svId = created.body.data.id;
      expect((await put(urls[order[0]], order[0] === "state" ? ENVELOPE : JSON_STATE)).status).toBe(200);
      if (order[0] === "state") {
        // The raw state alone: current, but its resources are not known yet.
        expect((await currentSv(ws.id)).attributes["resources-processed"]).toBe(false);
        expect((await workspaceAttrs(ws.id))["resource-count"]).toBe(0);
      }
      expect((await put(urls[order[1]], order[1] === "state" ? ENVELOPE : JSON_STATE)).status).toBe(200);
      const sv = await currentSv(ws.id);
      expect(sv.id).toBe(svId);
      expect(sv.attributes).toMatchObject({ status: "finalized", "resources-processed": true, "terraform-version": "1.10.5" });
      expect((await workspaceAttrs(ws.id))["resource-count"]).toBe(3);
      expect((await outputsOf(svId)).map((o: readonly unknown[]) => o[0])).toEqual(["greeting", "secret", "tags"]);
      expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(ENVELOPE);
      expect(await (await raw(sv.attributes["hosted-json-state-download-url"])).text()).toBe(JSON_STATE);
      expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
      expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(409);
    });
  }

  it("a readable raw state still wins over the JSON state and outputs sent with it", async () => {
    const { ws } = await lockedWorkspace();
    const state = JSON.stringify({ version: 4, terraform_version: "1.9.0", serial: 1, lineage: "l", outputs: {}, resources: [] });
    const sv = (
      await createSv(ws.id, { serial: 1, md5: md5(state), state: b64(state), "json-state": b64(JSON_STATE), "json-state-outputs": b64(JSON_OUTPUTS) })
    ).body.data;
    expect(sv.attributes).toMatchObject({ "resources-processed": true, resources: [], "terraform-version": "1.9.0" });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(204);
  });
});

describe("state versions stored before unreadable states were told apart", () => {
  /** Rewinds the DO to schema 6 with the version read as the previous parser read it: an empty state. */
  async function asStoredBefore(wsId: string, svId: string) {
    const stub = env.WORKSPACES.getByName(wsId);
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const empty = { terraformVersion: null, resources: [], resourceCount: 0, outputs: [], providers: {}, modules: {} };
      sql.exec("UPDATE state_versions SET parsed = ? WHERE id = ?", JSON.stringify(empty), svId);
      sql.exec("ALTER TABLE state_versions DROP COLUMN rollback_of");
      asStoreOfSchema(sql, 6);
    });
    return stub;
  }
  const migrate = (stub: DurableObjectStub) => runInDurableObject(stub, (instance) => (instance as unknown as { migrate(): void }).migrate());

  it("an unreadable one is read again on migration: unknown, and safe delete refuses it", async () => {
    const { ws } = await lockedWorkspace();
    const sv = (await createSv(ws.id, { md5: md5(ENVELOPE), state: b64(ENVELOPE) })).body.data;
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const stub = await asStoredBefore(ws.id, sv.id);
    expect((await currentSv(ws.id)).attributes["resources-processed"]).toBe(true); // what the previous code showed
    await migrate(stub);
    expect((await currentSv(ws.id)).attributes["resources-processed"]).toBe(false);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(409);
    expect(await (await raw(sv.attributes["hosted-state-download-url"])).text()).toBe(ENVELOPE);
  });

  it("one with a JSON state stored beside it gets that state's resources, and the index follows", async () => {
    const { org, ws } = await lockedWorkspace();
    const sv = (await createSv(ws.id, { md5: md5(ENVELOPE), state: b64(ENVELOPE), "json-state": b64(JSON_STATE) })).body.data;
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const stub = await asStoredBefore(ws.id, sv.id);
    await runInDurableObject(stub, (_instance, state) => {
      const row = state.storage.sql.exec<{ record: string }>("SELECT record FROM workspace WHERE singleton = 1").one();
      state.storage.sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify({ ...JSON.parse(row.record), resourceCount: 0 }));
    });
    await migrate(stub);
    await runDurableObjectAlarm(stub);
    expect((await workspaceAttrs(ws.id))["resource-count"]).toBe(3);
    expect((await currentSv(ws.id)).attributes).toMatchObject({ "resources-processed": true, "terraform-version": "1.10.5" });
    const listed = await api("GET", `/organizations/${org}/workspaces?search%5Bname%5D=${ws.attributes.name}`);
    expect(listed.body.data[0].attributes["resource-count"]).toBe(3);
  });

  it("a readable empty state stays empty and safe delete still passes", async () => {
    const { ws } = await lockedWorkspace();
    const state = JSON.stringify({ version: 4, terraform_version: "1.9.0", serial: 1, lineage: "l", outputs: {}, resources: [] });
    const sv = (await createSv(ws.id, { serial: 1, md5: md5(state), state: b64(state) })).body.data;
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    await migrate(await asStoredBefore(ws.id, sv.id));
    expect((await currentSv(ws.id)).attributes["resources-processed"]).toBe(true);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(204);
  });
});
