// Remote runs on an organisation agent pool's agent (`npm run agent`), a workspace in `agent` execution mode.
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { check, StepError, waitFor } from "../lib/harness.mjs";
import { groups, tail } from "../lib/service.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { work, service, proxy, terraform, nullProvider, tfOk, api, apiOk, fixture, step, REMOTE_ORG, remoteEnv, remote, serviceRoot } = ctx;
  const { finishedRun, remoteState, sameKeys } = ctx;
  // ---------------------------------------------------------------- remote runs on a pool's agent
  await step("agent: a pool, its token, a workspace in agent mode and an agent process of the pool", async () => {
    remote.pool = (
      await apiOk("POST", `/organizations/${REMOTE_ORG}/agent-pools`, {
        data: { type: "agent-pools", attributes: { name: "clients-pool", "organization-scoped": true } },
      })
    ).json.data;
    const token = (
      await apiOk("POST", `/agent-pools/${remote.pool.id}/authentication-tokens`, {
        data: { type: "authentication-tokens", attributes: { description: "clients agent" } },
      })
    ).json.data.attributes.token;
    check(typeof token === "string" && token.length > 0, "the agent token's create answered no token");
    remote.agentWs = (
      await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, {
        data: { type: "workspaces", attributes: { name: "rr-agent", "execution-mode": "agent", "agent-pool-id": remote.pool.id } },
      })
    ).json.data;
    check(remote.agentWs.attributes["execution-mode"] === "agent", `workspace rr-agent execution-mode ${remote.agentWs.attributes["execution-mode"]}`);
    const logFile = join(work, "logs", "agent-pool.log");
    const fd = openSync(logFile, "w");
    const args = [
      "--url",
      service.base,
      "--token",
      token,
      "--plugin-mirror",
      nullProvider.mirror,
      "--terraform",
      terraform.path,
      "--name",
      "clients-pool-agent",
    ];
    const child = spawn("npm", ["run", "agent", "--", ...args], {
      cwd: serviceRoot,
      detached: true,
      stdio: ["ignore", fd, fd],
      // Not the clients' TF_* settings (their CLI configuration): the agent writes its own for each job.
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|TFE_|TFC_|AGENT_)/.test(k))),
    });
    closeSync(fd);
    if (child.pid) groups.add(child.pid);
    let exited = null;
    child.on("exit", (code, sig) => (exited = sig ?? `code ${code}`));
    remote.agent = { pid: child.pid, logFile };
    let agents = [];
    try {
      await waitFor("the pool's agent to register (GET /agent-pools/:id/agents)", async () => {
        check(!exited, `npm run agent exited (${exited}); last lines of ${logFile}:\n${tail(logFile)}`);
        agents = (await api("GET", `/agent-pools/${remote.pool.id}/agents`)).json?.data ?? [];
        return agents.some((x) => ["idle", "busy"].includes(x.attributes?.status));
      });
    } catch (e) {
      throw new StepError(`${e.message}; agents listed: ${JSON.stringify(agents.map((x) => x.attributes))}; last lines of ${logFile}:\n${tail(logFile)}`);
    }
  });

  await step("agent: plan and apply -auto-approve run on the pool's agent", async () => {
    const dir = fixture("remote/agent", "remote-agent");
    await tfOk(dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
    let mark = proxy.mark();
    const p = await tfOk(dir, ["plan", "-input=false", "-no-color"], { env: remoteEnv });
    check(p.out.includes("Plan: 1 to add, 0 to change, 0 to destroy."), 'the streamed plan does not say "Plan: 1 to add, 0 to change, 0 to destroy."', p);
    const planned = await finishedRun(p, mark, "planned_and_finished");
    mark = proxy.mark();
    const a = await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
    check(
      a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
      'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
      a,
    );
    const r = await finishedRun(a, mark, "applied");
    for (const [label, phase] of [
      ["the speculative plan", planned.plan],
      ["the plan", r.plan],
      ["the apply", r.apply],
    ]) {
      const d = phase["execution-details"] ?? {};
      check(
        d.mode === "agent" && d["agent-pool-id"] === remote.pool.id,
        `${label}'s execution-details ${JSON.stringify(d)}: expected mode agent on pool ${remote.pool.id}`,
      );
    }
    const { res } = await remoteState(remote.agentWs.id);
    check(sameKeys(res, ["null_resource.foo"]), `the state has [${Object.keys(res).join(", ")}], expected [null_resource.foo]`);
  });
}
