// The Durable Object's schema migrations, run on a store written by the previous code (its constructor runs them
// on start; the tests call them in the object).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/audit/audit.rules";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { createOrg, createWorkspace } from "../fixtures";
import { api, expectConsistent, indexSettled } from "../helpers";
import { asStoreOfSchema } from "../old-store";

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
      asStoreOfSchema(sql, 5, [{ op: "upsert", record: old }]);
    });
    await env.DB.prepare("UPDATE workspaces SET doc = ? WHERE id = ?").bind(JSON.stringify(old), ws.id).run();
    // Readers ignore the name even before the object migrates (the index doc of a store not yet migrated).
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships.organization.data.id).toBe(org);

    await runInDurableObject(stub, (instance, state) => {
      (instance as unknown as { migrate(): void }).migrate();
      const sql = state.storage.sql;
      const stored = JSON.parse(sql.exec<{ record: string }>("SELECT record FROM workspace").one().record) as Record<string, unknown>;
      expect(stored).toEqual(current);
      // The pending index write is the record's row now (schema 14), and it is the record without the name.
      expect(sql.exec<{ outbox: string }>("SELECT outbox FROM workspace").one().outbox).toBe("upsert");
      // Schema 6 or any later one (each migrates on from there).
      expect(sql.exec<{ schema: number }>("SELECT schema FROM workspace").one().schema).toBeGreaterThanOrEqual(6);
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

describe("the Durable Object's schema 14", () => {
  it("moves a pending outbox entry and its audit events into the record's row; the alarm writes both to D1", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    await runDurableObjectAlarm(stub); // whatever the create armed
    const current = ((await stub.get()) as { value: WorkspaceRecord }).value;
    // The previous code's store: a committed change (a new description) whose index write and audit event D1 lacks.
    const next = { ...current, version: current.version + 1, settings: { ...current.settings, description: "folded" } };
    const event: AuditEvent = {
      id: crypto.randomUUID(),
      organizationId: org,
      timestamp: new Date().toISOString(),
      auth: { accessorId: "user-x", description: "x", type: "Client", impersonatorId: null },
      requestId: crypto.randomUUID(),
      resource: { id: ws.id, type: "workspace", action: "update", meta: null },
    };
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(next));
      asStoreOfSchema(
        state.storage.sql,
        13,
        [
          { op: "upsert", record: current },
          { op: "upsert", record: next },
        ],
        [event],
      );
    });
    await runInDurableObject(stub, (instance, state) => {
      (instance as unknown as { migrate(): void }).migrate();
      const sql = state.storage.sql;
      const row = sql.exec<{ outbox: string; audit: string; schema: number }>("SELECT outbox, audit, schema FROM workspace").one();
      expect(row.outbox).toBe("upsert");
      expect(JSON.parse(row.audit)).toEqual([event]);
      expect(row.schema).toBe(14);
      const tables = sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('outbox', 'audit_outbox')").toArray();
      expect(tables).toEqual([]);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const doc = await env.DB.prepare("SELECT version, doc FROM workspaces WHERE id = ?").bind(ws.id).first<{ version: number; doc: string }>();
    expect(doc!.version).toBe(next.version);
    expect(JSON.parse(doc!.doc).settings.description).toBe("folded");
    const trail = await env.DB.prepare("SELECT count(*) AS n FROM audit_events WHERE id = ?").bind(event.id).first<{ n: number }>();
    expect(trail!.n).toBe(1);
    const after = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec<{ outbox: string | null; audit: string | null }>("SELECT outbox, audit FROM workspace").one(),
    );
    expect(after).toEqual({ outbox: null, audit: null });
  });
});
