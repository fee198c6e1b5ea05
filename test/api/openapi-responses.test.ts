// The response schemas hold serialisers to their attributes: every 2xx response of every test is checked against
// openapi.json (test/openapi-responses.ts, called by test/helpers.ts); these show that the check can fail.
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { responseErrors } from "../openapi-responses";

describe("responses against openapi.json", () => {
  it("a real workspace matches its schema; an extra attribute, a missing one or another type does not", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const path = `/api/v2/workspaces/${ws.id}`;
    const shown = await api("GET", `/workspaces/${ws.id}`);
    expect(responseErrors("GET", path, 200, shown.body)).toEqual([]);

    const extra = structuredClone(shown.body);
    extra.data.attributes["not-in-the-schema"] = true;
    expect(responseErrors("GET", path, 200, extra)?.join("\n")).toMatch(/not-in-the-schema/);
    const missing = structuredClone(shown.body);
    delete missing.data.attributes.locked;
    expect(responseErrors("GET", path, 200, missing)).not.toEqual([]);
    const retyped = structuredClone(shown.body);
    retyped.data.attributes.locked = "no";
    expect(responseErrors("GET", path, 200, retyped)?.join("\n")).toMatch(/locked/);
    const otherType = structuredClone(shown.body);
    otherType.data.type = "projects";
    expect(responseErrors("GET", path, 200, otherType)).not.toEqual([]);
  });

  it("a list's items are held to the resource schema, and an undocumented status is reported", async () => {
    const org = await createOrg();
    await createWorkspace(org);
    const path = `/api/v2/organizations/${org}/workspaces`;
    const list = await api("GET", `/organizations/${org}/workspaces`);
    expect(responseErrors("GET", path, 200, list.body)).toEqual([]);
    const extra = structuredClone(list.body);
    extra.data[0].attributes.surplus = 1;
    expect(responseErrors("GET", path, 200, extra)?.join("\n")).toMatch(/surplus/);
    expect(responseErrors("GET", path, 201, list.body)?.join("\n")).toMatch(/status not documented/);
  });
});
