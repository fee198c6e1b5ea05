// Workspace settings as clients see them: what a workspace stored before a setting existed shows, and each setting
// added to the field table (src/workspaces/workspace.fields.ts) with the test of its own behaviour.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fieldRows } from "../../src/workspaces/workspace.fields";
import { api, createOrg, uniqueName } from "../helpers";

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
