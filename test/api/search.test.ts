// Free-text query parameters match literally; ASCII letters fold case, as SQLite's lower() and LIKE fold them.
import { describe, expect, it } from "vitest";
import { api, createOrg, createWorkspace, uniqueName } from "../helpers";

const names = (res: { body: { data: Array<{ attributes: { name: string } }> } }) => res.body.data.map((d) => d.attributes.name).sort();

describe("case folding", () => {
  // SQLite's lower() and LIKE fold ASCII letters only; the filters done in code must agree with those done in SQL.
  it("folds ASCII letters only, in code as in SQL: the Kelvin sign is not `k`", async () => {
    const org = await createOrg();
    const kelvin = encodeURIComponent("\u212A");
    const team = await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name: "kilo" } } } });
    expect(team.status).toBe(200);
    const pool = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "kilo-pool" } } } });
    expect(pool.status).toBe(201);
    const ws = await createWorkspace(org);
    const tagged = await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "kilo" } }] } });
    expect(tagged.status).toBe(204);
    for (const path of [
      `/organizations/${org}/teams?q=${kelvin}`,
      `/organizations/${org}/teams?filter%5Bnames%5D=${kelvin}ilo`,
      `/organizations/${org}/agent-pools?q=${kelvin}`,
      `/workspaces/${ws.id}/relationships/tags?name=${kelvin}`,
      `/organizations/${org}/tags?q=${kelvin}`,
      `/organizations/${org}/workspaces?search%5Bname%5D=${kelvin}`,
    ]) {
      const res = await api("GET", path);
      expect(res.status, path).toBe(200);
      expect(res.body.data, path).toEqual([]);
    }
    expect(names(await api("GET", `/organizations/${org}/teams?q=KIL`))).toEqual(["kilo"]);
    expect(names(await api("GET", `/organizations/${org}/agent-pools?q=KIL`))).toEqual(["kilo-pool"]);
    expect(names(await api("GET", `/workspaces/${ws.id}/relationships/tags?name=KIL`))).toEqual(["kilo"]);
  });

  it("filter[email] folds ASCII letters only, as the SQL it is compared in", async () => {
    const org = await createOrg();
    const email = `ÜBER-${uniqueName("m")}@Example.test`;
    const invited = await api("POST", `/organizations/${org}/organization-memberships`, {
      body: { data: { type: "organization-memberships", attributes: { email } } },
    });
    expect(invited.status).toBe(201);
    const emailsOf = async (filter: string) =>
      (await api("GET", `/organizations/${org}/organization-memberships?filter%5Bemail%5D=${encodeURIComponent(filter)}`)).body.data.map(
        (m: { attributes: { email: string } }) => m.attributes.email,
      );
    expect(await emailsOf(email)).toEqual([email]);
    expect(await emailsOf(email.replace("Example", "EXAMPLE"))).toEqual([email]);
    expect(await emailsOf(email.replace("Ü", "ü"))).toEqual([]);
  });
});
