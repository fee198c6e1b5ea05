#!/usr/bin/env node
// `npm run test:store-upgrade`: a store written by the code before organisation renames (D1 rows and
// workspace records naming their organisation by name) keeps working after the upgrade. The previous code (by default
// the parent of the commit that added migrations/0016_organization_ids.sql, else HEAD; `--from <ref>` to choose) is
// extracted with `git archive` into a temporary directory and run with `npm start` on a fresh PERSIST_DIR; it writes an
// organisation with workspaces, tags, a lock, a state version, a variable, teams and tokens. Then this checkout's
// `npm start` runs on the same store: it must apply migration 0016, show everything as it was, rename the organisation
// and find nothing inconsistent. The previous code stored the state version in clear: after the upgrade the store's
// SQLite files hold none of its secret values (the workspace object seals them on its first start), and it is served as
// it was. Prints PASS/FAIL per check; exit code 1 on any failure. Node built-ins (node:sqlite), git and tar.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "./lib/local-env.mjs";
import { killAllGroups, newAdminToken, withRuntime } from "./lib/service.mjs";

const MIGRATION = "migrations/0016_organization_ids.sql";
const argv = process.argv.slice(2);
const fromArg = argv.indexOf("--from");
const git = (...args) => spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });

function oldRef() {
  if (fromArg >= 0) return argv[fromArg + 1];
  const added = git("log", "-1", "--format=%H", "--diff-filter=A", "HEAD", "--", MIGRATION).stdout.trim();
  return added ? `${added}^` : "HEAD";
}

const ref = oldRef();
if (git("ls-tree", "--name-only", ref, "--", MIGRATION).stdout.trim()) {
  console.error(`store-upgrade: ${ref} already has ${MIGRATION}; pass --from <a ref before it>`);
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), "store-upgrade-"));
const oldRoot = join(work, "previous");
const store = join(work, "store");
const extract = spawnSync("sh", ["-c", `mkdir -p "${oldRoot}" && git -C "${root}" archive "${ref}" | tar -x -C "${oldRoot}"`], { encoding: "utf8" });
if (extract.status !== 0) {
  console.error(`store-upgrade: could not extract ${ref}: ${extract.stderr}`);
  process.exit(1);
}
// The previous code runs on this checkout's dependencies (same lock file, or close enough to build it).
symlinkSync(join(root, "node_modules"), join(oldRoot, "node_modules"), "dir");

const token = newAdminToken();
// The same secrets for both runs: the variables' values are sealed with a key derived from VARIABLES_ENCRYPTION_KEY.
// The state's secret values are sealed with a key derived from STATE_ENCRYPTION_KEY (the previous code ignores it).
const secrets = {
  ADMIN_TOKEN: token,
  BLOB_SIGNING_KEY: randomBytes(16).toString("hex"),
  VARIABLES_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  STATE_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
};
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "PASS" : "FAIL"} ${what}`);
  if (!ok) failures++;
};
process.on("exit", killAllGroups);

/** JSON with object keys sorted, so a comparison sees values and not the order a serialiser writes them in. */
const canonical = (v) =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
/** Checks that a resource reads as before, printing what differs when it does not. */
const same = (now, before, what) => {
  const ok = canonical(now) === canonical(before);
  check(ok, what);
  if (!ok) {
    const a = JSON.parse(canonical(before));
    const b = JSON.parse(canonical(now));
    for (const k of new Set([...Object.keys(a.attributes ?? {}), ...Object.keys(b.attributes ?? {})]))
      if (JSON.stringify(a.attributes?.[k]) !== JSON.stringify(b.attributes?.[k]))
        console.log(`  attributes.${k}: ${JSON.stringify(a.attributes?.[k])} → ${JSON.stringify(b.attributes?.[k])}`);
    for (const k of new Set([...Object.keys(a.relationships ?? {}), ...Object.keys(b.relationships ?? {})]))
      if (JSON.stringify(a.relationships?.[k]) !== JSON.stringify(b.relationships?.[k]))
        console.log(`  relationships.${k}: ${JSON.stringify(a.relationships?.[k])} → ${JSON.stringify(b.relationships?.[k])}`);
  }
};

const withRuntimeOf = (dir, label, fn) =>
  withRuntime({ dir, label, store, logFile: join(work, `${label}.log`), token, env: { ...secrets, EDITION: "self-hosted" } }, fn);

const ORG = "upgrade-org";
const RENAMED = "upgrade-renamed";
const doc = (type, attributes, relationships) => ({ data: { type, attributes, ...(relationships ? { relationships } : {}) } });
/** Values only the state holds: after the upgrade no file of the store may contain them. */
const ATTRIBUTE_SECRET = `attr-${randomBytes(12).toString("hex")}`;
const OUTPUT_SECRET = `out-${randomBytes(12).toString("hex")}`;
const STATE = JSON.stringify({
  version: 4,
  terraform_version: "1.11.4",
  serial: 1,
  lineage: "upgrade",
  resources: [
    {
      mode: "managed",
      type: "random_password",
      name: "db",
      provider: 'provider["registry.terraform.io/hashicorp/random"]',
      instances: [{ schema_version: 3, attributes: { id: "none", result: ATTRIBUTE_SECRET } }],
    },
  ],
  outputs: { o: { value: OUTPUT_SECRET, type: "string" } },
});
/**
 * The store's SQLite databases that hold `text`, as SQLite writes them once it checkpoints. The runtime is stopped
 * without closing them, so each database is still its header and a write-ahead log, which keeps every page version it
 * ever wrote until SQLite reuses it; a copy is opened (the log applied to it) and closed, and its files are searched.
 */
function databasesHolding(dir, text) {
  const copy = join(work, `copy-${randomBytes(4).toString("hex")}`);
  cpSync(dir, copy, { recursive: true });
  const found = [];
  for (const entry of readdirSync(copy, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".sqlite")) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const db = new DatabaseSync(path);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    if (readFileSync(path).includes(Buffer.from(text))) found.push(path.slice(copy.length + 1));
  }
  rmSync(copy, { recursive: true, force: true });
  return found;
}
const ids = (res) => res.body.data.map((x) => x.id).sort();
let alpha, beta, teamToken, orgToken, before, outputsBefore;

try {
  console.log(`store-upgrade: previous code from ${ref} (${git("rev-parse", "--short", ref).stdout.trim()})`);
  await withRuntimeOf(oldRoot, "previous", async (api) => {
    check((await api("POST", "/organizations", doc("organizations", { name: ORG, email: "u@example.com" }))).status === 201, "previous: create organisation");
    const project = await api("POST", `/organizations/${ORG}/projects`, doc("projects", { name: "proj-a" }));
    alpha = (
      await api(
        "POST",
        `/organizations/${ORG}/workspaces`,
        doc(
          "workspaces",
          { name: "alpha", description: "d" },
          {
            project: { data: { type: "projects", id: project.body.data.id } },
            tags: { data: [{ type: "tags", attributes: { name: "flat1" } }] },
            "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] },
          },
        ),
      )
    ).body.data.id;
    beta = (await api("POST", `/organizations/${ORG}/workspaces`, doc("workspaces", { name: "beta" }))).body.data.id;
    check(!!alpha && !!beta, "previous: create workspaces (tags, bindings, a project)");
    check((await api("POST", `/workspaces/${alpha}/vars`, doc("vars", { key: "k", value: "v", category: "terraform" }))).status === 201, "previous: variable");
    const key = await api("POST", `/organizations/${ORG}/ssh-keys`, doc("ssh-keys", { name: "key", value: "secret" }));
    check(
      (await api("PATCH", `/workspaces/${alpha}/relationships/ssh-key`, doc("workspaces", { id: key.body.data.id }))).status === 200,
      "previous: SSH key assigned",
    );
    check((await api("POST", `/workspaces/${beta}/actions/lock`, { reason: "held" })).status === 200, "previous: lock");
    const sv = await api("POST", `/workspaces/${beta}/state-versions`, {
      data: {
        type: "state-versions",
        attributes: { serial: 1, md5: createHash("md5").update(STATE).digest("hex"), state: Buffer.from(STATE).toString("base64") },
      },
    });
    check(sv.status === 201, "previous: state version");
    outputsBefore = (await api("GET", `/state-versions/${sv.body.data.id}/outputs`)).body?.data?.map((o) => o.attributes.value);
    const team = await api("POST", `/organizations/${ORG}/teams`, doc("teams", { name: "devs" }));
    await api("POST", "/team-workspaces", {
      data: {
        type: "team-workspaces",
        attributes: { access: "read" },
        relationships: { team: { data: { type: "teams", id: team.body.data.id } }, workspace: { data: { type: "workspaces", id: beta } } },
      },
    });
    teamToken = (await api("POST", `/teams/${team.body.data.id}/authentication-token`, doc("authentication-tokens", {}))).body?.data?.attributes?.token;
    orgToken = (await api("POST", `/organizations/${ORG}/authentication-token`, doc("authentication-tokens", {}))).body?.data?.attributes?.token;
    check(!!teamToken && !!orgToken, "previous: team token and organisation token");
    check((await api("POST", `/organizations/${ORG}/varsets`, doc("varsets", { name: "vs", global: true }))).status === 201, "previous: variable set");
    check(
      (await api("POST", `/organizations/${ORG}/relationships/data-retention-policy`, doc("data-retention-policy-dont-deletes", {}))).status < 300,
      "previous: organisation retention policy",
    );
    before = {
      alpha: (await api("GET", `/workspaces/${alpha}`)).body.data,
      beta: (await api("GET", `/workspaces/${beta}`)).body.data,
      list: ids(await api("GET", `/organizations/${ORG}/workspaces`)),
    };
  });

  // What the upgrade must change (and what shows the search below finds what is there): the previous code's clear state.
  check(databasesHolding(store, OUTPUT_SECRET).length > 0, "previous: the store holds the state's output in clear");

  await withRuntimeOf(root, "upgraded", async (api, log) => {
    check(/applied 0016_organization_ids\.sql/.test(log()), "upgraded: applies migration 0016 to the previous code's store");
    const shownAlpha = await api("GET", `/workspaces/${alpha}`);
    const shownBeta = await api("GET", `/workspaces/${beta}`);
    same(shownAlpha.body.data, before.alpha, "upgraded: a workspace reads exactly as before (by id)");
    same(shownBeta.body.data, before.beta, "upgraded: the locked workspace reads exactly as before");
    check((await api("GET", `/organizations/${ORG}/workspaces/alpha`)).body?.data?.id === alpha, "upgraded: name lookup");
    check(JSON.stringify(ids(await api("GET", `/organizations/${ORG}/workspaces`))) === JSON.stringify(before.list), "upgraded: list");
    const tagged = await api("GET", `/organizations/${ORG}/workspaces?filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod`);
    check(JSON.stringify(ids(tagged)) === JSON.stringify([alpha]), "upgraded: tag binding filter");
    check(
      JSON.stringify(ids(await api("GET", `/organizations/${ORG}/workspaces?search%5Btags%5D=flat1`))) === JSON.stringify([alpha]),
      "upgraded: flat tag search",
    );
    const tags = await api("GET", `/organizations/${ORG}/tags`);
    check(tags.body?.data?.[0]?.attributes?.["instance-count"] === 1, "upgraded: organisation tags");
    check((await api("GET", `/workspaces/${alpha}/vars`)).body?.data?.[0]?.attributes?.value === "v", "upgraded: variable (DO)");
    const current = await api("GET", `/workspaces/${beta}/current-state-version`);
    check(current.status === 200, "upgraded: current state version (DO)");
    const outputs = (await api("GET", `/state-versions/${current.body?.data?.id}/outputs`)).body?.data?.map((o) => o.attributes.value);
    check(JSON.stringify(outputs) === JSON.stringify(outputsBefore) && outputs?.[0] === OUTPUT_SECRET, "upgraded: the state's outputs read as before");
    const download = await fetch(current.body?.data?.attributes?.["hosted-state-download-url"]);
    check(download.status === 200 && (await download.text()) === STATE, "upgraded: the state downloads byte for byte");
    check((await api("GET", `/workspaces/${beta}`, undefined, teamToken)).status === 200, "upgraded: the previous team token reads its workspace");
    check((await api("GET", `/organizations/${ORG}`, undefined, orgToken)).status === 200, "upgraded: the previous organisation token");
    check((await api("GET", `/organizations/${ORG}/relationships/data-retention-policy`)).status === 200, "upgraded: organisation retention policy");
    check((await api("GET", `/organizations/${ORG}/varsets`)).body?.data?.length === 1, "upgraded: variable sets");
    const consistent = await api("GET", "/admin/consistency?page%5Bsize%5D=100");
    check(consistent.status === 200 && consistent.body.data.length === 0, "upgraded: the consistency checker finds no difference");

    const renamed = await api("PATCH", `/organizations/${ORG}`, doc("organizations", { name: RENAMED }));
    check(renamed.status === 200 && renamed.body.data.id === RENAMED, "upgraded: rename the organisation");
    check((await api("GET", `/organizations/${ORG}/workspaces/alpha`)).status === 404, "upgraded: the old name answers 404");
    const after = await api("GET", `/workspaces/${alpha}`);
    check(
      after.body?.data?.relationships?.organization?.data?.id === RENAMED && after.body.data.links["self-html"] === `/app/${RENAMED}/workspaces/alpha`,
      "upgraded: workspaces show the new name",
    );
    check(JSON.stringify(ids(await api("GET", `/organizations/${RENAMED}/workspaces`))) === JSON.stringify(before.list), "upgraded: list under the new name");
    check((await api("GET", `/workspaces/${beta}`, undefined, teamToken)).status === 200, "upgraded: the team token after the rename");
    check((await api("GET", `/organizations/${RENAMED}`, undefined, orgToken)).status === 200, "upgraded: the organisation token after the rename");
    check((await api("POST", `/workspaces/${beta}/actions/unlock`)).status === 200, "upgraded: unlock the previous code's lock");
    check((await api("POST", `/organizations/${RENAMED}/workspaces`, doc("workspaces", { name: "gamma" }))).status === 201, "upgraded: create a workspace");
    check((await api("POST", "/organizations", doc("organizations", { name: ORG, email: "u@example.com" }))).status === 201, "upgraded: the old name is free");
    check((await api("GET", `/organizations/${ORG}/workspaces`)).body?.data?.length === 0, "upgraded: the new organisation of that name is empty");
    const again = await api("GET", "/admin/consistency?page%5Bsize%5D=100");
    check(again.status === 200 && again.body.data.length === 0, "upgraded: still consistent after the rename");
  });
  // The object sealed the previous code's rows on its first start above; the runtime is stopped, its files complete.
  for (const [what, secret] of [
    ["a resource attribute", ATTRIBUTE_SECRET],
    ["an output", OUTPUT_SECRET],
  ]) {
    const holding = databasesHolding(store, secret);
    check(holding.length === 0, `upgraded: no database of the store holds ${what} of the state in clear${holding.length ? ` (${holding.join(", ")})` : ""}`);
  }
} catch (err) {
  console.error(err.stack ?? err);
  failures++;
} finally {
  // `--keep`: leave the store for a look (its path is printed).
  if (argv.includes("--keep")) console.log(`store-upgrade: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(failures ? `store-upgrade: ${failures} failure(s)` : "store-upgrade: the previous code's store works after the upgrade");
process.exit(failures ? 1 : 0);
