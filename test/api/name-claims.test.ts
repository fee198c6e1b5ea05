// A create whose Durable Object call fails must not keep its name claimed: Terraform retries at once and must not
// be told "Name has already been taken" for a workspace that does not exist. Only when the workspace may exist (the
// call broke after the commit, or nobody could be asked) does the claim stay.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, uniqueName } from "../helpers";
import { createOrg } from "../fixtures";

const create = (org: string, name: string, fault?: string) =>
  api("POST", `/organizations/${org}/workspaces`, {
    body: { data: { type: "workspaces", attributes: { name } } },
    headers: fault ? { "X-Fault-Fail-Create": fault } : {},
  });

/** The workspaces of `org` called `name`, as a client lists them, and the name's claims in the index. */
async function holders(org: string, name: string): Promise<{ listed: string[]; claims: number }> {
  const list = await api("GET", `/organizations/${org}/workspaces?search%5Bname%5D=${encodeURIComponent(name)}`);
  expect(list.status).toBe(200);
  const claims = await env.DB.prepare(
    "SELECT count(*) AS n FROM workspace_names WHERE organization_id = (SELECT external_id FROM organizations WHERE name = ?) AND name = ?",
  )
    .bind(org, name)
    .first<{ n: number }>();
  return {
    listed: list.body.data.filter((w: { attributes: { name: string } }) => w.attributes.name === name).map((w: { id: string }) => w.id),
    claims: claims?.n ?? 0,
  };
}

describe("a create whose Durable Object call fails", () => {
  for (const fault of ["result", "throw"]) {
    it(`releases the name at once when the call ${fault === "result" ? "answers a failure" : "throws"} before committing`, async () => {
      const org = await createOrg();
      const name = uniqueName("retried");
      const failed = await create(org, name, fault);
      expect(failed.status).toBe(500);
      expect(failed.body.errors[0]).toMatchObject({ status: "500", title: "internal server error" });
      // Terraform's retry, at once.
      const retry = await create(org, name);
      expect(retry.status).toBe(201);
      expect(retry.body.data.attributes.name).toBe(name);
      const shown = await api("GET", `/organizations/${org}/workspaces/${name}`);
      expect(shown.status).toBe(200);
      expect(shown.body.data.id).toBe(retry.body.data.id);
      expect(await holders(org, name)).toEqual({ listed: [retry.body.data.id], claims: 1 });
    });
  }

  it("keeps the name when the workspace was committed before the call broke: the retry is told it is taken", async () => {
    const org = await createOrg();
    const name = uniqueName("committed");
    const failed = await create(org, name, "throw-after-commit");
    expect(failed.status).toBe(500);
    const retry = await create(org, name);
    expect(retry.status).toBe(422);
    expect(retry.body.errors[0]).toMatchObject({ status: "422", detail: "Name has already been taken", source: { pointer: "/data/attributes/name" } });
    // The workspace the failed call created exists, once, under that name.
    const shown = await api("GET", `/organizations/${org}/workspaces/${name}`);
    expect(shown.status).toBe(200);
    expect(await holders(org, name)).toEqual({ listed: [shown.body.data.id], claims: 1 });
  });
});
