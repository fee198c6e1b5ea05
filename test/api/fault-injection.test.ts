// Test-only fault injection (FAULT_INJECTION=1): the X-Fault-* headers of one request reach the index writes that
// request makes, and nothing else: not a later request's write on the same workspace, not a workspace it did not write.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, indexSettled } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";

const FAIL_ONE = { "X-Fault-Fail-Index-Writes": "1" };
const indexedVersion = (id: string) => env.DB.prepare("SELECT version FROM workspaces WHERE id = ?").bind(id).first<number>("version");
const objectVersion = async (id: string) => ((await env.WORKSPACES.getByName(id).get()) as { value: { version: number } }).value.version;
const lockedInIndex = async (id: string) => (await api("GET", `/workspaces/${id}`)).body.data.attributes.locked;

describe("X-Fault-Fail-Index-Writes", () => {
  it("fails the index write of every workspace the request changes, until each one's alarm retries it", async () => {
    const org = await createOrg();
    const a = await createWorkspace(org, {}, undefined, { tags: { data: [{ type: "tags", attributes: { name: "shared" } }] } });
    const b = await createWorkspace(org);
    const tags = await api("GET", `/organizations/${org}/tags`);
    const tagId = tags.body.data.find((t: { attributes: { name: string } }) => t.attributes.name === "shared").id;
    const attach = await api("POST", `/tags/${tagId}/relationships/workspaces`, { body: { data: [{ type: "workspaces", id: b.id }] }, headers: FAIL_ONE });
    expect(attach.status).toBe(204);
    // b's object has the tag; its index row lags one version behind until the alarm.
    expect(await indexedVersion(b.id)).toBe((await objectVersion(b.id)) - 1);
    // A show reads the record from the object, so it sees the write at once (docs/consistency.md); the list lags.
    expect((await api("GET", `/workspaces/${b.id}`)).body.data.attributes["tag-names"]).toEqual(["shared"]);
    const listed = await api("GET", `/organizations/${org}/workspaces`);
    expect(listed.body.data.find((w: { id: string }) => w.id === b.id).attributes["tag-names"]).toEqual([]);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(b.id))).toBe(true);
    expect(await indexedVersion(b.id)).toBe(await objectVersion(b.id));
    expect((await api("GET", `/workspaces/${b.id}`)).body.data.attributes["tag-names"]).toEqual(["shared"]);
    // a was not written, so nothing of it lags.
    expect(await indexedVersion(a.id)).toBe(await objectVersion(a.id));
  });

  it("a write refused under the header leaves the next write's index write alone", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(200);
    const again = await api("POST", `/workspaces/${ws.id}/actions/lock`, { headers: FAIL_ONE });
    expect(again.status).toBe(409);
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    // The unlock answers before its index write: wait for that write (a failed one would stay failed).
    await indexSettled(ws.id);
    expect(await lockedInIndex(ws.id)).toBe(false);
    expect(await indexedVersion(ws.id)).toBe(await objectVersion(ws.id));
  });

  it("a read under the header leaves the next write's index write alone", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect((await api("GET", `/workspaces/${ws.id}/vars`, { headers: FAIL_ONE })).status).toBe(200);
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(200);
    await indexSettled(ws.id);
    expect(await lockedInIndex(ws.id)).toBe(true);
    expect(await indexedVersion(ws.id)).toBe(await objectVersion(ws.id));
  });
});
