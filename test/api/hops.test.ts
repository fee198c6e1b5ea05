// Round trips per request, counted in code (src/hops.ts) and reported in X-Hops. A user token costs one
// D1 read to authenticate the first time an isolate sees it; after that its principal is cached and rechecked inside
// the request's first read batch, so a request is its own work only.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const hops = (res: { headers: Headers }) => res.headers.get("X-Hops");

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
});
