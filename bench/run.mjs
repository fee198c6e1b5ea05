#!/usr/bin/env node
// Runs the bench inside workerd and writes bench/results/latest.{json,md}. BENCH_SIZES=1000 for a quick run.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const res = spawnSync(join(root, "node_modules/.bin/vitest"), ["run", "--config", "bench/vitest.bench.config.ts"], { cwd: root, encoding: "utf8", maxBuffer: 1 << 28 });
const out = `${res.stdout}\n${res.stderr}`;
for (const line of out.split("\n")) if (line.startsWith("bench:")) console.log(line);
const line = out.split("\n").find((l) => l.includes("BENCH_RESULT "));
if (!line) {
  console.error(out.slice(-4000));
  process.exit(1);
}
const result = JSON.parse(line.slice(line.indexOf("BENCH_RESULT ") + 13));
result.date = new Date().toISOString();
writeFileSync(join(root, "bench/results/latest.json"), JSON.stringify(result, null, 2) + "\n");
const r = (x) => x.toFixed(2);
const md = [
  `# Bench (${result.date}, 2-core machine, local workerd)`,
  "",
  "List latency (ms, p50 / p99) against the same statements issued bare and one bare D1 query:",
  "",
  "| shape | workspaces | p50 | p99 | same-statements floor p50 | one-query floor p50 | ÷ same | ÷ one |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
  ...result.rows.map((x) => `| ${x.shape} | ${x.size} | ${r(x.p50)} | ${r(x.p99)} | ${r(x.floorSame.p50)} | ${r(x.floorOne.p50)} | ${r(x.p50 / x.floorSame.p50)} | ${r(x.p50 / x.floorOne.p50)} |`),
  "",
  `Lock + unlock round trip: HTTP p50 ${r(result.lock.http.p50)} / p99 ${r(result.lock.http.p99)} ms; same steps bare p50 ${r(result.lock.bare.p50)} ms (÷ ${r(result.lock.http.p50 / result.lock.bare.p50)}); bare DO RPC p50 ${r(result.lock.rpcEcho.p50)} ms; throughput locking ${result.lock.workspaces} distinct workspaces: ${result.lock.throughputPerSecond}/s.`,
  "",
  "Query plans:",
  "",
  ...Object.entries(result.plans).map(([k, v]) => `- ${k}: \`${v.join(" ; ")}\``),
  "",
];
writeFileSync(join(root, "bench/results/latest.md"), md.join("\n"));
console.log(md.join("\n"));
