#!/usr/bin/env node
// `npm run bench:state`: what a state version's upload and download cost, end to end through `npm start` (the lean
// runtime, no agent), for states of 1, 8 and 32 MiB: the client's PUT to the signed upload URL (the object stores the
// state in chunks, sealed, and reads it back to check its MD5 and parse it) and its GET of the download URL. Five of
// each per size, after one warm-up; p50 in ms and MiB/s. `--root <checkout>` measures another checkout (e.g. one
// extracted with `git archive`) the same way, for a before/after. Node built-ins only.
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { root as here } from "../scripts/lib/local-env.mjs";
import { readJson } from "../scripts/lib/harness.mjs";
import { killAllGroups, startService } from "../scripts/lib/service.mjs";

const argv = process.argv.slice(2);
const root = argv.includes("--root") ? argv[argv.indexOf("--root") + 1] : here;
const SIZES_MIB = [1, 8, 32];
const RUNS = 5;
process.on("exit", killAllGroups);

/** A state of about `mib` MiB: resources whose attributes are random strings (nothing compresses or repeats). */
function stateOf(mib, serial) {
  const resources = [];
  let size = 0;
  for (let i = 0; size < mib * 1024 * 1024; i++) {
    const value = randomBytes(3072).toString("hex");
    size += value.length + 200;
    resources.push({
      mode: "managed",
      type: "random_password",
      name: `r${i}`,
      provider: 'provider["registry.terraform.io/hashicorp/random"]',
      instances: [{ schema_version: 3, attributes: { id: String(i), result: value } }],
    });
  }
  return Buffer.from(JSON.stringify({ version: 4, terraform_version: "1.11.4", serial, lineage: "bench", outputs: {}, resources }));
}

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const service = await startService({ root, logFile: join(tmpdir(), "bench-state.log"), env: { NO_AGENT: "1" } });
const api = async (method, path, body) => {
  const res = await fetch(`${service.base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${service.token}`, "Content-Type": "application/vnd.api+json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : await readJson(res) };
};
try {
  const org = `bench-${randomBytes(3).toString("hex")}`;
  await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: org, email: "b@example.com" } } });
  const ws = (await api("POST", `/organizations/${org}/workspaces`, { data: { type: "workspaces", attributes: { name: "state" } } })).body.data.id;
  await api("POST", `/workspaces/${ws}/actions/lock`, { reason: "bench" });
  let serial = 0;
  const rows = [];
  for (const mib of SIZES_MIB) {
    const up = [];
    const down = [];
    for (let i = 0; i <= RUNS; i++) {
      const state = stateOf(mib, ++serial);
      const md5 = createHash("md5").update(state).digest("hex");
      const sv = await api("POST", `/workspaces/${ws}/state-versions`, { data: { type: "state-versions", attributes: { serial, md5, lineage: "bench" } } });
      if (sv.status !== 201) throw new Error(`create: ${sv.status} ${JSON.stringify(sv.body)}`);
      let t = performance.now();
      const put = await fetch(sv.body.data.attributes["hosted-state-upload-url"], { method: "PUT", body: state });
      const upMs = performance.now() - t;
      if (put.status !== 200) throw new Error(`upload: ${put.status} ${await put.text()}`);
      const url = (await api("GET", `/state-versions/${sv.body.data.id}`)).body.data.attributes["hosted-state-download-url"];
      t = performance.now();
      const got = Buffer.from(await (await fetch(url)).arrayBuffer());
      const downMs = performance.now() - t;
      if (!got.equals(state)) throw new Error("download: the bytes differ");
      if (i > 0) {
        up.push(upMs);
        down.push(downMs);
      }
    }
    rows.push({ mib, up: p50(up), down: p50(down) });
  }
  console.log(`\nState upload and download through npm start (${root}), p50 of ${RUNS}:\n`);
  console.log("| state | upload ms | upload MiB/s | download ms | download MiB/s |\n|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.mib} MiB | ${r.up.toFixed(0)} | ${(r.mib / (r.up / 1000)).toFixed(1)} | ${r.down.toFixed(0)} | ${(r.mib / (r.down / 1000)).toFixed(1)} |`,
    );
  }
} finally {
  await service.stop();
}
