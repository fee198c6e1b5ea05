// `npm run bench`: list latency at 1,000 and 100,000 workspaces against two floors, and lock/unlock
// against the same steps issued bare. Measures only; the numbers go to bench/results/latest.{json,md}
// through bench/run.mjs. The bulk loader writes exactly the D1 rows the API writes for a workspace
// (its index row and doc via indexUpsertStatements, tags, and a committed name lease); listing reads
// only those rows, so the seeded workspaces' Durable Objects are not created.
import { env, exports } from "cloudflare:workers";
import { it } from "vitest";
import { authenticate } from "../src/auth/auth.middleware";
import { loadAccessBatch } from "../src/auth/access";
import { newId, nowIso } from "../src/ids";
import { defaultSettings } from "../src/workspaces/workspace.rules";
import { initialRecord } from "../src/workspaces/workspace.record";
import { indexUpsertStatements } from "../src/workspaces/workspaces.index";

declare const __BENCH_SIZES__: string;
const SIZES = __BENCH_SIZES__.split(",").map(Number);
const ADMIN = "bench-admin-token";
const ITER = 40;

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function call(method: string, path: string, token = ADMIN, body?: unknown): Promise<Response> {
  const res = await exports.default.fetch(
    new Request(`http://localhost/api/v2${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  await res.arrayBuffer();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status}`);
  return res;
}

function stats(samples: number[]): { p50: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: +at(0.5).toFixed(2), p99: +at(0.99).toFixed(2) };
}

async function measure(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 3; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < ITER; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return stats(samples);
}

/** The bulk loader: an organisation with `n` workspaces over 10 projects, 1 in 10 tagged, a read-only team on 1%. */
async function seed(n: number) {
  const org = `bench-${n}-${Date.now()}`;
  await call("POST", "/organizations", ADMIN, { data: { type: "organizations", attributes: { name: org, email: "b@x.test" } } });
  const orgRow = (await env.DB.prepare("SELECT external_id, default_project_id FROM organizations WHERE name = ?").bind(org).first<{ external_id: string; default_project_id: string }>())!;
  for (let i = 1; i < 10; i++) await call("POST", `/organizations/${org}/projects`, ADMIN, { data: { type: "projects", attributes: { name: `project-${i}` } } });
  const projectRows = await env.DB.prepare("SELECT id FROM projects WHERE organization_name = ?").bind(org).all<{ id: string }>();
  const projectIds = projectRows.results.map((r) => r.id);
  const teamId = newId("team");
  const teamToken = `bench-team-${n}`;
  await env.DB.batch([
    env.DB.prepare("INSERT INTO teams (id, organization_name, name, organization_access, service_user_id, created_at) VALUES (?, ?, ?, '{}', ?, ?)").bind(teamId, org, "readers", newId("user"), nowIso()),
    env.DB.prepare("INSERT INTO tokens (id, token_hash, kind, team_id, organization_name, created_at) VALUES (?, ?, 'team', ?, ?, ?)").bind(newId("at"), await sha256Hex(teamToken), teamId, org, nowIso()),
  ]);
  const settings = defaultSettings("1.14.0");
  const base = Date.parse("2026-01-01T00:00:00Z");
  let stmts: D1PreparedStatement[] = [];
  const flush = async () => {
    if (stmts.length) await env.DB.batch(stmts);
    stmts = [];
  };
  let sampleName = "";
  for (let i = 0; i < n; i++) {
    const id = newId("ws");
    const name = `ws-${i.toString().padStart(6, "0")}-${i % 7 === 0 ? "prod" : "dev"}`;
    if (i === Math.floor(n / 2)) sampleName = name;
    const now = new Date(base + i * 1000).toISOString();
    const tags = i % 10 === 0 ? [{ key: "env", value: i % 20 === 0 ? "prod" : "dev", id: newId("tb"), tagId: null, createdAt: now }, { key: "critical", value: null, id: newId("tb"), tagId: null, createdAt: now }] : [];
    const record = initialRecord({ id, organization: org, organizationId: orgRow.external_id, projectId: projectIds[i % projectIds.length], name, settings, tags, now });
    stmts.push(env.DB.prepare("INSERT INTO workspace_names (organization_name, name, workspace_id, claimed_at, committed) VALUES (?, ?, ?, ?, 0)").bind(org, name, id, base + i));
    stmts.push(...indexUpsertStatements(env.DB, record));
    if (i % 100 === 0) stmts.push(env.DB.prepare("INSERT INTO team_workspaces (id, team_id, workspace_id, access, created_at) VALUES (?, ?, ?, 'read', ?)").bind(newId("tws"), teamId, id, now));
    if (stmts.length >= 600) await flush();
  }
  await flush();
  return { org, projectId: projectIds[3], teamToken, sampleName };
}

interface Row {
  shape: string;
  size: number;
  p50: number;
  p99: number;
  floorSame: { p50: number; p99: number };
  floorOne: { p50: number; p99: number };
}

it("bench", async () => {
  const rows: Row[] = [];
  const plans: Record<string, string[]> = {};
  for (const size of SIZES) {
    const t0 = performance.now();
    const fx = await seed(size);
    console.log(`bench: seeded ${size} workspaces in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const shapes: Array<[string, string, string?]> = [
      ["no filter", ""],
      ["search[name]", `search[name]=${fx.sampleName.slice(3, 9)}`],
      ["search[wildcard-name]", "search[wildcard-name]=*-prod"],
      ["search[tags]", "search[tags]=critical"],
      ["filter[tagged]", "filter[tagged][0][key]=env&filter[tagged][0][value]=prod"],
      ["filter[project][id]", `filter[project][id]=${fx.projectId}`],
      ["sort=name", "sort=name"],
      ["sort=-latest-change-at", "sort=-latest-change-at"],
      ["sort=current-run.created-at", "sort=current-run.created-at"],
      ["read-only team caller", "", fx.teamToken],
    ];
    for (const [shape, query, token] of shapes) {
      const path = `/organizations/${fx.org}/workspaces?${query}`;
      const http = await measure(() => call("GET", path, token ?? ADMIN));
      // Floor 1: one D1 query returning the same page.
      const floorOne = await measure(() => env.DB.prepare("SELECT doc FROM workspaces WHERE organization_name = ? ORDER BY created_at, id LIMIT 20").bind(fx.org).all());
      // Floor 2: the statements the handler issues, bare: token lookup, access batch, count + page, serialisation scope.
      const floorSame = await measure(async () => {
        const principal = (await authenticate(env, token ?? ADMIN))!;
        const db = env.DB.withSession("first-primary");
        await loadAccessBatch(db, principal, fx.org, [], []);
        const [, page] = await db.batch([
          db.prepare("SELECT count(*) AS n FROM workspaces w WHERE w.organization_name = ?").bind(fx.org),
          db.prepare("SELECT w.doc FROM workspaces w WHERE w.organization_name = ? ORDER BY w.created_at, w.id LIMIT 20").bind(fx.org),
        ]);
        const ids = (page.results as Array<{ doc: string }>).map((r) => JSON.parse(r.doc) as { id: string; projectId: string });
        await loadAccessBatch(db, principal, fx.org, ids.map((r) => r.id), [...new Set(ids.map((r) => r.projectId))]);
      });
      rows.push({ shape, size, ...http, floorSame, floorOne });
    }
    const explain = async (sql: string, ...b: unknown[]) =>
      ((await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...b).all()).results as Array<{ detail: string }>).map((r) => r.detail).join(" | ");
    plans[`${size}: no filter`] = [await explain("SELECT w.doc FROM workspaces w WHERE w.organization_name = ? ORDER BY w.created_at ASC, w.id ASC LIMIT 20", fx.org)];
    plans[`${size}: search[name]`] = [await explain("SELECT w.doc FROM workspaces w WHERE w.organization_name = ? AND w.name LIKE ? ESCAPE '\\' ORDER BY w.created_at ASC, w.id ASC LIMIT 20", fx.org, "%x%")];
    plans[`${size}: filter[project][id]`] = [await explain("SELECT w.doc FROM workspaces w WHERE w.organization_name = ? AND w.project_id = ? ORDER BY w.created_at ASC, w.id ASC LIMIT 20", fx.org, fx.projectId)];
    plans[`${size}: count`] = [await explain("SELECT count(*) FROM workspaces w WHERE w.organization_name = ?", fx.org)];
  }

  // Locking: HTTP lock+unlock vs the same steps bare (token lookup, DO write with its D1 upsert), vs a bare DO RPC.
  const org = `bench-lock-${Date.now()}`;
  await call("POST", "/organizations", ADMIN, { data: { type: "organizations", attributes: { name: org, email: "b@x.test" } } });
  const ws = (await (await exports.default.fetch(new Request(`http://localhost/api/v2/organizations/${org}/workspaces`, { method: "POST", headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/vnd.api+json" }, body: JSON.stringify({ data: { type: "workspaces", attributes: { name: "lockme" } } }) }))).json()) as { data: { id: string } };
  const lockHttp = await measure(async () => {
    await call("POST", `/workspaces/${ws.data.id}/actions/lock`);
    await call("POST", `/workspaces/${ws.data.id}/actions/unlock`);
  });
  const stub = env.WORKSPACES.getByName(ws.data.id);
  const lockBare = await measure(async () => {
    const p = (await authenticate(env, ADMIN))!;
    const holder = { type: "users" as const, id: p.kind === "user" ? p.userId : "" };
    await stub.lock({ holder, reason: "", now: nowIso() });
    await authenticate(env, ADMIN);
    await stub.unlock({ holder });
  });
  const rpcEcho = await measure(() => stub.get());
  // Throughput: lock 1,000 distinct workspaces, 50 at a time.
  const ids: string[] = [];
  for (let i = 0; i < 1000; i += 50) {
    const made = await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const r = await exports.default.fetch(new Request(`http://localhost/api/v2/organizations/${org}/workspaces`, { method: "POST", headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/vnd.api+json" }, body: JSON.stringify({ data: { type: "workspaces", attributes: { name: `t-${i + j}` } } }) }));
        return ((await r.json()) as { data: { id: string } }).data.id;
      }),
    );
    ids.push(...made);
  }
  const t = performance.now();
  for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => call("POST", `/workspaces/${id}/actions/lock`)));
  const lockThroughput = +(ids.length / ((performance.now() - t) / 1000)).toFixed(1);

  console.log(`BENCH_RESULT ${JSON.stringify({ rows, plans, lock: { http: lockHttp, bare: lockBare, rpcEcho, throughputPerSecond: lockThroughput, workspaces: ids.length } })}`);
});
