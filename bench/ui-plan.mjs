#!/usr/bin/env node
// What a large plan costs on the run page. The service (`npm start`, no local agent) on a fresh store; a pool's agent
// played by the harness (scripts/lib/scripted-agent.mjs) plans one run with a JSON plan of N resources (default 500: a
// quarter each created, updated, replaced and destroyed, each with nested tags and a sensitive attribute, redacted by
// the agent's own redactor); then every page of the run page's changes (LIMITS.uiResourceChangesPage a page) is
// fetched at concurrency 1, `--requests` times each after a warm-up: time to the first byte and to the whole page
// (p50, p99, ms, on loopback: the server's time to render), the HTML's bytes (and gzipped), the resources shown. Fails
// if a sensitive value reaches a page or a page shows other than its share of the resources. Never asserted in a test.
//
//   npm run bench:ui-plan [-- --resources 500 --requests 30]
//
// Results: bench/results/ui-plan.md and .json (ui-plan-<N>.* for another N), rewritten by each run.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { killAllGroups, startService } from "../scripts/lib/service.mjs";
import { scriptedAgent } from "../scripts/lib/scripted-agent.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({ options: { resources: { type: "string", default: "500" }, requests: { type: "string", default: "30" } } });
const N = Number(opt.resources);
const REQUESTS = Number(opt.requests);
/** As src/limits.ts's uiResourceChangesPage; the bench fails if the pages show otherwise. */
const PAGE_SIZE = 50;
const WARMUP = 3;
process.on("exit", () => killAllGroups());

/** N resource changes as Terraform writes them: a quarter each of create, update, replace and destroy. */
function plan(n) {
  const kinds = [["create"], ["update"], ["delete", "create"], ["delete"]];
  const resource_changes = Array.from({ length: n }, (_, i) => {
    const actions = kinds[i % 4];
    const before =
      actions[0] === "create"
        ? null
        : { id: `id-${i}`, name: `node-${i}`, size: i, password: `pw-${i}-before`, tags: { env: "dev", team: `t${i % 7}`, index: String(i) } };
    const after =
      actions.join() === "delete"
        ? null
        : {
            name: `node-${i}`,
            size: actions[0] === "create" ? i : i + 1,
            password: `pw-${i}-after`,
            tags: { env: "prod", team: `t${i % 7}`, index: String(i) },
          };
    return {
      address: `terraform_data.node["key-${String(i).padStart(4, "0")}"]`,
      mode: "managed",
      type: "terraform_data",
      name: "node",
      index: `key-${String(i).padStart(4, "0")}`,
      change: {
        actions,
        before,
        after,
        after_unknown: after ? { id: true, tags: {} } : false,
        before_sensitive: before ? { password: true, tags: {} } : false,
        after_sensitive: after ? { password: true, tags: {} } : false,
        ...(actions.length === 2 ? { replace_paths: [["size"]] } : {}),
      },
    };
  });
  return {
    format_version: "1.2",
    terraform_version: "1.11.4",
    resource_changes,
    output_changes: { count: { actions: ["update"], before: 0, after: n, before_sensitive: false, after_sensitive: false, after_unknown: false } },
  };
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: Number(quantile(s, 0.5).toFixed(1)), p99: Number(quantile(s, 0.99).toFixed(1)) };
};

const work = mkdtempSync(join(tmpdir(), "ui-plan-bench-"));
console.log(`bench:ui-plan: starting the service (log: ${join(work, "service.log")})`);
const service = await startService({ root, logFile: join(work, "service.log"), env: { NO_AGENT: "1" } });
let failed = false;
try {
  const api = async (method, path, body) => {
    const res = await fetch(`${service.base}/api/v2${path}`, {
      method,
      headers: { Authorization: `Bearer ${service.token}`, "Content-Type": "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const org = `bench-plan-${randomBytes(3).toString("hex")}`;
  await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: org, email: "bench@example.com" } } });
  const agent = await scriptedAgent({ base: service.base, api, organization: org, name: "bench-plan-pool" });
  const ws = await agent.workspace(`plan-${N}`);
  const cv = (
    await api("POST", `/workspaces/${ws.id}/configuration-versions`, { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } })
  ).data;
  await fetch(cv.attributes["upload-url"], { method: "PUT", body: gzipSync(Buffer.alloc(1024)), headers: { "Content-Type": "application/octet-stream" } });
  const run = (await api("POST", "/runs", { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: ws.id } } } } })).data;
  const full = plan(N);
  await agent.plan(run.id, full);
  const redacted = await fetch(`${service.base}/api/v2/plans/${run.relationships.plan.data.id}/json-output-redacted`, {
    headers: { Authorization: `Bearer ${service.token}` },
  });
  const redactedBytes = (await redacted.arrayBuffer()).byteLength;

  const signIn = await fetch(`${service.base}/app/session`, {
    method: "POST",
    headers: { Origin: service.base, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: service.token }).toString(),
    redirect: "manual",
  });
  const cookie = /ws_session=[^;]+/.exec(signIn.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session");
  const pageUrl = `${service.base}/app/${org}/workspaces/plan-${N}/runs/${run.id}`;

  const pages = Math.max(1, Math.ceil(N / PAGE_SIZE));
  const results = [];
  for (let p = 1; p <= pages; p++) {
    const url = p === 1 ? pageUrl : `${pageUrl}?changes-page=${p}`;
    const ttfb = [];
    const total = [];
    let html = "";
    for (let i = 0; i < REQUESTS + WARMUP; i++) {
      const t0 = performance.now();
      const res = await fetch(url, { headers: { Cookie: cookie } });
      const t1 = performance.now();
      html = await res.text();
      const t2 = performance.now();
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
      if (i < WARMUP) continue;
      ttfb.push(t1 - t0);
      total.push(t2 - t0);
    }
    const shown = (html.match(/<details class="change-item"/g) ?? []).length;
    const want = Math.min(PAGE_SIZE, N - (p - 1) * PAGE_SIZE);
    if (shown !== want) throw new Error(`page ${p} shows ${shown} resources, not ${want}`);
    if (/pw-\d+-(before|after)/.test(html)) throw new Error(`a sensitive value is in page ${p}`);
    results.push({
      page: p,
      ttfbMs: stats(ttfb),
      totalMs: stats(total),
      htmlBytes: Buffer.byteLength(html),
      htmlGzipBytes: gzipSync(Buffer.from(html)).byteLength,
      resourcesShown: shown,
    });
  }
  const result = {
    date: new Date().toISOString(),
    // The machine may be shared: its load says how far the times stand from a quiet one.
    loadAverage1m: Number(loadavg()[0].toFixed(1)),
    cores: cpus().length,
    resources: N,
    requestsPerPage: REQUESTS,
    pageSize: PAGE_SIZE,
    pages,
    fullPlanBytes: Buffer.byteLength(JSON.stringify(full)),
    redactedPlanBytes: redactedBytes,
    firstPage: results[0],
    lastPage: results.at(-1),
    worstPageTotalP50Ms: Math.max(...results.map((r) => r.totalMs.p50)),
    htmlBytesAllPages: results.reduce((n, r) => n + r.htmlBytes, 0),
    perPage: results,
  };
  const md = [
    "# The plan on the run page",
    "",
    `\`npm run bench:ui-plan -- --resources ${N} --requests ${REQUESTS}\`, ${result.date}: a plan of ${N} resources (full JSON plan ${result.fullPlanBytes} bytes, redacted ${redactedBytes} bytes), ${PAGE_SIZE} resources a page, ${pages} pages; each page fetched ${REQUESTS} times at concurrency 1 after ${WARMUP} warm-ups; load average ${result.loadAverage1m} on ${result.cores} cores at the end.`,
    "",
    "| Page | Resources | First byte p50 / p99 (ms) | Whole page p50 / p99 (ms) | HTML bytes | gzipped |",
    "|---:|---:|---:|---:|---:|---:|",
    ...results.map(
      (r) =>
        `| ${r.page} | ${r.resourcesShown} | ${r.ttfbMs.p50} / ${r.ttfbMs.p99} | ${r.totalMs.p50} / ${r.totalMs.p99} | ${r.htmlBytes} | ${r.htmlGzipBytes} |`,
    ),
    "",
    `All ${pages} pages: ${result.htmlBytesAllPages} bytes of HTML. No sensitive value in any page.`,
    "",
  ];
  const dir = join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, N === 500 ? "ui-plan" : `ui-plan-${N}`);
  writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${stem}.md`, md.join("\n"));
  console.log(md.join("\n"));
} catch (e) {
  failed = true;
  console.error(`bench:ui-plan: ${e.stack ?? e}`);
} finally {
  await service.stop();
}
if (!failed) rmSync(work, { recursive: true, force: true });
else console.error(`bench:ui-plan: service log kept: ${join(work, "service.log")}`);
process.exit(failed ? 1 : 0);
