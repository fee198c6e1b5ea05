// The web UI's run trigger and notification pages: what they show, and their forms doing what the API does (a source
// added and removed, a configuration added, disabled, verified and deleted), with the API's refusals shown.
import { afterEach, describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";
import { signIn, ui, workspaceReaderPage } from "../ui-client";
import { installFakeFetch } from "../vcs/outbound";

const restores: Array<() => void> = [];
afterEach(() => {
  for (const r of restores.splice(0)) r();
});

describe("run triggers page", () => {
  it("adds a source by name, lists both directions, refuses an unknown name, and removes", async () => {
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const target = await createWorkspace(org, {}, owner.token);
    const source = await createWorkspace(org, {}, owner.token);
    const cookie = await signIn(owner.token);
    const path = `/app/${org}/workspaces/${target.attributes.name}/run-triggers`;

    const added = await ui("POST", path, { cookie, form: { source: source.attributes.name } });
    expect(added.status).toBe(303);
    const list = await api("GET", `/workspaces/${target.id}/run-triggers?filter%5Brun-trigger%5D%5Btype%5D=inbound`);
    expect(list.body.data).toHaveLength(1);
    const page = await ui("GET", path, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(source.attributes.name);
    const other = await ui("GET", `/app/${org}/workspaces/${source.attributes.name}/run-triggers`, { cookie });
    expect(other.text).toMatch(/id="run-trigger-targets"/);
    expect(other.text).toContain(target.attributes.name);

    const unknown = await ui("POST", path, { cookie, form: { source: "no-such-workspace" } });
    expect(unknown.status).toBe(422);
    expect(unknown.text).toContain("No workspace named no-such-workspace");

    const removed = await ui("POST", `${path}/${list.body.data[0].id}/delete`, { cookie });
    expect(removed.status).toBe(303);
    expect((await api("GET", `/workspaces/${target.id}/run-triggers?filter%5Brun-trigger%5D%5Btype%5D=inbound`)).body.data).toEqual([]);
  });

  it("shows readers the triggers without the forms, and refuses their posts", async () => {
    const { cookie, path } = await workspaceReaderPage("run-triggers");
    const page = await ui("GET", path, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("Add a source workspace");
    expect((await ui("POST", path, { cookie, form: { source: "x" } })).status).toBe(404);
  });
});

describe("notifications page", () => {
  it("adds a configuration, disables, verifies and deletes it; admins only", async () => {
    const got: string[] = [];
    restores.push(
      installFakeFetch({
        "hooks.example.com": {
          async fetch(r: Request) {
            got.push(await r.text());
            return new Response("ok");
          },
        },
      }),
    );
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const ws = await createWorkspace(org, {}, owner.token);
    const cookie = await signIn(owner.token);
    const path = `/app/${org}/workspaces/${ws.attributes.name}/notifications`;

    const refused = await ui("POST", path, { cookie, form: { name: "", destination: "generic", url: "http://169.254.169.254/" } });
    expect(refused.status).toBe(422);

    const added = await ui("POST", path, {
      cookie,
      form: { name: "hook", destination: "generic", url: "https://hooks.example.com/in", token: "t0ken", triggers: "run:errored", enabled: "on" },
    });
    expect(added.status).toBe(303);
    expect(got).toHaveLength(1);
    const [nc] = (await api("GET", `/workspaces/${ws.id}/notification-configurations`)).body.data;
    expect(nc.attributes).toMatchObject({ name: "hook", enabled: true, triggers: ["run:errored"] });
    const page = await ui("GET", path, { cookie });
    expect(page.text).toContain("hook");
    expect(page.text).not.toContain("t0ken");

    expect((await ui("POST", `${path}/${nc.id}/disable`, { cookie })).status).toBe(303);
    expect((await api("GET", `/notification-configurations/${nc.id}`)).body.data.attributes.enabled).toBe(false);
    expect((await ui("POST", `${path}/${nc.id}/verify`, { cookie })).status).toBe(303);
    expect(got).toHaveLength(2);
    expect((await ui("POST", `${path}/${nc.id}/delete`, { cookie })).status).toBe(303);
    expect((await api("GET", `/notification-configurations/${nc.id}`)).status).toBe(404);

    const writer = await makeTeam(org);
    await grantWorkspace(writer.id, ws.id, "write");
    expect((await ui("GET", path, { cookie: await signIn(writer.token) })).status).toBe(404);
  });
});
