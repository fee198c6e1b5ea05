// The bench's floor: each bench shape's round trips with no service logic — no routing library, validation,
// authorisation, JSON:API or permission work — so `npm run bench` can report the service's latency and CPU as a
// multiple of what the runtime itself costs for the same hops (bench/README.md). Its rows live in a table of its own
// (`floor_index`, created on seed) in a D1 database built with the service's migrations; the bench populates it through
// `/create` with as many rows and objects as the service holds, each carrying a document as large as a workspace's.
//
//   GET  /ping                  one D1 read of one small row (the token recheck)
//   GET  /show/:id              one D1 read (the access batch) beside one DO read (the record), as the service's show
//   GET  /name/:name            one D1 read (the name's row), then one DO read (the record)
//   GET  /list?offset=n         one D1 read of a page of 20 documents (a list batch)
//   POST /lock/:id, /unlock/:id one D1 read, then one DO call: a SQLite write, then a D1 index write
//   POST /create/:name          one D1 read, one D1 write (the name claim), then one DO call: a SQLite write, then a
//                               D1 index write; `?id=` names the object (the bench populates the floor this way, as
//                               the service is populated: one new object per row)
//                               `?alarm=1` also arms an alarm in the object's write and clears it after the D1 write,
//                               as the service's outbox does so that a crash in between still reaches D1
//                               (bench:page-writes measures that variant beside the plain floor)
//   POST /seed                  creates the floor's tables
import { DurableObject } from "cloudflare:workers";

const ORG = "floor";
const PAGE = 20;
const doc = (id, name, version, docBytes) => JSON.stringify({ id, name, version, pad: "x".repeat(Math.max(0, docBytes - 60)) });

export class FloorObject extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS record (singleton INTEGER PRIMARY KEY, version INTEGER NOT NULL, doc TEXT NOT NULL)");
  }

  /** The crash-retry alarm of `?alarm=1` (cleared once D1 has the write, so it fires only after a crash). */
  async alarm() {}

  /** The record, as a show reads it from the workspace's object. */
  async read() {
    return this.ctx.storage.sql.exec("SELECT doc FROM record WHERE singleton = 1").toArray()[0]?.doc ?? null;
  }

  /** One SQLite write, then the D1 index write; answers the new version. `alarm`: with the crash-retry alarm. */
  async write(id, name, docBytes, alarm = false) {
    const sql = this.ctx.storage.sql;
    const row = sql.exec("SELECT version FROM record WHERE singleton = 1").toArray()[0];
    const version = (row?.version ?? 0) + 1;
    const text = doc(id, name, version, docBytes);
    sql.exec(
      "INSERT INTO record (singleton, version, doc) VALUES (1, ?, ?) ON CONFLICT(singleton) DO UPDATE SET version = excluded.version, doc = excluded.doc",
      version,
      text,
    );
    if (alarm) void this.ctx.storage.setAlarm(Date.now() + 5000);
    await this.env.DB.prepare(
      "INSERT INTO floor_index (id, org, name, version, doc) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET version = excluded.version, doc = excluded.doc",
    )
      .bind(id, ORG, name, version, text)
      .run();
    if (alarm) void this.ctx.storage.deleteAlarm();
    return version;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, route, arg] = url.pathname.split("/");
    const db = env.DB;
    const docBytes = Number(url.searchParams.get("bytes") ?? 1500);
    switch (`${request.method} ${route}`) {
      case "GET ping":
        await db.prepare("SELECT version FROM floor_index WHERE id = ?").bind("f-0").first();
        return new Response(null, { status: 204 });
      case "GET show": {
        const [row, record] = await Promise.all([
          db.prepare("SELECT doc FROM floor_index WHERE id = ?").bind(arg).first("doc"),
          env.FLOOR.getByName(arg).read(),
        ]);
        return text(record ?? row ?? "{}");
      }
      case "GET name": {
        const row = await db.prepare("SELECT id, doc FROM floor_index WHERE org = ? AND name = ?").bind(ORG, arg).first();
        const record = row ? await env.FLOOR.getByName(row.id).read() : null;
        return text(record ?? row?.doc ?? "{}");
      }
      case "GET list": {
        const rows = await db
          .prepare("SELECT doc FROM floor_index WHERE org = ? ORDER BY name LIMIT ? OFFSET ?")
          .bind(ORG, PAGE, Number(url.searchParams.get("offset") ?? 0))
          .raw();
        return text(`[${rows.map((r) => r[0]).join(",")}]`);
      }
      case "POST lock":
      case "POST unlock": {
        const name = await db.prepare("SELECT name FROM floor_index WHERE id = ?").bind(arg).first("name");
        const version = await env.FLOOR.getByName(arg).write(arg, name ?? arg, docBytes);
        return text(doc(arg, name, version, docBytes));
      }
      case "POST create": {
        await db.prepare("SELECT version FROM floor_index WHERE id = ?").bind("f-0").first();
        const id = url.searchParams.get("id") ?? `c-${crypto.randomUUID()}`;
        await db.prepare("INSERT INTO floor_names (org, name, id) VALUES (?, ?, ?)").bind(ORG, arg, id).run();
        const version = await env.FLOOR.getByName(id).write(id, arg, docBytes, url.searchParams.get("alarm") === "1");
        return text(doc(id, arg, version, docBytes), 201);
      }
      case "POST seed": {
        await db.batch([
          db.prepare(
            "CREATE TABLE IF NOT EXISTS floor_index (id TEXT PRIMARY KEY, org TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL, doc TEXT NOT NULL)",
          ),
          db.prepare("CREATE INDEX IF NOT EXISTS floor_index_org_name ON floor_index (org, name)"),
          db.prepare("CREATE TABLE IF NOT EXISTS floor_names (org TEXT NOT NULL, name TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (org, name))"),
        ]);
        return new Response(null, { status: 204 });
      }
      default:
        return new Response("not found", { status: 404 });
    }
  },
};

const text = (body, status = 200) => new Response(body, { status, headers: { "Content-Type": "application/json" } });
