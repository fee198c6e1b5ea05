/** @jsxImportSource hono/jsx */
/**
 * A workspace's version control in the web UI: the page reads through the VCS service; connecting, changing and
 * disconnecting go through the workspace's update (PATCH /workspaces/:id `vcs-repo`), which authorises and checks
 * every rule again; a refusal of the input shows the API's reasons next to the form (422).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { validationError } from "../../jsonapi/validation";
import { listOrgClients } from "../../oauth/oauth.service";
import { readVcs } from "../../vcs/vcs.service";
import { workspaceAttributesInput } from "../../workspaces/workspaces.schemas";
import { updateWorkspace } from "../../workspaces/workspaces.write.service";
import { callerOf, type Ctx, flagsOf, nameOf, orgOf, wsPath } from "../context";
import { definePage } from "../define-page";
import { type Form, reasonsOf, type Refusal, refusesInput, text } from "../forms";
import { type TokenChoice, VcsPage, vcsPath } from "./vcs.view";

export const vcsUi = new Hono<AppEnv>();

async function vcsPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const view = await readVcs(caller, orgOf(c), nameOf(c));
  const { record } = view.readable;
  const canWrite = flagsOf(view.readable)["can-update"] === true;
  let tokens: TokenChoice[] = [];
  if (canWrite) {
    const { clients } = await listOrgClients(caller, orgOf(c), { number: 1, size: 100 });
    tokens = clients.flatMap((cl) =>
      cl.tokenIds.map((id) => ({
        id,
        label: `${String(cl.client.attrs.name ?? cl.client.attrs["service-provider"])} (${String(cl.client.attrs["service-provider"])}, ${id})`,
      })),
    );
  }
  const s = record.settings;
  return c.html(
    <VcsPage
      principal={caller.principal}
      ws={{ organization: view.readable.scope.access.organization.name, name: record.name }}
      settings={{
        repo: s["vcs-repo"],
        workingDirectory: s["working-directory"],
        fileTriggersEnabled: s["file-triggers-enabled"],
        triggerPatterns: s["trigger-patterns"],
        triggerPrefixes: s["trigger-prefixes"],
        speculativeEnabled: s["speculative-enabled"],
        queueAllRuns: s["queue-all-runs"],
      }}
      hook={view.hook}
      deliveries={view.deliveries}
      tokens={tokens}
      canWrite={canWrite}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

const list = (raw: string) =>
  raw
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter((x) => x !== "");

/** The form's fields as the API's attributes: the same schema and rules as a PATCH validate them. */
function connectAttributes(form: Form): Record<string, unknown> {
  const patterns = list(text(form, "trigger-patterns"));
  const prefixes = list(text(form, "trigger-prefixes"));
  return {
    "vcs-repo": {
      identifier: text(form, "identifier").trim(),
      "oauth-token-id": text(form, "oauth-token-id"),
      branch: text(form, "branch").trim(),
      "tags-regex": text(form, "tags-regex").trim() || null,
    },
    "working-directory": text(form, "working-directory").trim() || null,
    "trigger-patterns": patterns,
    "trigger-prefixes": prefixes,
    "file-triggers-enabled": text(form, "file-triggers-enabled") === "on",
    "speculative-enabled": text(form, "speculative-enabled") === "on",
    "queue-all-runs": text(form, "queue-all-runs") === "on",
  };
}

definePage(vcsUi, "get", "/:organization/workspaces/:name/version-control", "workspace.read", (c) => vcsPage(c));

definePage(vcsUi, "post", "/:organization/workspaces/:name/version-control", "workspace.update", async (c) => {
  const form = (await c.req.parseBody()) as Form;
  const values = Object.fromEntries(
    ["oauth-token-id", "identifier", "branch", "working-directory", "trigger-patterns", "trigger-prefixes", "tags-regex"].map((k) => [k, text(form, k)]),
  );
  for (const k of ["file-triggers-enabled", "speculative-enabled", "queue-all-runs"]) values[k] = String(text(form, k) === "on");
  const parsed = workspaceAttributesInput.safeParse(connectAttributes(form));
  if (!parsed.success) return vcsPage(c, { form: "connect", values, errors: reasonsOf(validationError(parsed.error, "json")) });
  try {
    await updateWorkspace(callerOf(c), { organization: orgOf(c), name: nameOf(c) }, { type: "workspaces", attributes: parsed.data });
  } catch (e) {
    if (refusesInput(e)) return vcsPage(c, { form: "connect", values, errors: reasonsOf(e) });
    throw e;
  }
  return c.redirect(vcsPath({ organization: orgOf(c), name: nameOf(c) }), 303);
});

definePage(vcsUi, "post", "/:organization/workspaces/:name/version-control/disconnect", "workspace.update", async (c) => {
  await updateWorkspace(callerOf(c), { organization: orgOf(c), name: nameOf(c) }, { type: "workspaces", attributes: { "vcs-repo": null } });
  return c.redirect(wsPath(orgOf(c), nameOf(c)), 303);
});
