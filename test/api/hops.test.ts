// Round trips per request, counted in code (src/platform/hops.ts) and reported in X-Hops. A user token costs one
// D1 read to authenticate the first time an isolate sees it; after that its principal is cached and rechecked inside
// the request's first read batch, so a request is its own work only.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const hops = (res: { headers: Headers }) => res.headers.get("X-Hops");
const trace = (res: { headers: Headers }) => res.headers.get("X-Hop-Trace");

describe("round trips per request", () => {
  it("ping, show, lock, unlock, create and list cost what the design says", async () => {
    const org = await createOrg();
    const { token } = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, { name: uniqueName("hop") });
    const first = hops(await api("GET", `/workspaces/${ws.id}`, { token }));
    const shapes = {
      ping: hops(await api("GET", "/ping", { token })),
      showById: hops(await api("GET", `/workspaces/${ws.id}`, { token })),
      showByName: hops(await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`, { token })),
      lock: hops(await api("POST", `/workspaces/${ws.id}/actions/lock`, { token })),
      unlock: hops(await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token })),
      create: hops(
        await api("POST", `/organizations/${org}/workspaces`, { token, body: { data: { type: "workspaces", attributes: { name: uniqueName("hop") } } } }),
      ),
      tagBindings: hops(
        await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, {
          token,
          body: { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] },
        }),
      ),
      list: hops(await api("GET", `/organizations/${org}/workspaces`, { token })),
      nameSearch: hops(await api("GET", `/organizations/${org}/workspaces?search%5Bname%5D=hop`, { token })),
    };
    // The token's first request in this isolate: its read, then the one batch of the request beside the object's read.
    expect(first).toBe("d1=2, do=1");
    expect(shapes).toEqual({
      // The token's recheck, alone: ping reads nothing else.
      ping: "d1=1, do=0",
      // The access batch on the nearest instance, and the record from the workspace's object (read-your-writes,
      // docs/consistency.md): beside it by id, after it by name.
      showById: "d1=1, do=1",
      showByName: "d1=1, do=1",
      lock: "d1=1, do=1",
      unlock: "d1=1, do=1",
      // The access batch (organisation, teams, grants on the target project, the project), then the name claim.
      create: "d1=2, do=1",
      // The access batch, and the disable-overrides check of reserved tag keys.
      tagBindings: "d1=2, do=1",
      list: "d1=1, do=0",
      nameSearch: "d1=1, do=0",
    });
  });

  // The list sends the page statement of the variant its caller's last list used (its preparation costs about as much
  // as running it), guarded in SQL: when the caller's standing changed, the guess finds no page and the list asks again.
  it("a list whose caller's standing changed costs one more round trip, never a wrong page", async () => {
    const org = await createOrg();
    const team = await makeTeam(org, { "read-workspaces": true });
    const { token } = await makeUser({ teams: [team.id] });
    const granted = await createWorkspace(org, { name: uniqueName("guess") });
    await createWorkspace(org, { name: uniqueName("guess") });
    await grantWorkspace(team.id, granted.id, "read");
    const list = async () => {
      const res = await api("GET", `/organizations/${org}/workspaces`, { token });
      expect(res.status).toBe(200);
      return { hops: hops(res), ids: (res.body.data as { id: string }[]).map((w) => w.id).sort(), total: res.body.meta.pagination["total-count"] };
    };
    await list();
    expect(await list()).toMatchObject({ hops: "d1=1, do=0", total: 2 });
    const access = async (on: boolean) =>
      expect(
        (await api("PATCH", `/teams/${team.id}`, { body: { data: { type: "teams", attributes: { "organization-access": { "read-workspaces": on } } } } }))
          .status,
      ).toBe(200);
    await access(false);
    expect(await list()).toEqual({ hops: "d1=2, do=0", ids: [granted.id], total: 1 });
    expect(await list()).toEqual({ hops: "d1=1, do=0", ids: [granted.id], total: 1 });
    await access(true);
    expect(await list()).toMatchObject({ hops: "d1=2, do=0", total: 2 });
    expect(await list()).toMatchObject({ hops: "d1=1, do=0", total: 2 });
  });

  // Where each round trip goes (X-Hop-Trace), which is what it costs far from the D1 primary (bench/edge.mjs):
  // d1p a read only the primary answers, d1w a write, d1r a read a nearby replica may answer, do a Durable Object
  // call, do-create the one that creates it, "+d1w" an index write the object awaited before answering; steps run
  // one after another (", "), hops that overlapped share a step (" | ").
  it("each round trip says where it goes and whether it overlapped another", async () => {
    const org = await createOrg();
    const { token } = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, { name: uniqueName("trace") });
    const first = trace(await api("GET", `/workspaces/${ws.id}`, { token }));
    const shapes = {
      ping: trace(await api("GET", "/ping", { token })),
      showByName: trace(await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`, { token })),
      lock: trace(await api("POST", `/workspaces/${ws.id}/actions/lock`, { token })),
      unlock: trace(await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token })),
      create: trace(
        await api("POST", `/organizations/${org}/workspaces`, { token, body: { data: { type: "workspaces", attributes: { name: uniqueName("trace") } } } }),
      ),
      list: trace(await api("GET", `/organizations/${org}/workspaces`, { token })),
    };
    // The token's read on the nearest (fenced) instance, then the request's batch there, with the object's read of
    // the workspace beside it.
    expect(first).toBe("d1r, d1r | do");
    expect(shapes).toEqual({
      // The token's recheck on the nearest instance, alone.
      ping: "d1r",
      // The name's lookup nearby, then the record from its object.
      showByName: "d1r, do",
      // The access batch nearby, then the object, which answers once committed: its index write follows the answer.
      lock: "d1r, do",
      unlock: "d1r, do",
      // The access batch and the name claim on the primary, then the call that creates the object and its index row.
      create: "d1p, d1w, do-create+d1w",
      list: "d1r",
    });
  });
});
