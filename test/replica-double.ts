// A stand-in for D1 read replication, which local D1 lacks: a second database (REPLICA_DB, vitest.config.ts) holds a
// snapshot of the primary taken at the last `sync()`, so it trails by every write since. Sessions other than
// `first-primary` read it (and say so in `meta`, as a real replica does); writes and primary sessions reach the
// primary. `sync({ clockAt })` also sets the replica's fence clock, standing for how long ago the snapshot was taken.
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

const READ_SQL = /^\s*(SELECT\b|WITH\b(?![\s\S]*\b(INSERT|UPDATE|DELETE|REPLACE)\b))/i;
const SKIP = /^(sqlite_|_cf_|d1_migrations$|workspace_search_fts)/;

export interface LaggingD1 {
  db: D1Database;
  /** Brings the replica up to the primary; `clockAt` (ms): the fence clock it shows (default: now). */
  sync(opts?: { clockAt?: number }): Promise<void>;
  /** Replica reads served since the double was made. */
  replicaReads: number;
}

/** The replica's schema, without triggers: it only ever receives copies of rows the primary derived already. */
export async function prepareReplica(replica: D1Database): Promise<void> {
  await applyD1Migrations(replica, env.TEST_MIGRATIONS);
  const triggers = await replica.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all<{ name: string }>();
  for (const t of triggers.results) await replica.prepare(`DROP TRIGGER "${t.name}"`).run();
}

export function laggingD1(primary: D1Database, replica: D1Database): LaggingD1 {
  const onReplica = new WeakSet<object>();
  const mark = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => mark(target.bind(...values));
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    onReplica.add(proxy);
    real.set(proxy, stmt);
    return proxy;
  };
  const real = new WeakMap<object, D1PreparedStatement>();
  const state: LaggingD1 = {
    replicaReads: 0,
    db: new Proxy(primary, {
      get(target, prop) {
        if (prop === "withSession") {
          return (constraint?: string) => {
            if (constraint === "first-primary") return target.withSession(constraint);
            const session: Partial<D1DatabaseSession> = {
              prepare: (sql: string) => (READ_SQL.test(sql) ? mark(replica.prepare(sql)) : target.prepare(sql)),
              batch: async <T>(statements: D1PreparedStatement[]) => {
                if (!statements.every((s) => onReplica.has(s))) return target.batch<T>(statements.map((s) => real.get(s) ?? s));
                state.replicaReads++;
                const results = await replica.batch<T>(statements.map((s) => real.get(s) ?? s));
                for (const r of results) Object.assign(r.meta, { served_by_primary: false, served_by_region: "TEST" });
                return results;
              },
              getBookmark: () => null,
            };
            return session as D1DatabaseSession;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
    async sync(opts = {}) {
      const tables = await primary.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
      const writes: D1PreparedStatement[] = [];
      for (const { name } of tables.results) {
        if (SKIP.test(name)) continue;
        writes.push(replica.prepare(`DELETE FROM "${name}"`));
        const rows = await primary.prepare(`SELECT * FROM "${name}"`).all<Record<string, unknown>>();
        // Generated columns (hidden 2 or 3 in table_xinfo) are computed, never inserted.
        const info = await primary.prepare(`SELECT name, hidden FROM pragma_table_xinfo('${name}')`).all<{ name: string; hidden: number }>();
        const generated = new Set(info.results.filter((c) => c.hidden === 2 || c.hidden === 3).map((c) => c.name));
        for (const row of rows.results) {
          const cols = Object.keys(row).filter((c) => !generated.has(c));
          writes.push(
            replica
              .prepare(`INSERT INTO "${name}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`)
              .bind(...cols.map((c) => row[c])),
          );
        }
      }
      writes.push(replica.prepare("INSERT INTO workspace_search_fts(workspace_search_fts) VALUES ('rebuild')"));
      writes.push(replica.prepare("UPDATE replica_clock SET at = ? WHERE id = 1").bind(opts.clockAt ?? Date.now()));
      await replica.batch(writes);
    },
  };
  return state;
}
