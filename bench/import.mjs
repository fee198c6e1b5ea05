#!/usr/bin/env node
// `npm run bench:import`: the time to import an organisation of N workspaces (default 1,000) with K state versions
// each (default 5) between two local servers (`npm start`, each on a fresh store). The source is populated through
// the API, then `npm run import` copies it with the source held to --rate requests per second (default 30, HCP's
// limit per token); the run's summary and the wall time go to bench/results/import.md and .json. Not a test: nothing
// is asserted. Options: --workspaces N --versions K --rate R (0: unthrottled) --concurrency C.
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { killAllGroups, startService } from "../scripts/lib/service.mjs";

const root = join(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    workspaces: { type: "string", default: "1000" },
    versions: { type: "string", default: "5" },
    rate: { type: "string", default: "30" },
    concurrency: { type: "string", default: "8" },
  },
});
const N = Number(values.workspaces);
const K = Number(values.versions);
const work = mkdtempSync(join(tmpdir(), "bench-import-"));
process.on("exit", killAllGroups);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

const api = (s) => async (method, path, body) => {
  const res = await fetch(`${s.base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${s.token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};

async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

console.log(`starting two servers in ${work}`);
const [source, target] = await Promise.all(
  ["source", "target"].map((name) => startService({ root, logFile: join(work, `${name}.log`), env: { NO_AGENT: "1" } })),
);
try {
  const src = api(source);
  await src("POST", "/organizations", { data: { type: "organizations", attributes: { name: "bench", email: "bench@example.com" } } });
  const seeded = Date.now();
  await pool(N, 16, async (i) => {
    const name = `ws-${String(i).padStart(5, "0")}`;
    const ws = await src("POST", "/organizations/bench/workspaces", { data: { type: "workspaces", attributes: { name, "auto-apply": i % 2 === 0 } } });
    const id = ws.data.id;
    await src("POST", `/workspaces/${id}/vars`, { data: { type: "vars", attributes: { key: "region", value: "eu-west-1", category: "terraform" } } });
    await src("POST", `/workspaces/${id}/actions/lock`, { reason: "seeding" });
    const lineage = randomUUID();
    for (let s = 1; s <= K; s++) {
      const state = JSON.stringify({
        version: 4,
        terraform_version: "1.11.4",
        serial: s,
        lineage,
        outputs: { n: { value: s, type: "number" } },
        resources: [],
      });
      await src("POST", `/workspaces/${id}/state-versions`, {
        data: {
          type: "state-versions",
          attributes: { serial: s, lineage, md5: createHash("md5").update(state).digest("hex"), state: Buffer.from(state).toString("base64") },
        },
      });
    }
    await src("POST", `/workspaces/${id}/actions/unlock`, {});
    if ((i + 1) % 100 === 0) console.log(`populated ${i + 1}/${N}`);
  });
  const seedSeconds = (Date.now() - seeded) / 1000;
  console.log(`populated ${N} workspaces × ${K} state versions in ${seedSeconds.toFixed(1)} s; importing at --rate ${values.rate}`);

  const started = Date.now();
  const { code, stdout } = await new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        join(root, "node_modules", "tsx", "dist", "cli.mjs"),
        join(root, "tools", "import", "cli.ts"),
        "import",
        ...["--from", source.base, "--from-token", source.token, "--organization", "bench", "--to", target.base, "--to-token", target.token],
        ...["--rate", values.rate, "--concurrency", values.concurrency, "--json"],
      ],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (c) => resolve({ code: c, stdout: out }));
  });
  const seconds = (Date.now() - started) / 1000;
  const summary = JSON.parse(stdout.trim().split("\n").pop());
  const result = { workspaces: N, versions: K, rate: Number(values.rate), concurrency: Number(values.concurrency), exit: code, seconds, seedSeconds, summary };
  mkdirSync(join(root, "bench", "results"), { recursive: true });
  const stem = N === 1000 && K === 5 && values.rate === "30" ? "import" : `import-${N}x${K}-rate${values.rate}`;
  writeFileSync(join(root, "bench", "results", `${stem}.json`), `${JSON.stringify(result, null, 2)}\n`);
  const rows = Object.entries(summary.counts).map(([k, c]) => `| ${k} | ${c.copied} | ${c.skipped} | ${c.failed} |`);
  writeFileSync(
    join(root, "bench", "results", `${stem}.md`),
    [
      `# Import of ${N} workspaces × ${K} state versions between two local servers`,
      "",
      `Source held to ${values.rate === "0" ? "no limit" : `${values.rate} requests/s`}, ${values.concurrency} workspaces at once: **${seconds.toFixed(1)} s** wall time (${summary.requests} requests; exit ${code}).`,
      "",
      "| kind | copied | skipped | failed |",
      "|---|---|---|---|",
      ...rows,
      "",
    ].join("\n"),
  );
  console.log(`imported in ${seconds.toFixed(1)} s (exit ${code}, ${summary.requests} requests)`);
  console.log(JSON.stringify(summary.counts));
} finally {
  await Promise.all([source.stop(), target.stop()]);
  rmSync(work, { recursive: true, force: true });
}
