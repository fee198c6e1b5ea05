// Terraform's `cloud` block (local operations): the decoy workspaces, init, apply, state and outputs through the API,
// lock contention, kill -9 and force-unlock, migration of a local state, tag strategies, a state of several MB.
import { randomBytes } from "node:crypto";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check } from "../lib/harness.mjs";
import { md5, planProblem, sameSet, workspaceList } from "./context.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { fixtures, ORG, OTHER_ORG, service, proxy, TF, tf, tfOk, api, apiOk, workspaceByName, createWorkspace, currentState, fixture } = ctx;
  const { planChanges, step, lockContention, killThenForceUnlock, main } = ctx;
  await step("setup: organisations and decoy workspaces (through the API)", async () => {
    // The CLI configuration's host block stands in for discovery; the document itself must map the same services.
    const disco = await fetch(`${service.base}/.well-known/terraform.json`).then((r) => r.json());
    for (const id of ["tfe.v2", "tfe.v2.1", "tfe.v2.2"])
      check(disco[id] === "/api/v2/", `/.well-known/terraform.json maps ${id} to ${JSON.stringify(disco[id])}`);
    // Local operations by default: these scenarios test state storage and locking with Terraform running here; the
    // remote-run scenarios use their own organisation and set each workspace's execution mode.
    for (const name of [ORG, OTHER_ORG]) {
      await apiOk("POST", "/organizations", {
        data: { type: "organizations", attributes: { name, email: `${name}@clients.test`, "default-execution-mode": "local" } },
      });
    }
    // Decoys: none of these may be listed by the tag-set or tag-map configurations.
    await createWorkspace(ORG, "decoy-one-tag", { tags: ["clients-app"] });
    await createWorkspace(OTHER_ORG, "decoy-other-org", { tags: ["clients-app", "clients-cli"], bindings: { env: "dev", team: "clients" } });
    await createWorkspace(ORG, "decoy-env-prod", { bindings: { env: "prod", team: "clients" } });
    await createWorkspace(ORG, "decoy-half", { bindings: { env: "dev" } });
    await createWorkspace(ORG, "decoy-flat", { tags: ["env", "team", "dev", "clients"] });
  });

  // ---------------------------------------------------------------- cloud block
  main.dir = fixture("cloud/main");
  const gen = (g, sleepSeconds = 0) => ["-var", `generation=${g}`, "-var", `sleep_seconds=${sleepSeconds}`];

  await step("cloud: init creates the workspace", async () => {
    await tfOk(main.dir, ["init", "-input=false", "-no-color"]);
    const r = await api("GET", `/organizations/${ORG}/workspaces/cb-main`);
    check(r.status === 200, `after init, GET /organizations/${ORG}/workspaces/cb-main answered ${r.status} (expected the workspace): ${r.text.slice(0, 300)}`);
    main.ws = r.json.data;
  });

  await step("cloud: apply; state version, outputs and signed download URL through the API", async () => {
    await tfOk(main.dir, ["apply", "-auto-approve", "-input=false", "-no-color", ...gen(1)]);
    main.ws ??= await workspaceByName("cb-main");
    const { sv, bytes, state } = await currentState(main.ws.id);
    check(sv.attributes.status === "finalized", `current state version ${sv.id} status is ${sv.attributes.status}, expected finalized`);
    check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != downloaded state's serial ${state.serial}`);
    if (sv.attributes.lineage !== undefined)
      check(sv.attributes.lineage === state.lineage, `state version lineage ${sv.attributes.lineage} != state's ${state.lineage}`);
    const addrs = state.resources.map((r) => `${r.type}.${r.name}`).sort();
    check(sameSet(addrs, ["terraform_data.base", "terraform_data.slow"]), `downloaded state has resources ${addrs.join(", ")}`);
    check(state.outputs?.greeting?.value === "hello", `downloaded state's outputs: ${JSON.stringify(state.outputs)}`);
    const pulled = await tfOk(main.dir, ["state", "pull"]);
    check(
      md5(Buffer.from(pulled.out)) === md5(bytes) || JSON.stringify(JSON.parse(pulled.out)) === JSON.stringify(state),
      "`terraform state pull` differs from the state downloaded through the signed URL",
    );
    // Outputs through the API: the current state version's outputs.
    const outs = (await apiOk("GET", `/workspaces/${main.ws.id}/current-state-version-outputs`)).json.data;
    const byName = Object.fromEntries(outs.map((o) => [o.attributes.name, o.attributes]));
    check(sameSet(Object.keys(byName), ["greeting", "numbers", "object", "secret"]), `current-state-version-outputs lists ${Object.keys(byName).join(", ")}`);
    check(byName.greeting.value === "hello" && byName.greeting.sensitive === false, `output greeting: ${JSON.stringify(byName.greeting)}`);
    check(JSON.stringify(byName.numbers.value) === "[1,2,3]", `output numbers: ${JSON.stringify(byName.numbers)}`);
    check(byName.object.value?.slow === "generation-1", `output object: ${JSON.stringify(byName.object)}`);
    check(
      byName.secret.sensitive === true && byName.secret.value !== "s3cr3t",
      `output secret must be sensitive and its value not listed: ${JSON.stringify(byName.secret)}`,
    );
    const svOuts = (await apiOk("GET", `/state-versions/${sv.id}/outputs`)).json.data;
    check(svOuts.length === 4, `GET /state-versions/${sv.id}/outputs lists ${svOuts.length} outputs, expected 4`);
    const secretOut = svOuts.find((o) => o.attributes.name === "secret");
    const shown = (await apiOk("GET", `/state-version-outputs/${secretOut.id}`)).json.data.attributes;
    check(shown.value === "s3cr3t", `GET /state-version-outputs/${secretOut.id} (the sensitive output, read by id) value: ${JSON.stringify(shown.value)}`);
    const ws = (await apiOk("GET", `/workspaces/${main.ws.id}`)).json.data.attributes;
    check(ws.locked === false, "workspace still locked after apply");
  });

  await step("cloud: state list, output -json and a second plan with no changes", async () => {
    const list = await tfOk(main.dir, ["state", "list"]);
    check(sameSet(workspaceList(list.out), ["terraform_data.base", "terraform_data.slow"]), `terraform state list: ${list.out.trim()}`, list);
    const out = await tfOk(main.dir, ["output", "-json"]);
    const o = JSON.parse(out.out);
    check(
      o.greeting?.value === "hello" && JSON.stringify(o.numbers?.value) === "[1,2,3]" && o.object?.value?.slow === "generation-1",
      `terraform output -json: ${out.out.slice(0, 400)}`,
      out,
    );
    check(o.secret?.sensitive === true && o.secret?.value === "s3cr3t", `terraform output -json secret: ${JSON.stringify(o.secret)}`, out);
    const p = await planChanges(main.dir, gen(1));
    check(p.code === 0 && p.changes.length === 0, `second plan is not empty: ${planProblem(p)}`, p.result);
  });

  await step("cloud: lock contention (plan -lock-timeout=0 during a long apply fails; the lock is released)", async () => {
    await lockContention(main.dir, main.ws.id, TF);
  });

  await step("cloud: kill -9 mid-apply leaves the lock; force-unlock clears it", async () => {
    await killThenForceUnlock(main.dir, main.ws.id, `${ORG}/cb-main`, TF);
  });

  await step("cloud: migration of an existing local state into the cloud block", async () => {
    const dir = fixture("cloud/migrate-local", "migrate");
    await tfOk(dir, ["init", "-input=false", "-no-color"]);
    await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
    const local = JSON.parse(readFileSync(join(dir, "terraform.tfstate"), "utf8"));
    cpSync(join(fixtures, "cloud", "migrate-cloud", "main.tf"), join(dir, "main.tf"));
    // -force-copy is refused for HCP Terraform migrations: answer the interactive prompt ("copy existing state?");
    // -migrate-state is refused too: a plain init finds the local state and asks.
    const mig = await tf(dir, ["init", "-no-color"], { input: "yes\nyes\n" });
    check(mig.code === 0, `\`${mig.cmd}\` (answering "yes" to the migration prompt) exited with ${mig.code ?? mig.signal}`, mig);
    const ws = await workspaceByName("cb-migrated");
    const { state } = await currentState(ws.id);
    const upload = proxy.records.filter((x) => x.method === "POST" && x.path.startsWith(`/api/v2/workspaces/${ws.id}/state-versions`)).at(-1);
    const sentLineage = (/"lineage":"([^"]+)"/.exec(upload?.reqBody ?? "") ?? [])[1];
    check(state.lineage === sentLineage, `stored state lineage ${state.lineage} != the lineage terraform uploaded (${sentLineage})`);
    // (Terraform 1.11 gives the migrated state a new lineage itself, so the local lineage is not compared.)
    check(JSON.stringify(state.resources) === JSON.stringify(local.resources), "migrated state's resources differ from the local state's");
    check(state.outputs?.answer?.value === 42, `migrated outputs: ${JSON.stringify(state.outputs)}`);
    const p = await planChanges(dir);
    check(p.code === 0 && p.changes.length === 0, `plan after migration: ${planProblem(p)}`, p.result);
  });

  // Tag strategies: init creates the first workspace (its name given at the prompt), `workspace new` a second;
  // `workspace list` must show exactly those (decoys left out); select; delete.
  async function tagScenario({ fixtureName, first, second, checkTags }) {
    const dir = fixture(fixtureName);
    const init = await tf(dir, ["init", "-no-color"], { input: `${first}\n` });
    check(init.code === 0, `\`${init.cmd}\` (answering "${first}" at the workspace-name prompt) exited with ${init.code ?? init.signal}`, init);
    await checkTags(await workspaceByName(first));
    const nw = await tfOk(dir, ["workspace", "new", "-no-color", second]);
    await checkTags(await workspaceByName(second));
    let list = await tfOk(dir, ["workspace", "list", "-no-color"]);
    check(
      sameSet(workspaceList(list.out), [first, second]),
      `terraform workspace list shows [${workspaceList(list.out).join(", ")}], expected exactly [${first}, ${second}]`,
      list,
    );
    await tfOk(dir, ["workspace", "select", "-no-color", first]);
    const shown = await tfOk(dir, ["workspace", "show", "-no-color"]);
    check(shown.out.trim() === first, `terraform workspace show: ${shown.out.trim()}`, shown);
    await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
    await tfOk(dir, ["workspace", "delete", "-no-color", second], { env: {} });
    const gone = await api("GET", `/organizations/${ORG}/workspaces/${second}`);
    check(gone.status === 404, `after workspace delete, GET /organizations/${ORG}/workspaces/${second} answered ${gone.status}`);
    list = await tfOk(dir, ["workspace", "list", "-no-color"]);
    check(sameSet(workspaceList(list.out), [first]), `terraform workspace list after delete shows [${workspaceList(list.out).join(", ")}]`, list);
    void nw;
  }

  await step("cloud: tag set with workspace new/list/select/delete (decoys not listed)", async () => {
    await tagScenario({
      fixtureName: "cloud/tag-set",
      first: "ts-one",
      second: "ts-two",
      checkTags: async (ws) => {
        const names = ws.attributes["tag-names"] ?? [];
        check(
          ["clients-app", "clients-cli"].every((t) => names.includes(t)),
          `workspace ${ws.attributes.name} tag-names ${JSON.stringify(names)}, expected clients-app and clients-cli`,
        );
      },
    });
  });

  await step("cloud: key-value tag map with workspace new/list/select/delete (decoys not listed)", async () => {
    await tagScenario({
      fixtureName: "cloud/tag-map",
      first: "kv-one",
      second: "kv-two",
      checkTags: async (ws) => {
        const b = (await apiOk("GET", `/workspaces/${ws.id}/tag-bindings`)).json.data.map((x) => x.attributes);
        const got = Object.fromEntries(b.map((x) => [x.key, x.value]));
        check(
          got.env === "dev" && got.team === "clients",
          `workspace ${ws.attributes.name} tag bindings ${JSON.stringify(got)}, expected env=dev, team=clients`,
        );
      },
    });
  });

  await step("cloud: a state of several MB round-tripped with its md5 checked", async () => {
    const dir = fixture("cloud/big");
    const blob = randomBytes(1536 * 1024).toString("hex"); // 3 MiB of text; the state holds it twice
    writeFileSync(join(dir, "big.txt"), blob);
    await tfOk(dir, ["init", "-input=false", "-no-color"]);
    const mark = proxy.mark();
    await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
    const ws = await workspaceByName("cb-big");
    const create = proxy.records.filter((x) => x.seq > mark && x.method === "POST" && x.path.startsWith(`/api/v2/workspaces/${ws.id}/state-versions`)).at(-1);
    check(create && create.status === 201, `no successful POST /api/v2/workspaces/${ws.id}/state-versions from terraform (got ${create?.status})`);
    const sentMd5 = (/"md5":"([0-9a-f]{32})"/.exec(create.reqBody) ?? [])[1];
    check(sentMd5, `could not read the md5 terraform sent in POST .../state-versions: ${create.reqBody.slice(0, 300)}`);
    const { bytes, state } = await currentState(ws.id);
    check(bytes.length > 5 * 1024 * 1024, `downloaded state is ${bytes.length} bytes, expected more than 5 MiB`);
    check(
      md5(bytes) === sentMd5,
      `md5 of the state downloaded through the signed URL ${md5(bytes)} != md5 terraform uploaded ${sentMd5} (${bytes.length} bytes)`,
    );
    const attr = state.resources?.[0]?.instances?.[0]?.attributes?.input; // terraform_data: { value, type }
    const input = typeof attr === "object" && attr !== null ? attr.value : attr;
    check(input === blob, `the big attribute came back different (md5 ${md5(String(input))} vs ${md5(blob)})`);
    // `state pull` prints the state and one more newline: compare without trailing newlines.
    const pulled = await tfOk(dir, ["state", "pull"]);
    const trimmed = (b) => md5(b.toString("utf8").replace(/\n+$/, ""));
    check(
      trimmed(Buffer.from(pulled.out)) === trimmed(bytes),
      `\`terraform state pull\` (md5 ${md5(Buffer.from(pulled.out))}) differs from the state downloaded through the signed URL (md5 ${md5(bytes)})`,
      pulled,
    );
    const p = await planChanges(dir);
    check(p.code === 0 && p.changes.length === 0, `plan after the big apply: ${planProblem(p)}`, p.result);
  });
}
