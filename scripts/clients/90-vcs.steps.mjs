// Runs from a repository end to end, for `npm run test:clients`: a real Gitea 1.26.0 on loopback (test/vcs/gitea.ts:
// built from the Go module proxy once, cached under ~/.cache/gitea) holds a Terraform configuration; a workspace of the
// service connected to it through a `gitea` OAuth client runs on the service's agent when a push lands, plans a pull
// request speculatively and posts the plan's status on the commit (which Gitea then shows), and runs nothing for a
// push outside its trigger patterns. Then the times from a push to its run being queued and from a pull request to its
// status, over a few of each (p50 and the slowest), and the disconnect removing the hook.
//
// Gitea's helper is TypeScript: esbuild bundles it for Node here, as `npm run build:agent` bundles the agent.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { check, waitFor } from "../lib/harness.mjs";

const CONFIG = (v) => `resource "terraform_data" "app" {\n  input = "${v}"\n}\n\noutput "version" {\n  value = terraform_data.app.output\n}\n`;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

/**
 * In the remote-run organisation (its workspaces run remotely on the service's agent). Answers the measured times (ms).
 * @param {import("./context.mjs").ClientContext} h
 */
export default async function ({ step, log, work, serviceRoot: root, REMOTE_ORG: org, apiOk }) {
  const dir = join(work, "vcs");
  mkdirSync(dir, { recursive: true });
  const ctx = { gitea: null, repo: null, tokenId: null, ws: null, pushTimes: [], prTimes: [] };
  // Plan-only runs are listed only when asked for (`filter[operation]`), as HCP lists them.
  const runsOf = async (plans = false) =>
    (await apiOk("GET", `/workspaces/${ctx.ws.id}/runs?page%5Bsize%5D=100${plans ? "&filter%5Boperation%5D=plan_only" : ""}`)).json.data;
  const runOfSha = async (sha) => {
    for (const r of [...(await runsOf()), ...(await runsOf(true))]) {
      const cv = (await apiOk("GET", `/runs/${r.id}/configuration-version`)).json.data;
      const ia = (await apiOk("GET", `/configuration-versions/${cv.id}/ingress-attributes`)).json.data;
      if (ia?.attributes["commit-sha"] === sha) return { run: r, cv, ia };
    }
    return null;
  };
  const context = () => `Terraform Cloud/${org}/${ctx.ws.attributes.name}`;

  try {
    await step("vcs: Gitea 1.26.0 on loopback with a repository holding a Terraform configuration", async () => {
      const out = join(dir, "gitea.mjs");
      await build({ entryPoints: [join(root, "test/vcs/gitea.ts")], bundle: true, platform: "node", format: "esm", outfile: out, logLevel: "silent" });
      const { startGitea } = await import(pathToFileURL(out).href);
      ctx.gitea = await startGitea({ log: (m) => log(`gitea: ${m}`) });
      ctx.repo = await ctx.gitea.createRepo("infra");
      await ctx.gitea.commitFiles(ctx.repo.fullName, ctx.repo.defaultBranch, { "main.tf": CONFIG("v1") }, { message: "First configuration" });
    });

    await step("vcs: a gitea OAuth client and a workspace connected to the repository register one webhook", async () => {
      const oc = await apiOk("POST", `/organizations/${org}/oauth-clients`, {
        data: {
          type: "oauth-clients",
          attributes: {
            name: "gitea",
            "service-provider": "gitea",
            "api-url": ctx.gitea.apiUrl,
            "http-url": ctx.gitea.url,
            "oauth-token-string": ctx.gitea.token,
          },
        },
      });
      check(!oc.text.includes(ctx.gitea.token), "the OAuth client's answer carries the token string");
      ctx.tokenId = oc.json.data.relationships["oauth-tokens"].data[0].id;
      ctx.ws = (
        await apiOk("POST", `/organizations/${org}/workspaces`, {
          data: {
            type: "workspaces",
            attributes: {
              name: "vcs-gitea",
              "execution-mode": "remote",
              "auto-apply": true,
              "trigger-patterns": ["/*.tf"],
              "vcs-repo": { identifier: ctx.repo.fullName, "oauth-token-id": ctx.tokenId, branch: "" },
            },
          },
        })
      ).json.data;
      const hooks = await waitFor("the workspace's webhook on Gitea", async () => {
        const h = await ctx.gitea.listHooks(ctx.repo.fullName);
        return h.length > 0 ? h : null;
      });
      check(hooks.length === 1 && /\/webhooks\/vcs\/hook-/.test(hooks[0].config.url), `hooks on Gitea: ${JSON.stringify(hooks)}`);
      // The branch's head is the current configuration version: a first run started by hand applies it.
      await waitFor("the branch's head as the current configuration version", async () => {
        const ws = (await apiOk("GET", `/workspaces/${ctx.ws.id}`)).json.data;
        return ws.relationships["current-configuration-version"]?.data?.id ?? null;
      });
      await apiOk("POST", "/runs", {
        data: { type: "runs", attributes: { message: "first" }, relationships: { workspace: { data: { type: "workspaces", id: ctx.ws.id } } } },
      });
      await waitFor("the first run to apply", async () => (await runsOf()).some((r) => r.attributes.status === "applied"), 180_000);
    });

    await step("vcs: a push to the branch queues a run of that commit, which applies on the agent", async () => {
      const t0 = Date.now();
      const c = await ctx.gitea.commitFiles(ctx.repo.fullName, ctx.repo.defaultBranch, { "main.tf": CONFIG("v2") }, { message: "Second configuration" });
      const found = await waitFor("a run of the pushed commit", () => runOfSha(c.sha), 60_000);
      ctx.pushTimes.push(Date.now() - t0);
      check(found.run.attributes.source === "tfe-configuration-version", `run source ${found.run.attributes.source}`);
      check(found.run.attributes.message === "Second configuration", `run message ${found.run.attributes.message}`);
      check(found.cv.attributes.source === "gitea", `configuration version source ${found.cv.attributes.source}`);
      await waitFor("the push's run to apply", async () => (await apiOk("GET", `/runs/${found.run.id}`)).json.data.attributes.status === "applied", 180_000);
      const status = await waitFor("the commit's status on Gitea", async () => {
        const s = await ctx.gitea.combinedStatus(ctx.repo.fullName, c.sha);
        return s.statuses.find((x) => x.context === context() && x.state === "success") ?? null;
      });
      check(status.targetUrl.includes(`/runs/${found.run.id}`), `status target ${status.targetUrl}`);
      const sv = (await apiOk("GET", `/workspaces/${ctx.ws.id}/current-state-version-outputs`)).json.data;
      check(
        sv.some((o) => o.attributes.name === "version" && o.attributes.value === "v2"),
        `outputs after the push: ${JSON.stringify(sv.map((o) => o.attributes))}`,
      );
    });

    await step("vcs: a push outside the workspace's trigger patterns runs nothing", async () => {
      const before = (await runsOf()).length;
      const c = await ctx.gitea.commitFiles(ctx.repo.fullName, ctx.repo.defaultBranch, { "docs/README.md": "Just docs\n" }, { message: "Docs only" });
      // Gitea delivers within a second; the object works the delivery at once. Five seconds with no run is nothing.
      await new Promise((r) => setTimeout(r, 5000));
      check((await runsOf()).length === before, "a run was queued for a push outside the trigger patterns");
      check(!(await runOfSha(c.sha)), "the docs commit has a run");
    });

    await step("vcs: pushes and pull requests, timed (a push to its run queued; a pull request to its status)", async () => {
      for (let i = 0; i < 4; i++) {
        const t0 = Date.now();
        const c = await ctx.gitea.commitFiles(ctx.repo.fullName, ctx.repo.defaultBranch, { "main.tf": CONFIG(`v${3 + i}`) }, { message: `Push ${i}` });
        await waitFor("a run of the pushed commit", () => runOfSha(c.sha), 60_000);
        ctx.pushTimes.push(Date.now() - t0);
        await waitFor(
          "the run to finish",
          async () => ["applied", "errored", "planned_and_finished"].includes((await runOfSha(c.sha)).run.attributes.status),
          180_000,
        );
      }
      for (let i = 0; i < 3; i++) {
        const branch = `feature-${i}`;
        const head = await ctx.gitea.gitPush(
          ctx.repo.fullName,
          branch,
          { "main.tf": CONFIG(`pr-${i}`) },
          { message: `Try ${i}`, from: ctx.repo.defaultBranch },
        );
        const t0 = Date.now();
        await ctx.gitea.openPullRequest(ctx.repo.fullName, { head: branch, base: ctx.repo.defaultBranch, title: `Try ${i}` });
        const status = await waitFor(
          "the pull request's plan status",
          async () => {
            const s = await ctx.gitea.combinedStatus(ctx.repo.fullName, head.sha);
            return s.statuses.find((x) => x.context === context() && x.state !== "pending") ?? null;
          },
          180_000,
        );
        ctx.prTimes.push(Date.now() - t0);
        check(status.state === "success" && /Terraform plan/.test(status.description), `pull request status ${JSON.stringify(status)}`);
        const found = await runOfSha(head.sha);
        check(
          found?.run.attributes["plan-only"] === true && found.ia.attributes["is-pull-request"] === true,
          `the pull request's run ${JSON.stringify(found?.run.attributes)}`,
        );
      }
      log(
        `vcs: push → run queued p50 ${pct(ctx.pushTimes, 50)} ms, max ${Math.max(...ctx.pushTimes)} ms (${ctx.pushTimes.length}); pull request → status p50 ${pct(ctx.prTimes, 50)} ms, max ${Math.max(...ctx.prTimes)} ms (${ctx.prTimes.length})`,
      );
    });

    await step("vcs: disconnecting the workspace removes the webhook from Gitea", async () => {
      await apiOk("PATCH", `/workspaces/${ctx.ws.id}`, { data: { type: "workspaces", attributes: { "vcs-repo": null } } });
      await waitFor("the webhook's removal", async () => (await ctx.gitea.listHooks(ctx.repo.fullName)).length === 0, 60_000);
    });
  } finally {
    await ctx.gitea?.stop();
  }
  return { pushTimes: ctx.pushTimes, prTimes: ctx.prTimes };
}
