// Optional JSON bodies (token create bodies, the lock's reason): absent, empty or a document; a bad one is a
// JSON:API error and changes nothing, and a token body is judged only once the caller may create the token.
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { makeTeam, makeUser } from "../fixtures";

const tokensOf = async (teamId: string) => (await api("GET", `/teams/${teamId}/authentication-tokens`)).body.data.map((t: { id: string }) => t.id);

describe("token create bodies", () => {
  it("take no body, an empty body under the JSON:API type, or a document", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const before = await tokensOf(team.id);
    const none = await api("POST", `/teams/${team.id}/authentication-tokens`);
    expect(none.status).toBe(201);
    expect(none.body.data.attributes.description).toBeNull();
    const empty = await api("POST", `/teams/${team.id}/authentication-token`, { raw: " " });
    expect(empty.status).toBe(201);
    const described = await api("POST", `/teams/${team.id}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: "ci" } } },
    });
    expect(described.status).toBe(201);
    expect(described.body.data.attributes.description).toBe("ci");
    expect(await tokensOf(team.id)).toHaveLength(before.length + 3);
  });

  it("answer 400 for JSON that does not parse and 422 naming the member for a wrong type; no token is made", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const before = await tokensOf(team.id);
    const garbage = await api("POST", `/teams/${team.id}/authentication-tokens`, { raw: "{not json" });
    expect(garbage.status).toBe(400);
    expect(garbage.body.errors[0]).toMatchObject({ status: "400", detail: "Malformed JSON in request body" });
    const wrong = await api("POST", `/teams/${team.id}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: 5 } } },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer: "/data/attributes/description" } });
    expect(wrong.body.errors[0].detail).toMatch(/^description: /);
    expect(await tokensOf(team.id)).toEqual(before);
  });

  it("judge the body only for a caller who may create the token: others get 404 whatever they send", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const outsider = await makeUser();
    const before = await tokensOf(team.id);
    for (const raw of ["{not json", JSON.stringify({ data: { attributes: { description: 5 } } }), ""]) {
      const res = await api("POST", `/teams/${team.id}/authentication-tokens`, { token: outsider.token, raw });
      expect(res.status, raw).toBe(404);
    }
    expect(await tokensOf(team.id)).toEqual(before);
  });
});

describe("lock bodies", () => {
  it("refuse a reason of the wrong type with a 422 error object and leave the workspace unlocked", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const bad = await api("POST", `/workspaces/${ws.id}/actions/lock`, { body: { reason: 5 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ status: "422", title: "invalid attribute" });
    expect(typeof bad.body.errors[0].source.pointer).toBe("string");
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
  });
});
