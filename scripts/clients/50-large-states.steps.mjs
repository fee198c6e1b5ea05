// The real-client steps of large states, called from scripts/clients.mjs with its helpers: a state of about 5 MB
// planned and applied in `remote` execution (its JSON plans, about 20 MB, stream through the agent's artifact uploads
// and the API's signed URLs), and a state of about 100 MB pushed, pulled and planned against in `local` execution.
import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { check } from "../lib/harness.mjs";
import { md5 } from "./context.mjs";

const MiB = 1024 * 1024;
/** What one agent artifact request used to be limited to: the 5 MB state's JSON plan is past it. */
const OLD_ARTIFACT_LIMIT = 16 * MiB;

/** @param {import("./context.mjs").ClientContext} h */
export default async function (h) {
  const { step, tfOk, apiOk, fixture, currentState, service } = h;
  // An API path followed through its redirect (a signed URL) with the admin token.
  const fetchApi = (/** @type {string} */ path) =>
    fetch(`${service.base}/api/v2${path}`, { headers: { Authorization: `Bearer ${service.token}` }, signal: AbortSignal.timeout(120_000) });
  const big = { dir: null, ws: null };

  // The JSON plan of a run through the API's redirect to its signed URL: its size.
  const jsonPlanBytes = async (id, path, collection = "runs") => {
    const res = await fetchApi(`/${collection}/${id}/${path}`);
    check(res.status === 200, `GET /${collection}/${id}/${path} (followed to its signed URL) answered ${res.status}`);
    return (await res.arrayBuffer()).byteLength;
  };

  await step("remote: a ~5 MB state applied, planned with no changes (its ~20 MB JSON plan past the old 16 MiB limit) and applied again", async () => {
    big.ws = (
      await apiOk("POST", `/organizations/${h.REMOTE_ORG}/workspaces`, {
        data: { type: "workspaces", attributes: { name: "rr-big", "execution-mode": "remote" } },
      })
    ).json.data;
    big.dir = fixture("remote/big", "remote-big");
    const first = randomBytes(1.25 * MiB).toString("hex");
    writeFileSync(join(big.dir, "big.txt"), first);
    await tfOk(big.dir, ["init", "-input=false", "-no-color"], { env: h.remoteEnv });
    let mark = h.proxy.mark();
    const a1 = await tfOk(big.dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: h.remoteEnv });
    await h.finishedRun(a1, mark, "applied");
    let { bytes, state } = await currentState(big.ws.id);
    check(bytes.length > 4.5 * MiB, `the state is ${bytes.length} bytes, expected about 5 MB`);
    const input = (s) => {
      const attr = s.resources?.[0]?.instances?.[0]?.attributes?.input;
      return typeof attr === "object" && attr !== null ? attr.value : attr;
    };
    check(input(state) === first, `the big attribute came back different (md5 ${md5(String(input(state)))} vs ${md5(first)})`);

    mark = h.proxy.mark();
    const p = await tfOk(big.dir, ["plan", "-input=false", "-no-color"], { env: h.remoteEnv });
    check(/No changes\./.test(p.out), "the remote plan of the unchanged configuration does not say `No changes.`", p);
    const planned = await h.finishedRun(p, mark, "planned_and_finished");
    const full = await jsonPlanBytes(planned.id, "plan/json-output");
    check(full > OLD_ARTIFACT_LIMIT, `the run's JSON plan is ${full} bytes, expected more than ${OLD_ARTIFACT_LIMIT} (the old artifact limit)`);
    const redacted = await jsonPlanBytes(planned.relationships.plan.data.id, "json-output-redacted", "plans");
    // The redacted plan (which Terraform reads to render the remote plan) leaves out the prior state: about half.
    check(redacted > 8 * MiB, `the run's redacted JSON plan is ${redacted} bytes, expected about 10 MB`);

    const second = randomBytes(1.25 * MiB).toString("hex");
    writeFileSync(join(big.dir, "big.txt"), second);
    mark = h.proxy.mark();
    const a2 = await tfOk(big.dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: h.remoteEnv });
    check(/1 changed|1 added, 0 changed, 1 destroyed/.test(a2.out), "the second apply does not report the big resource changed or replaced", a2);
    await h.finishedRun(a2, mark, "applied");
    ({ bytes, state } = await currentState(big.ws.id));
    check(input(state) === second, `after the second apply the big attribute is not the new content (md5 ${md5(String(input(state)))} vs ${md5(second)})`);
  });

  await step("cloud: a ~100 MB state pushed, pulled, downloaded and planned against in local execution", async () => {
    const dir = fixture("cloud/huge");
    await tfOk(dir, ["init", "-input=false", "-no-color"]);
    // 100 terraform_data instances holding 1 MiB each (input and output): about 100 MB.
    const resources = [];
    for (let i = 0; i < 100; i++) {
      const value = randomBytes(256 * 1024).toString("hex");
      resources.push({
        mode: "managed",
        type: "terraform_data",
        name: `r${i}`,
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [
          {
            schema_version: 0,
            attributes: { id: randomUUID(), input: { value, type: "string" }, output: { value, type: "string" }, triggers_replace: null },
            sensitive_attributes: [],
          },
        ],
      });
    }
    const pushed = `${JSON.stringify({ version: 4, terraform_version: h.terraform.version, serial: 1, lineage: randomUUID(), outputs: {}, resources }, null, 2)}\n`;
    check(pushed.length > 100 * MiB, `the generated state is ${pushed.length} bytes, expected more than 100 MiB`);
    writeFileSync(join(dir, "huge.tfstate"), pushed);
    await tfOk(dir, ["state", "push", "huge.tfstate"]);

    const ws = await h.workspaceByName("cb-huge");
    const { bytes, state } = await currentState(ws.id);
    check(bytes.length > 100 * MiB, `the state downloaded through the signed URL is ${bytes.length} bytes, expected more than 100 MiB`);
    check(state.resources?.length === 100, `the downloaded state has ${state.resources?.length} resources, expected 100`);
    const sample = state.resources.find((r) => r.name === "r42")?.instances?.[0]?.attributes?.input?.value;
    check(sample === resources[42].instances[0].attributes.input.value, "the downloaded state's r42 differs from the one pushed");

    const pulled = await tfOk(dir, ["state", "pull"]);
    const trimmed = (b) => md5(b.toString("utf8").replace(/\n+$/, ""));
    check(
      trimmed(Buffer.from(pulled.out)) === trimmed(bytes),
      `\`terraform state pull\` (md5 ${md5(Buffer.from(pulled.out))}) differs from the state downloaded through the signed URL (md5 ${md5(bytes)})`,
    );
    // A local plan reads the whole state from the service: the configuration declares none of it, so all goes.
    const plan = await tfOk(dir, ["plan", "-refresh=false", "-input=false", "-no-color"]);
    check(
      /Plan: 0 to add, 0 to change, 100 to destroy\./.test(plan.out),
      "the local plan against the 100 MB state does not plan to destroy its 100 resources",
      plan,
    );
  });
}
