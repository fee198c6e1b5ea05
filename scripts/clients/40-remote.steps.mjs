// Remote runs: Terraform's `cloud` block with workspaces in `remote` execution mode, run by the service's own agent.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check, waitFor } from "../lib/harness.mjs";
import { startRunTaskReceiver } from "../lib/receivers.mjs";
import { killGroup } from "../lib/service.mjs";

/** @param {import("./context.mjs").ClientContext} ctx */
export default async function (ctx) {
  const { log, proxy, tf, tfOk, api, apiOk, fixture, step, REMOTE_ORG, remoteEnv, remote, tfTerminal, waitOutput, PROMPT, runIdOf, runIdFrom } = ctx;
  const { readRun, runStatus, waitRunStatus, runSummary, at, finishedRun, remoteState, sameKeys, clientCalled } = ctx;
  // ---------------------------------------------------------------- remote runs
  // Terraform's `cloud` block with remote operations. Workspaces in `remote` execution mode are run by the service's
  // own agent (started by `npm start`, given the stand-in's mirror in AGENT_PLUGIN_MIRROR); a workspace in `agent`
  // mode by an agent process of an organisation agent pool started here (`npm run agent`). The configurations use
  // null_resource (test/clients/null-provider), installed on both sides from the same filesystem mirror, so the hashes
  // in the uploaded .terraform.lock.hcl match. A separate organisation, so `--only remote` runs on its own.

  await step("remote: organisation and workspaces in remote execution mode (through the API)", async () => {
    remote.dir = fixture("remote/main", "remote-main");
    remote.cancelDir = fixture("remote/cancel", "remote-cancel");
    await apiOk("POST", "/organizations", { data: { type: "organizations", attributes: { name: REMOTE_ORG, email: `${REMOTE_ORG}@clients.test` } } });
    for (const name of ["rr-main", "rr-cancel"]) {
      const ws = (
        await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, { data: { type: "workspaces", attributes: { name, "execution-mode": "remote" } } })
      ).json.data;
      check(ws.attributes["execution-mode"] === "remote", `workspace ${name} execution-mode ${ws.attributes["execution-mode"]}, expected remote`);
      if (name === "rr-main") remote.ws = ws;
      else remote.cancelWs = ws;
    }
    // Makes the stand-in's plan wait (up to 2 minutes, cut short by a cancel) in rr-cancel only.
    await apiOk("POST", `/workspaces/${remote.cancelWs.id}/vars`, {
      data: { type: "vars", attributes: { key: "NULL_STANDIN_PLAN_SECONDS", value: "120", category: "env", hcl: false, sensitive: false } },
    });
    const ent = (await apiOk("GET", `/organizations/${REMOTE_ORG}/entitlement-set`)).json.data.attributes;
    check(ent.operations === true, `the organisation's entitlement-set says operations: ${ent.operations}, so Terraform would run everything locally`);
  });

  await step("remote: init installs null from the mirror; plan streams the remote plan (1 to add)", async () => {
    const init = await tfOk(remote.dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
    const lock = readFileSync(join(remote.dir, ".terraform.lock.hcl"), "utf8");
    check(
      /registry\.terraform\.io\/hashicorp\/null"[\s\S]*version\s*=\s*"3\.2\.3"/.test(lock),
      `.terraform.lock.hcl does not pin hashicorp/null 3.2.3: ${lock}`,
      init,
    );
    const mark = proxy.mark();
    const p = await tfOk(remote.dir, ["plan", "-input=false", "-no-color"], { env: remoteEnv });
    check(/Running plan in /.test(p.out), 'terraform plan did not run remotely (no "Running plan in …" header)', p);
    check(p.out.includes("Plan: 1 to add, 0 to change, 0 to destroy."), 'the streamed plan does not say "Plan: 1 to add, 0 to change, 0 to destroy."', p);
    const r = await finishedRun(p, mark, "planned_and_finished");
    check(r.run["plan-only"] === true, `${runSummary(r)}: plan-only ${r.run["plan-only"]}, expected true (a speculative plan)`, p);
    check(
      r.plan.status === "finished" && r.plan["resource-additions"] === 1 && r.plan["has-changes"] === true,
      `${runSummary(r)}; has-changes ${r.plan["has-changes"]}`,
      p,
    );
    const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data.attributes;
    check(ws.locked === false, "the workspace is locked after a speculative plan");
  });

  await step("remote: apply -auto-approve applies; the workspace's state has the resource", async () => {
    const mark = proxy.mark();
    const a = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
    check(
      a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
      'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
      a,
    );
    const r = await finishedRun(a, mark, "applied");
    check(
      r.run["auto-apply"] === true && r.apply.status === "finished" && r.apply["resource-additions"] === 1,
      `${runSummary(r)}; auto-apply ${r.run["auto-apply"]}`,
      a,
    );
    check(
      !clientCalled(mark, "POST", `/api/v2/runs/${r.id}/actions/apply`),
      "terraform apply -auto-approve confirmed the run itself; the run's auto-apply should have applied it",
    );
    const { res } = await remoteState(remote.ws.id);
    check(sameKeys(res, ["null_resource.foo"]), `the state has [${Object.keys(res).join(", ")}], expected [null_resource.foo]`);
    check(
      res["null_resource.foo"].triggers?.generation === "1" && /^\d+$/.test(res["null_resource.foo"].id ?? ""),
      `null_resource.foo in the state: ${JSON.stringify(res["null_resource.foo"])}`,
    );
    const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data;
    check(
      ws.attributes.locked === false,
      `the workspace is still locked after the run applied (${JSON.stringify(ws.relationships?.["locked-by"]?.data ?? null)})`,
    );
    check(
      ws.relationships?.["current-run"]?.data?.id === r.id,
      `the workspace's current-run is ${JSON.stringify(ws.relationships?.["current-run"]?.data ?? null)}, expected ${r.id}`,
    );
  });

  await step("remote: interactive apply confirmed by typing yes in a terminal", async () => {
    const before = (await remoteState(remote.ws.id)).res["null_resource.foo"];
    const mark = proxy.mark();
    const bg = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=2"], { env: remoteEnv });
    await waitOutput(bg, PROMPT, "the confirmation prompt");
    check(bg.output().includes('Do you want to perform these actions in workspace "rr-main"?'), "the prompt is not Terraform's remote apply confirmation", {
      out: bg.output(),
      cmd: bg.cmd,
      logFile: bg.logFile,
    });
    const id = runIdOf(bg.output(), mark);
    check(id, "terraform prompts without having created a run (no run URL in its output): it planned locally", {
      out: bg.output(),
      cmd: bg.cmd,
      logFile: bg.logFile,
    });
    const waiting = await readRun(id);
    check(
      waiting.run.status === "planned" && waiting.run.actions?.["is-confirmable"] === true,
      `${runSummary(waiting)}; is-confirmable ${waiting.run.actions?.["is-confirmable"]} while Terraform asks`,
    );
    bg.type("yes\n");
    const a = await bg.done;
    check(a.code === 0, `\`${a.cmd}\` exited with ${a.code ?? a.signal}`, a);
    check(
      a.out.includes("Apply complete! Resources: 1 added, 0 changed, 1 destroyed."),
      'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 1 destroyed."',
      a,
    );
    check(clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/apply`), `terraform did not confirm run ${id} with POST /api/v2/runs/${id}/actions/apply`, a);
    const r = await finishedRun(a, mark, "applied");
    check(r.run["auto-apply"] === false, `${runSummary(r)}: auto-apply ${r.run["auto-apply"]}, expected false`);
    const after = (await remoteState(remote.ws.id)).res["null_resource.foo"];
    check(
      after?.triggers?.generation === "2" && after.id !== before?.id,
      `null_resource.foo was not replaced: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
    );
  });

  await step("remote: interactive apply answered no is discarded; the state is unchanged", async () => {
    const before = await remoteState(remote.ws.id);
    const mark = proxy.mark();
    const bg = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=3"], { env: remoteEnv });
    await waitOutput(bg, PROMPT, "the confirmation prompt");
    bg.type("no\n");
    const a = await bg.done;
    check(a.code !== 0 && a.out.includes("Apply discarded."), `\`${a.cmd}\` answered "no" should fail with "Apply discarded." (exit ${a.code ?? a.signal})`, a);
    const r = await finishedRun(a, mark, "discarded");
    check(
      clientCalled(mark, "POST", `/api/v2/runs/${r.id}/actions/discard`),
      `terraform did not discard run ${r.id} with POST /api/v2/runs/${r.id}/actions/discard`,
      a,
    );
    check(r.apply.status === "unreachable", `${runSummary(r)}: the apply of a discarded run`);
    const after = await remoteState(remote.ws.id);
    check(after.sv.id === before.sv.id, `a new state version ${after.sv.id} after a discarded run (was ${before.sv.id})`);
    const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data.attributes;
    check(ws.locked === false, "the workspace is still locked after the run was discarded");
  });

  await step("remote: apply -target creates only the targeted resource", async () => {
    const mark = proxy.mark();
    const a = await tfOk(
      remote.dir,
      ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=2", "-var", "bars=2", "-target=null_resource.bar[0]"],
      {
        env: remoteEnv,
      },
    );
    check(
      a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
      'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
      a,
    );
    const r = await finishedRun(a, mark, "applied");
    check(JSON.stringify(r.run["target-addrs"]) === JSON.stringify(["null_resource.bar[0]"]), `run target-addrs ${JSON.stringify(r.run["target-addrs"])}`);
    // Terraform parses a `-var` of a primitive type (string, number, bool) as a literal string and sends it as an HCL
    // string (internal/configs/named_values.go decodeVariableType; internal/cloud/cloud_variables.go), so the number
    // `bars` arrives as "2" and the remote plan converts it back to a number.
    const vars = Object.fromEntries((r.run.variables ?? []).map((v) => [v.key, v.value]));
    check(vars.bars === '"2"' && vars.generation === '"2"', `run variables ${JSON.stringify(r.run.variables)}, expected bars = "2" and generation = "2"`);
    const { res } = await remoteState(remote.ws.id);
    check(
      sameKeys(res, ["null_resource.foo", "null_resource.bar[0]"]),
      `the state has [${Object.keys(res).join(", ")}], expected null_resource.foo and null_resource.bar[0] only`,
    );
  });

  await step("remote: apply -refresh-only runs a refresh-only run and changes no resource", async () => {
    const before = await remoteState(remote.ws.id);
    const mark = proxy.mark();
    const a = await tfOk(remote.dir, ["apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color", "-var", "generation=9", "-var", "bars=2"], {
      env: remoteEnv,
    });
    // A refresh-only plan ignores the configuration's changes (generation 9, bars 2): nothing drifted, nothing to do.
    check(a.out.includes("No changes."), 'the refresh-only plan is not "No changes." (a refresh-only run must not plan the configuration\'s changes)', a);
    const id = runIdOf(a.out, mark);
    check(id, "no run id in the output of terraform apply -refresh-only", a);
    const r = await readRun(id);
    check(r.run["refresh-only"] === true, `${runSummary(r)}: refresh-only ${r.run["refresh-only"]}, expected true`);
    check(["planned_and_finished", "applied"].includes(r.run.status) && r.plan.status === "finished", `${runSummary(r)}; expected a finished refresh-only run`);
    const after = await remoteState(remote.ws.id);
    check(
      sameKeys(after.res, Object.keys(before.res)),
      `the state changed: [${Object.keys(after.res).join(", ")}], was [${Object.keys(before.res).join(", ")}]`,
    );
    check(after.res["null_resource.foo"].id === before.res["null_resource.foo"].id, "null_resource.foo changed in a refresh-only run");
  });

  await step('remote: a second apply waits for the first ("Waiting for 1 run(s)") and applies after it', async () => {
    const markA = proxy.mark();
    const first = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=4", "-var", "bars=1"], { env: remoteEnv });
    let second = null;
    try {
      await waitOutput(first, PROMPT, "the first apply's confirmation prompt");
      const idA = runIdOf(first.output(), markA);
      check(idA, "the first apply prompts without having created a run (no run URL in its output)", {
        out: first.output(),
        cmd: first.cmd,
        logFile: first.logFile,
      });
      const markB = proxy.mark();
      second = tf(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=5", "-var", "bars=1"], {
        env: remoteEnv,
        background: true,
      });
      await waitOutput(
        second,
        /Waiting for \d+ run\(s\) to finish before being queued/,
        'the second apply to say "Waiting for 1 run(s) to finish before being queued..."',
      );
      check(/Waiting for 1 run\(s\) to finish before being queued/.test(second.output()), "the second apply waits for a number of runs other than 1", {
        out: second.output(),
        cmd: "terraform apply (second)",
      });
      const idB = await runIdFrom(second, markB, "the second apply");
      check(
        (await runStatus(idB)) === "pending",
        `the second run ${idB} is ${await runStatus(idB)} while the first (${idA}) awaits confirmation, expected pending`,
      );
      first.type("yes\n");
      const a = await first.done;
      check(a.code === 0, `the first apply \`${a.cmd}\` exited with ${a.code ?? a.signal}`, a);
      const b = await second.done;
      check(b.code === 0, `the second apply \`${b.cmd}\` exited with ${b.code ?? b.signal}`, b);
      check(
        b.out.includes("Apply complete! Resources: 1 added, 0 changed, 1 destroyed."),
        'the second apply\'s log does not say "Apply complete! Resources: 1 added, 0 changed, 1 destroyed."',
        b,
      );
      const ra = await readRun(idA);
      const rb = await readRun(idB);
      check(ra.run.status === "applied" && rb.run.status === "applied", `${runSummary(ra)}; ${runSummary(rb)}; expected both applied`);
      check(
        at(rb, "plan-queued-at") >= at(ra, "applied-at"),
        `the second run was queued (plan-queued-at ${rb.run["status-timestamps"]?.["plan-queued-at"]}) before the first applied (applied-at ${ra.run["status-timestamps"]?.["applied-at"]})`,
      );
    } finally {
      killGroup(first.pgid, "SIGKILL");
      if (second) killGroup(second.pgid, "SIGKILL");
    }
    const { res } = await remoteState(remote.ws.id);
    check(
      res["null_resource.foo"]?.triggers?.generation === "5",
      `null_resource.foo in the state after both applies: ${JSON.stringify(res["null_resource.foo"])}`,
    );
    check(sameKeys(res, ["null_resource.foo", "null_resource.bar[0]"]), `the state has [${Object.keys(res).join(", ")}]`);
  });

  // Ctrl-C while the run is planning. `terraform apply` then reads the run, asks whether to cancel it (not with
  // -auto-approve) and posts actions/cancel; the agent interrupts its terraform, and the run ends canceled.
  // `terraform plan` only stops streaming, as its header says ("Pressing Ctrl-C will stop streaming the logs, but will
  // not stop the plan running remotely"): opPlan (internal/cloud/backend_plan.go) returns no run on an error, so the
  // backend's Operation has no run to offer to cancel (TestCloud_planCanceled expects only a failed operation).
  // `how`: "prompt" (a terminal, answered yes), "signal" (SIGINT, no terminal), "stream-only" (a terminal, no prompt).
  async function interruptPlanning({ args, how }) {
    await tfOk(remote.cancelDir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
    const mark = proxy.mark();
    const terminal = how !== "signal";
    const term = terminal ? tfTerminal(remote.cancelDir, args, { env: remoteEnv }) : null;
    const bg = term ?? tf(remote.cancelDir, args, { env: remoteEnv, background: true });
    let id = null;
    try {
      id = await runIdFrom(bg, mark, `\`terraform ${args.join(" ")}\``);
      await waitRunStatus(id, ["planning"]);
      if (how === "prompt") {
        term.type("\x03");
        await waitOutput(bg, /Do you want to cancel the remote operation\?[\s\S]*Enter a value:/, "the prompt to cancel the remote operation");
        term.type("yes\n");
      } else if (how === "signal") {
        process.kill(bg.pgid, "SIGINT");
      } else {
        term.type("\x03");
      }
      const r = await bg.done;
      if (how === "stream-only") {
        check(r.code !== 0 && r.code !== null, `\`${r.cmd}\` interrupted exited with ${r.code ?? r.signal}, expected a failure`, r);
        check(!r.out.includes("cancel the remote operation"), "terraform plan offered to cancel the remote run; Terraform's plan only stops streaming", r);
        check(!clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/cancel`), `terraform plan canceled run ${id} itself`, r);
        const still = await runStatus(id);
        check(still === "planning", `run ${id} is ${still} after terraform plan stopped streaming, expected still planning`, r);
        // The run plans on; a user cancels it through the API (as in the UI), and the agent stops its terraform.
        await apiOk("POST", `/runs/${id}/actions/cancel`, { comment: "stopped by the clients test" }, [200, 202]);
      } else {
        check(
          r.out.includes("The remote operation was successfully cancelled."),
          'terraform did not say "The remote operation was successfully cancelled."',
          r,
        );
        check(
          clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/cancel`),
          `terraform did not cancel run ${id} with POST /api/v2/runs/${id}/actions/cancel`,
          r,
        );
      }
      // Well inside the stand-in's 120 s plan: only an interrupted terraform ends the run this soon.
      await waitRunStatus(id, ["canceled"], 60_000);
      const run = await readRun(id);
      check(run.plan.status === "canceled", `${runSummary(run)}; expected the plan canceled`);
      const ws = (await apiOk("GET", `/workspaces/${remote.cancelWs.id}`)).json.data.attributes;
      check(ws.locked === false, "the workspace is still locked after the run was canceled");
      return run;
    } finally {
      killGroup(bg.pgid, "SIGKILL");
      // A failed step must not leave its run planning: the stand-in's 120 s plan would hold the agent from the next.
      if (id && !["canceled", "errored", "planned_and_finished", "discarded", "applied"].includes(await runStatus(id).catch(() => null))) {
        await api("POST", `/runs/${id}/actions/cancel`, {}).catch(() => {});
      }
    }
  }

  await step("remote: Ctrl-C during terraform plan stops streaming; the run plans on until canceled through the API", async () => {
    const r = await interruptPlanning({ args: ["plan", "-no-color"], how: "stream-only" });
    check(r.run["plan-only"] === true, `${runSummary(r)}: expected the speculative plan's run`);
  });

  await step("remote: Ctrl-C during apply's plan, answered yes, cancels the planning run", async () => {
    const r = await interruptPlanning({ args: ["apply", "-no-color"], how: "prompt" });
    check(r.run["plan-only"] === false && r.run["auto-apply"] === false, `${runSummary(r)}: expected the interactive apply's run`);
  });

  await step("remote: SIGINT during apply -auto-approve's plan cancels the run without asking; the lock is released", async () => {
    await interruptPlanning({ args: ["apply", "-auto-approve", "-input=false", "-no-color"], how: "signal" });
    const sv = await api("GET", `/workspaces/${remote.cancelWs.id}/current-state-version`);
    check(sv.status === 404, `the workspace has a current state version (${sv.status}) after its only run was canceled`);
  });

  await step("remote: apply -destroy destroys every resource", async () => {
    const mark = proxy.mark();
    const a = await tfOk(remote.dir, ["apply", "-destroy", "-auto-approve", "-input=false", "-no-color", "-var", "generation=5", "-var", "bars=1"], {
      env: remoteEnv,
    });
    check(
      /(Apply|Destroy) complete! Resources: (0 added, 0 changed, )?2 destroyed\./.test(a.out),
      "the streamed apply log does not say that 2 resources were destroyed",
      a,
    );
    const r = await finishedRun(a, mark, "applied");
    check(r.run["is-destroy"] === true && r.apply["resource-destructions"] === 2, `${runSummary(r)}; is-destroy ${r.run["is-destroy"]}`);
    const { res } = await remoteState(remote.ws.id);
    check(Object.keys(res).length === 0, `the state still has [${Object.keys(res).join(", ")}] after the destroy`);
  });

  await step("remote: run trigger: an apply in rr-main queues a run in rr-target, which applies by itself (auto-apply-run-trigger)", async () => {
    const target = (
      await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, {
        data: { type: "workspaces", attributes: { name: "rr-target", "execution-mode": "remote", "auto-apply-run-trigger": true } },
      })
    ).json.data;
    const dir = fixture("remote/main", "remote-target");
    writeFileSync(join(dir, "main.tf"), readFileSync(join(dir, "main.tf"), "utf8").replace('name = "rr-main"', 'name = "rr-target"'));
    await tfOk(dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
    await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
    const before = (await apiOk("GET", `/workspaces/${target.id}/runs`)).json.data.map((r) => r.id);
    const trigger = (
      await apiOk("POST", `/workspaces/${target.id}/run-triggers`, {
        data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: remote.ws.id } } } },
      })
    ).json.data;
    const mark = proxy.mark();
    const a = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=6"], { env: remoteEnv });
    const source = await finishedRun(a, mark, "applied");
    const triggered = await waitFor(
      "a run in rr-target queued by the run trigger",
      async () => (await apiOk("GET", `/workspaces/${target.id}/runs`)).json.data.find((r) => !before.includes(r.id)) ?? null,
      60_000,
    );
    check(triggered.attributes.source === "tfe-run-trigger", `the triggered run's source is ${triggered.attributes.source}, expected tfe-run-trigger`);
    check(triggered.attributes.message.includes(source.id), `the triggered run's message "${triggered.attributes.message}" does not name ${source.id}`);
    await waitRunStatus(triggered.id, ["applied", "planned_and_finished"], 180_000);
    const queuedMs = Date.parse(triggered.attributes["created-at"]) - at(source, "applied-at");
    log(`run trigger: ${source.id} applied, ${triggered.id} queued ${queuedMs} ms later in rr-target, and it applied by itself`);
    await apiOk("DELETE", `/run-triggers/${trigger.id}`);
  });

  await step("remote: run task: a mandatory post-plan task that fails stops the apply with its message; an advisory one lets it go on", async () => {
    const receiver = await startRunTaskReceiver();
    try {
      const task = (
        await apiOk("POST", `/organizations/${REMOTE_ORG}/tasks`, {
          data: { type: "tasks", attributes: { name: "clients-gate", url: receiver.url, category: "task", "hmac-key": "clients-key" } },
        })
      ).json.data;
      const attached = (
        await apiOk("POST", `/workspaces/${remote.ws.id}/tasks`, {
          data: {
            type: "workspace-tasks",
            attributes: { "enforcement-level": "mandatory", stages: ["post_plan"] },
            relationships: { task: { data: { type: "tasks", id: task.id } } },
          },
        })
      ).json.data;
      receiver.state.verdict = { status: "failed", message: "clients-gate found 1 policy violation" };
      let mark = proxy.mark();
      const stopped = await tf(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=7"], { env: remoteEnv });
      check(stopped.code !== 0, "terraform apply succeeded although a mandatory post-plan run task failed", stopped);
      check(stopped.out.includes("clients-gate found 1 policy violation"), "terraform did not print the run task's message", stopped);
      const failed = await finishedRun(stopped, mark, "errored");
      check(failed.apply.status === "unreachable", `${runSummary(failed)}: the apply ran although the mandatory task failed`, stopped);
      check(
        receiver.state.requests.some((r) => r.payload?.stage === "post_plan" && r.signature),
        "the run task request was not signed",
        stopped,
      );

      await apiOk("PATCH", `/workspaces/${remote.ws.id}/tasks/${attached.id}`, {
        data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" } },
      });
      receiver.state.verdict = { status: "failed", message: "clients-gate advises a review" };
      mark = proxy.mark();
      const went = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=7"], { env: remoteEnv });
      check(went.out.includes("clients-gate advises a review"), "terraform did not print the advisory run task's message", went);
      await finishedRun(went, mark, "applied");
      await apiOk("DELETE", `/workspaces/${remote.ws.id}/tasks/${attached.id}`);
      await apiOk("DELETE", `/tasks/${task.id}`);
    } finally {
      await receiver.close();
    }
  });
}
