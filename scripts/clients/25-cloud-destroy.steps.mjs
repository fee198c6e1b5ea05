// The `cloud` block's workspace destroyed, after the provider's steps (tfe_outputs reads cb-migrated, not cb-main).
import { check } from "../lib/harness.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { gen, tfOk, apiOk, currentState, step, main } = ctx;
  await step("cloud: destroy", async () => {
    await tfOk(main.dir, ["destroy", "-auto-approve", "-input=false", "-no-color", ...gen(3)]);
    const list = await tfOk(main.dir, ["state", "list"]);
    check(list.out.trim() === "", `terraform state list after destroy: ${list.out.trim()}`, list);
    const { state } = await currentState(main.ws.id);
    check((state.resources ?? []).length === 0, `the current state still has resources: ${state.resources.map((r) => `${r.type}.${r.name}`).join(", ")}`);
    const outs = (await apiOk("GET", `/workspaces/${main.ws.id}/current-state-version-outputs`)).json.data;
    check(outs.length === 0, `current-state-version-outputs after destroy lists ${outs.map((o) => o.attributes.name).join(", ")}`);
    const ws = (await apiOk("GET", `/workspaces/${main.ws.id}`)).json.data.attributes;
    check(ws.locked === false, "workspace locked after destroy");
  });
}
