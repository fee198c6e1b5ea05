#!/usr/bin/env node
// `npm run test:store-compat`: `npm start` (workerd on the configuration Miniflare assembles for the built Worker) and
// `npm run dev` (wrangler dev) share one store. On a fresh PERSIST_DIR: the lean runtime migrates it and writes;
// wrangler dev (after its own `d1 migrations apply`, which must find nothing to apply) reads that back and writes
// more; the lean runtime (which must apply nothing either) reads both runtimes' writes — Durable Object state (show by
// id, lock) and the D1 index (list, name lookup, tags). Prints PASS/FAIL per check; exit code 1 on any failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killAllGroups, newAdminToken, withRuntime } from "./lib/service.mjs";
import { root } from "./lib/local-env.mjs";

const store = mkdtempSync(join(tmpdir(), "store-compat-"));
const token = newAdminToken();
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "PASS" : "FAIL"} ${what}`);
  if (!ok) failures++;
};
process.on("exit", killAllGroups);

const withRuntimeOf = (script, label, fn) =>
  withRuntime(
    {
      dir: root,
      script,
      label,
      store,
      logFile: join(store, `${label}.log`),
      token,
      env: { ADMIN_TOKEN: token, BLOB_SIGNING_KEY: "compat" },
      timeoutMs: 120_000,
    },
    fn,
  );

const ws = (name) => ({ data: { type: "workspaces", attributes: { name } } });
const names = (list) =>
  list.body.data
    .map((w) => w.attributes.name)
    .sort()
    .join(",");
let first;
try {
  await withRuntimeOf("start.mjs", "lean-1", async (api, log) => {
    check(/applied 0001_init\.sql/.test(log()), "lean runtime migrates a fresh store");
    check(
      (await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: "compat", email: "c@example.com" } } })).status === 201,
      "lean: create organisation",
    );
    const created = await api("POST", "/organizations/compat/workspaces", ws("written-by-lean"));
    check(created.status === 201, "lean: create workspace");
    first = created.body.data.id;
    check((await api("POST", `/workspaces/${first}/actions/lock`, { reason: "lean" })).status === 200, "lean: lock it (Durable Object state)");
    check(
      (await api("PATCH", `/workspaces/${first}/tag-bindings`, { data: [{ type: "tag-bindings", attributes: { key: "by", value: "lean" } }] })).status === 200,
      "lean: tag binding",
    );
  });
  await withRuntimeOf("dev.mjs", "wrangler-dev", async (api, log) => {
    check(/No migrations to apply/.test(log()), "wrangler d1 migrations apply finds the lean runtime's migrations applied");
    const shown = await api("GET", `/workspaces/${first}`);
    check(shown.status === 200 && shown.body.data.attributes.locked === true, "wrangler dev: shows the lean runtime's workspace, locked (DO)");
    const byName = await api("GET", "/organizations/compat/workspaces/written-by-lean");
    check(byName.status === 200 && byName.body.data.id === first, "wrangler dev: name lookup (D1)");
    const tagged = await api("GET", "/organizations/compat/workspaces?filter%5Btagged%5D%5B0%5D%5Bkey%5D=by&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=lean");
    check(tagged.status === 200 && names(tagged) === "written-by-lean", "wrangler dev: tag filter (D1)");
    check((await api("POST", "/organizations/compat/workspaces", ws("written-by-dev"))).status === 201, "wrangler dev: create workspace");
    check((await api("POST", `/workspaces/${first}/actions/unlock`)).status === 200, "wrangler dev: unlock the lean runtime's lock");
  });
  await withRuntimeOf("start.mjs", "lean-2", async (api, log) => {
    check(!/applied \d+_/.test(log()), "lean runtime applies nothing to a store wrangler migrated");
    const list = await api("GET", "/organizations/compat/workspaces");
    check(list.status === 200 && names(list) === "written-by-dev,written-by-lean", "lean: lists both runtimes' workspaces (D1)");
    const shown = await api("GET", `/workspaces/${first}`);
    check(shown.status === 200 && shown.body.data.attributes.locked === false, "lean: sees wrangler dev's unlock (DO)");
    const byName = await api("GET", "/organizations/compat/workspaces/written-by-dev");
    check(byName.status === 200, "lean: name lookup of wrangler dev's workspace");
  });
} catch (err) {
  console.error(err.stack ?? err);
  failures++;
} finally {
  rmSync(store, { recursive: true, force: true });
}
console.log(failures ? `store-compat: ${failures} failure(s)` : "store-compat: both runtimes read and write one store");
process.exit(failures ? 1 : 0);
