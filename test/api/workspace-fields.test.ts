// Workspace settings as clients see them: what a workspace stored before a setting existed shows, and each setting
// added to the field table (src/workspaces/workspace.fields.ts) with the test of its own behaviour.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fieldRows } from "../../src/workspaces/workspace.fields";
import { createOrg } from "../fixtures";
import { api, uniqueName } from "../helpers";

/** Rewrites the workspace's settings in its Durable Object and in its index document, as older code would have left them. */
async function rewriteStoredSettings(id: string, change: (settings: Record<string, unknown>) => void): Promise<void> {
  await runInDurableObject(env.WORKSPACES.getByName(id), async (_instance, state) => {
    const row = state.storage.sql.exec<{ record: string }>("SELECT record FROM workspace WHERE singleton = 1").one();
    const record = JSON.parse(row.record);
    change(record.settings);
    state.storage.sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(record));
  });
  const doc = await env.DB.prepare("SELECT doc FROM workspaces WHERE id = ?").bind(id).first<{ doc: string }>();
  const record = JSON.parse(doc!.doc);
  change(record.settings);
  await env.DB.prepare("UPDATE workspaces SET doc = ? WHERE id = ?").bind(JSON.stringify(record), id).run();
}

describe("a workspace stored before its settings existed", () => {
  for (const edition of ["self-hosted", "hosted"] as const) {
    it(`shows each missing setting's default when read and after an update (${edition})`, async () => {
      const org = await createOrg();
      const created = (
        await api("POST", `/organizations/${org}/workspaces`, { edition, body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") } } } })
      ).body.data;
      // Every setting whose default is not computed per request (the engine version has been stored since the first record).
      const missing = fieldRows.filter(([, row]) => !("upgrade" in row)).map(([name]) => name);
      await rewriteStoredSettings(created.id, (settings) => {
        for (const name of missing) delete settings[name];
      });

      const read = await api("GET", `/workspaces/${created.id}`, { edition });
      expect(read.status).toBe(200);
      expect(read.body.data.attributes).toEqual(created.attributes);

      const updated = await api("PATCH", `/workspaces/${created.id}`, { edition, body: { data: { type: "workspaces", attributes: { description: "kept" } } } });
      expect(updated.status).toBe(200);
      expect({ ...updated.body.data.attributes, description: null, "updated-at": null }).toEqual({ ...created.attributes, "updated-at": null });
      const again = await api("GET", `/workspaces/${created.id}`, { edition });
      expect(again.body.data.attributes).toEqual(updated.body.data.attributes);
    });
  }
});

describe("hyok-enabled (hosted edition only)", () => {
  const hosted = { edition: "hosted" as const };
  const create = (org: string, attributes: Record<string, unknown>, edition: "hosted" | "self-hosted" = "hosted") =>
    api("POST", `/organizations/${org}/workspaces`, { edition, body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), ...attributes } } } });
  const patch = (id: string, attributes: Record<string, unknown>) =>
    api("PATCH", `/workspaces/${id}`, { ...hosted, body: { data: { type: "workspaces", attributes } } });

  it("is false on a new workspace, whether omitted or sent false, and stays false on update (go-tfe's hyok tests)", async () => {
    const org = await createOrg();
    const omitted = await create(org, {});
    expect(omitted.status).toBe(201);
    expect(omitted.body.data.attributes["hyok-enabled"]).toBe(false);
    const sent = await create(org, { "hyok-enabled": false });
    expect(sent.status).toBe(201);
    expect(sent.body.data.attributes["hyok-enabled"]).toBe(false);
    const updated = await patch(sent.body.data.id, { "hyok-enabled": false });
    expect(updated.status).toBe(200);
    expect(updated.body.data.attributes["hyok-enabled"]).toBe(false);
    expect((await api("GET", `/workspaces/${sent.body.data.id}`, hosted)).body.data.attributes["hyok-enabled"]).toBe(false);
  });

  it("refuses true (no organisation has a hold-your-own-key configuration here) and changes nothing", async () => {
    const org = await createOrg();
    const name = uniqueName("ws");
    const refused = await create(org, { name, "hyok-enabled": true });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ status: "422", source: { pointer: "/data/attributes/hyok-enabled" } });
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`, hosted)).status).toBe(404);

    const w = (await create(org, {})).body.data;
    const again = await patch(w.id, { "hyok-enabled": true, description: "not applied" });
    expect(again.status).toBe(422);
    expect(again.body.errors[0].source.pointer).toBe("/data/attributes/hyok-enabled");
    const after = (await api("GET", `/workspaces/${w.id}`, hosted)).body.data.attributes;
    expect(after["hyok-enabled"]).toBe(false);
    expect(after.description).toBeNull();
    expect((await patch(w.id, { "hyok-enabled": "yes" })).status).toBe(422);
  });

  it("is neither shown nor taken by the self-hosted edition", async () => {
    const org = await createOrg();
    const res = await create(org, { "hyok-enabled": true }, "self-hosted");
    expect(res.status).toBe(201);
    expect("hyok-enabled" in res.body.data.attributes).toBe(false);
    expect("hyok-enabled" in (await api("GET", `/workspaces/${res.body.data.id}`)).body.data.attributes).toBe(false);
  });
});
