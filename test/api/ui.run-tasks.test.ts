// The web UI's run task pages: the organisation's tasks (added through the verification, deleted), a workspace's
// attachments (attached, detached; readers see them without the forms), and the run page's task stages.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createOrg, createWorkspace, makeUser } from "../fixtures";
import { api } from "../helpers";
import { signIn, ui, workspaceReaderPage } from "../ui-client";
import { installFakeFetch } from "../vcs/outbound";
import { createRun, seedCv } from "../do/runs.helpers";

const restores: Array<() => void> = [];
afterEach(() => {
  for (const r of restores.splice(0)) r();
});

describe("run task pages", () => {
  it("adds an organisation's task, attaches it to a workspace, shows it on a run, detaches and deletes it", async () => {
    restores.push(installFakeFetch({ "tasks.example.com": { fetch: async () => new Response("ok") } }));
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const ws = await createWorkspace(org, {}, owner.token);
    const cookie = await signIn(owner.token);
    const orgPath = `/app/${org}/run-tasks`;

    const refused = await ui("POST", orgPath, { cookie, form: { name: "scan", url: "http://169.254.169.254/", enabled: "on" } });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("link-local");
    const added = await ui("POST", orgPath, { cookie, form: { name: "scan", url: "https://tasks.example.com/hook", "hmac-key": "k3y", enabled: "on" } });
    expect(added.status).toBe(303);
    const tasks = (await api("GET", `/organizations/${org}/tasks`)).body.data;
    expect(tasks.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["scan"]);
    const orgPage = await ui("GET", orgPath, { cookie });
    expect(orgPage.text).toContain("tasks.example.com/hook");
    expect(orgPage.text).not.toContain("k3y");

    const wsPath = `/app/${org}/workspaces/${ws.attributes.name}/run-tasks`;
    const none = await ui("POST", wsPath, { cookie, form: { task: tasks[0].id, enforcement: "mandatory" } });
    expect(none.status).toBe(422);
    expect(none.text).toContain("at least one stage");
    const attached = await ui("POST", wsPath, { cookie, form: { task: tasks[0].id, enforcement: "mandatory", stages: "pre_plan" } });
    expect(attached.status).toBe(303);
    const list = (await api("GET", `/workspaces/${ws.id}/tasks`)).body.data;
    expect(list).toMatchObject([{ attributes: { "enforcement-level": "mandatory", stages: ["pre_plan"] } }]);
    expect((await ui("GET", wsPath, { cookie })).text).toMatch(/data-workspace-task/);

    const stub = env.WORKSPACES.getByName(ws.id);
    const run = await createRun(stub, await seedCv(stub));
    const runPage = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}/runs/${run.id}`, { cookie });
    expect(runPage.text).toMatch(/id="task-stages"/);
    expect(runPage.text).toContain("pre plan running");
    expect(runPage.text).toContain("mandatory");

    expect((await ui("POST", `${wsPath}/${list[0].id}/delete`, { cookie })).status).toBe(303);
    expect((await api("GET", `/workspaces/${ws.id}/tasks`)).body.data).toEqual([]);
    expect((await ui("POST", `${orgPath}/${tasks[0].id}/delete`, { cookie })).status).toBe(303);
    expect((await api("GET", `/organizations/${org}/tasks`)).body.data).toEqual([]);
  });

  it("shows a workspace's readers its tasks without the forms, and refuses their posts", async () => {
    const { org, cookie, path } = await workspaceReaderPage("run-tasks");
    const page = await ui("GET", path, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("Attach a run task");
    expect((await ui("POST", path, { cookie, form: { task: "task-x", stages: "post_plan" } })).status).toBe(404);
    expect((await ui("GET", `/app/${org}/run-tasks`, { cookie })).status).toBe(404);
  });
});
