// OpenTofu's `cloud` block, and its state and plan encryption.
import { readFileSync } from "node:fs";
import { check } from "../lib/harness.mjs";
import { md5, planProblem, sameSet, workspaceList } from "./context.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { ORG, TOFU, tf, tfOk, api, apiOk, workspaceByName, currentState, fixture, planChanges, step, gen, lockContention, killThenForceUnlock } = ctx;
  // ---------------------------------------------------------------- OpenTofu: cloud block
  const tofuDir = fixture("tofu/main", "tofu-main");
  let tofuWs = null;
  const tofuResources = ["terraform_data.base", "terraform_data.slow"];
  // The resource addresses a plan creates (its `changes` lines: "<address> <actions>: ...", outputs left out).
  const created = (p) => p.changes.filter((c) => !c.startsWith("output ") && / create: /.test(c)).map((c) => c.split(" ")[0]);

  await step("tofu: init creates the workspace", async () => {
    await tfOk(tofuDir, ["init", "-input=false", "-no-color"], { client: TOFU });
    const r = await api("GET", `/organizations/${ORG}/workspaces/tofu-main`);
    check(
      r.status === 200,
      `after tofu init, GET /organizations/${ORG}/workspaces/tofu-main answered ${r.status} (expected the workspace): ${r.text.slice(0, 300)}`,
    );
    tofuWs = r.json.data;
  });

  await step("tofu: plan -out, apply of the saved plan; state version, state pull and outputs through the API", async () => {
    tofuWs ??= await workspaceByName("tofu-main");
    const p = await planChanges(tofuDir, gen(1), { client: TOFU });
    check(p.code === 2 && sameSet(created(p), tofuResources), `tofu plan should create ${tofuResources.join(", ")}: ${planProblem(p)}`, p.result);
    await tfOk(tofuDir, ["apply", "-input=false", "-no-color", p.planFile], { client: TOFU });
    const { sv, bytes, state } = await currentState(tofuWs.id);
    check(sv.attributes.status === "finalized", `current state version ${sv.id} status is ${sv.attributes.status}, expected finalized`);
    check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != downloaded state's serial ${state.serial}`);
    const addrs = (state.resources ?? []).map((r) => `${r.type}.${r.name}`);
    check(sameSet(addrs, tofuResources), `downloaded state has resources ${addrs.join(", ")}`);
    check(state.outputs?.greeting?.value === "hello from tofu", `downloaded state's outputs: ${JSON.stringify(state.outputs)}`);
    const pulled = await tfOk(tofuDir, ["state", "pull"], { client: TOFU });
    check(
      md5(Buffer.from(pulled.out)) === md5(bytes) || JSON.stringify(JSON.parse(pulled.out)) === JSON.stringify(state),
      "`tofu state pull` differs from the state downloaded through the signed URL",
      pulled,
    );
    const outs = (await apiOk("GET", `/workspaces/${tofuWs.id}/current-state-version-outputs`)).json.data;
    const byName = Object.fromEntries(outs.map((o) => [o.attributes.name, o.attributes]));
    check(sameSet(Object.keys(byName), ["greeting", "object", "secret"]), `current-state-version-outputs lists ${Object.keys(byName).join(", ")}`);
    check(byName.object.value?.slow === "generation-1", `output object: ${JSON.stringify(byName.object)}`);
    check(
      byName.secret.sensitive === true && byName.secret.value !== "t0fu-s3cr3t",
      `output secret must be sensitive, its value not listed: ${JSON.stringify(byName.secret)}`,
    );
    const ws = (await apiOk("GET", `/workspaces/${tofuWs.id}`)).json.data.attributes;
    check(ws.locked === false, "workspace still locked after tofu apply");
  });

  await step("tofu: state list, output -json and a second plan with no changes", async () => {
    const list = await tfOk(tofuDir, ["state", "list"], { client: TOFU });
    check(sameSet(workspaceList(list.out), tofuResources), `tofu state list: ${list.out.trim()}`, list);
    const out = await tfOk(tofuDir, ["output", "-json"], { client: TOFU });
    const o = JSON.parse(out.out);
    check(o.greeting?.value === "hello from tofu" && o.object?.value?.slow === "generation-1", `tofu output -json: ${out.out.slice(0, 400)}`, out);
    check(o.secret?.sensitive === true && o.secret?.value === "t0fu-s3cr3t", `tofu output -json secret: ${JSON.stringify(o.secret)}`, out);
    const p = await planChanges(tofuDir, gen(1), { client: TOFU });
    check(p.code === 0 && p.changes.length === 0, `second tofu plan is not empty: ${planProblem(p)}`, p.result);
  });

  await step("tofu: lock contention (plan -lock-timeout=0 during a long apply fails; the lock is released)", async () => {
    await lockContention(tofuDir, tofuWs.id, TOFU);
  });

  await step("tofu: kill -9 mid-apply leaves the lock; force-unlock clears it", async () => {
    await killThenForceUnlock(tofuDir, tofuWs.id, `${ORG}/tofu-main`, TOFU);
  });

  // ---------------------------------------------------------------- OpenTofu: state and plan encryption
  // The service stores what tofu uploads: the encrypted envelope ({ serial, lineage, meta, encrypted_data,
  // encryption_version }), whose resources it cannot read. Only tofu with the passphrase reads the state.
  const encDir = fixture("tofu/encrypted", "tofu-encrypted");
  const encEnv = { TF_VAR_passphrase: "clients-tofu-passphrase-0123456789" };
  const encResources = ["terraform_data.first", "terraform_data.second"];
  let encWs = null;
  // `tofu state pull` decrypts (it prints the state in plain text); resolves the parsed state.
  async function encPull() {
    const r = await tfOk(encDir, ["state", "pull"], { client: TOFU, env: encEnv });
    let state;
    try {
      state = JSON.parse(r.out);
    } catch (e) {
      check(false, `tofu state pull printed no JSON state: ${e.message}`, r);
    }
    const addrs = (state.resources ?? []).map((x) => `${x.type}.${x.name}`);
    check(sameSet(addrs, encResources), `tofu state pull (with the passphrase) lists resources [${addrs.join(", ")}]`, r);
    return state;
  }
  // The raw current state through the API's signed download URL: the encrypted envelope, no plain text in it.
  async function checkEnvelope() {
    const { sv, bytes, state } = await currentState(encWs.id);
    check(
      typeof state.encryption_version === "string" && typeof state.encrypted_data === "string" && state.meta,
      `the stored state is not an OpenTofu encrypted envelope (keys: ${Object.keys(state).join(", ")})`,
    );
    check(state.resources === undefined && state.outputs === undefined, "the stored state has plain resources or outputs next to the encrypted data");
    const text = bytes.toString("utf8");
    for (const plain of ["tofu-enc-first-value", "tofu-enc-second-value", "terraform_data"])
      check(!text.includes(plain), `the stored state contains "${plain}" in plain text`);
    check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != the envelope's serial ${state.serial}`);
    return state;
  }

  await step("tofu encryption: init, plan -out (encrypted plan file) and apply with pbkdf2 and aes_gcm; two resources", async () => {
    await tfOk(encDir, ["init", "-input=false", "-no-color"], { client: TOFU, env: encEnv });
    encWs = await workspaceByName("tofu-encrypted");
    const p = await planChanges(encDir, [], { client: TOFU, env: encEnv });
    check(p.code === 2 && sameSet(created(p), encResources), `tofu plan should create ${encResources.join(", ")}: ${planProblem(p)}`, p.result);
    // A plain plan file is a zip archive ("PK"); an encrypted one is a JSON envelope.
    const planBytes = readFileSync(p.planFile);
    let envelope = null;
    try {
      envelope = JSON.parse(planBytes.toString("utf8"));
    } catch {}
    check(
      planBytes.subarray(0, 2).toString() !== "PK" && typeof envelope?.encryption_version === "string",
      `the saved plan ${p.planFile} is not encrypted (starts with ${JSON.stringify(planBytes.subarray(0, 8).toString("latin1"))})`,
    );
    await tfOk(encDir, ["apply", "-input=false", "-no-color", p.planFile], { client: TOFU, env: encEnv });
    const list = await tfOk(encDir, ["state", "list"], { client: TOFU, env: encEnv });
    check(sameSet(workspaceList(list.out), encResources), `tofu state list: ${list.out.trim()}`, list);
    const ws = (await apiOk("GET", `/workspaces/${encWs.id}`)).json.data.attributes;
    check(ws.locked === false, "workspace still locked after tofu apply");
  });

  await step("tofu encryption: the API serves the encrypted envelope; state pull decrypts it with the passphrase, not a wrong one", async () => {
    const envelope = await checkEnvelope();
    const state = await encPull();
    check(
      state.lineage === envelope.lineage && state.serial === envelope.serial,
      `decrypted lineage/serial ${state.lineage}/${state.serial} != the envelope's ${envelope.lineage}/${envelope.serial}`,
    );
    // The outputs as the decrypted state holds them (`tofu output` reads current-state-version-outputs instead,
    // which the service derives from the stored state, here the envelope).
    check(
      JSON.stringify(state.outputs?.names?.value) === JSON.stringify(["tofu-enc-first-value", "tofu-enc-second-value"]),
      `the decrypted state's outputs: ${JSON.stringify(state.outputs)}`,
    );
    const wrong = await tf(encDir, ["state", "pull"], { client: TOFU, env: { TF_VAR_passphrase: "not-the-right-passphrase-at-all" } });
    check(wrong.code !== 0, "tofu state pull with a wrong passphrase succeeded: the state is not encrypted with the passphrase", wrong);
    const p = await planChanges(encDir, [], { client: TOFU, env: encEnv });
    check(p.code === 0 && p.changes.length === 0, `second tofu plan is not empty: ${planProblem(p)}`, p.result);
  });

  // Last of the scenario: a safe delete the service answered with 204 would delete the workspace.
  await step("tofu encryption: safe delete refused (409) for state the service cannot read; workspace and state kept", async () => {
    const r = await api("POST", `/workspaces/${encWs.id}/actions/safe-delete`);
    check(
      r.status === 409 && r.json?.errors?.[0]?.status === "409",
      `POST /api/v2/workspaces/${encWs.id}/actions/safe-delete answered ${r.status} (expected 409: the encrypted state's resources cannot be counted): ${r.text.slice(0, 400)}`,
    );
    const ws = await api("GET", `/workspaces/${encWs.id}`);
    check(ws.status === 200, `after the refused safe delete, GET /api/v2/workspaces/${encWs.id} answered ${ws.status}`);
    await checkEnvelope();
    await encPull();
  });
}
