// The Durable Object's schema migrations, run on a store written by the previous code (its constructor runs them
// on start; the tests call them in the object).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { createOrg, createWorkspace } from "../fixtures";
import { api, expectConsistent, indexSettled } from "../helpers";

describe("the Durable Object's schema 6", () => {
  it("drops the organisation's name from a record and outbox written by the previous code; nothing else changes", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    const current = ((await stub.get()) as { value: WorkspaceRecord }).value;
    // The record as the previous code stored it (schema 5): with its organisation's name, and a pending index write.
    const old = { ...current, organization: org };
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(old));
      sql.exec("INSERT INTO outbox (version, op, record) VALUES (?, 'upsert', ?)", old.version, JSON.stringify(old));
      sql.exec("UPDATE meta SET value = '5' WHERE key = 'schema_version'");
    });
    await env.DB.prepare("UPDATE workspaces SET doc = ? WHERE id = ?").bind(JSON.stringify(old), ws.id).run();
    // Readers ignore the name even before the object migrates (the index doc of a store not yet migrated).
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships.organization.data.id).toBe(org);

    await runInDurableObject(stub, (instance, state) => {
      (instance as unknown as { migrate(): void }).migrate();
      const sql = state.storage.sql;
      const stored = JSON.parse(sql.exec<{ record: string }>("SELECT record FROM workspace").one().record) as Record<string, unknown>;
      expect(stored).toEqual(current);
      for (const row of sql.exec<{ record: string }>("SELECT record FROM outbox").toArray()) expect(JSON.parse(row.record)).not.toHaveProperty("organization");
      // Schema 6 or any later one (each migrates on from there).
      expect(Number(sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").one().value)).toBeGreaterThanOrEqual(6);
    });
    await runDurableObjectAlarm(stub);
    expect(((await stub.get()) as { value: WorkspaceRecord }).value.version).toBe(current.version);
    const shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data.relationships.organization.data.id).toBe(org);
    // Writes after the migration index records without the name.
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(200);
    await indexSettled(ws.id);
    const doc = await env.DB.prepare("SELECT doc FROM workspaces WHERE id = ?").bind(ws.id).first<{ doc: string }>();
    expect(JSON.parse(doc!.doc)).not.toHaveProperty("organization");
    await expectConsistent();
  });
});
