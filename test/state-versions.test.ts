// Issue 5: state versions under the lock, signed upload URLs, outputs, unlock's 503, safe delete with resources.
import { exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { api, createOrg, createWorkspace } from "./helpers";
import { grantWorkspace, makeTeam } from "./principals";

const STATE = JSON.stringify({
  version: 4,
  terraform_version: "1.9.0",
  serial: 1,
  lineage: "abc",
  outputs: { url: { value: "https://x", type: "string" }, secret: { value: "hunter2", type: "string", sensitive: true } },
  resources: [
    { mode: "managed", type: "null_resource", name: "a", provider: 'provider["registry.terraform.io/hashicorp/null"]', instances: [{}, {}] },
    { mode: "data", type: "null_data_source", name: "d", provider: "p", instances: [{}] },
  ],
});
const md5 = (s: string) => SparkMD5.hash(s);
const b64 = (s: string) => btoa(s);

const svBody = (attrs: Record<string, unknown>) => ({ data: { type: "state-versions", attributes: { serial: 1, lineage: "abc", ...attrs } } });
const raw = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url, init));

describe("state versions", () => {
  it("inline state: needs the lock, becomes current, counts managed resources and serves outputs", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const create = () => api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) });
    expect((await create()).status).toBe(409);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const res = await create();
    expect(res.status).toBe(201);
    const sv = res.body.data;
    expect(sv.id).toMatch(/^sv-/);
    expect(sv.attributes).toMatchObject({ status: "finalized", serial: 1, "resources-processed": true, "terraform-version": "1.9.0" });
    expect(sv.attributes.resources).toEqual([{ name: "a", type: "null_resource", count: 2, module: "root", provider: 'provider["registry.terraform.io/hashicorp/null"]' }]);
    const shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.body.data.attributes["resource-count"]).toBe(2);
    expect(shown.body.data.attributes["latest-change-at"]).toBe(sv.attributes["created-at"]);
    expect(shown.body.data.relationships["current-state-version"].data).toEqual({ id: sv.id, type: "state-versions" });
    const current = await api("GET", `/workspaces/${ws.id}/current-state-version`);
    expect(current.body.data.id).toBe(sv.id);
    const download = await raw(sv.attributes["hosted-state-download-url"]);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(STATE);
    const outputs = await api("GET", `/state-versions/${sv.id}/outputs`);
    expect(outputs.body.data.map((o: { attributes: { name: string } }) => o.attributes.name).sort()).toEqual(["secret", "url"]);
    const inc = await api("GET", `/workspaces/${ws.id}?include=outputs`);
    expect(inc.body.included.map((o: { type: string }) => o.type)).toEqual(["workspace-outputs", "workspace-outputs"]);
    expect(inc.body.data.relationships.outputs.data).toHaveLength(2);
    const list = await api("GET", `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${ws.attributes.name}&filter%5Borganization%5D%5Bname%5D=${org}`);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([sv.id]);
  });

  it("hides sensitive output values from callers who may read only outputs", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) });
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "custom", { "state-versions": "read-outputs" });
    const svId = (await api("GET", `/workspaces/${ws.id}`)).body.data.relationships["current-state-version"].data.id;
    const secretOf = async (path: string, token?: string) =>
      (await api("GET", path, { token })).body.data.find((o: { attributes: { name: string } }) => o.attributes.name === "secret").attributes.value;
    expect(await secretOf(`/state-versions/${svId}/outputs`, team.token)).toBeNull();
    expect(await secretOf(`/state-versions/${svId}/outputs`)).toBe("hunter2");
    // The workspace's current-outputs endpoint never shows sensitive values, as the real service.
    expect(await secretOf(`/workspaces/${ws.id}/current-state-version-outputs`)).toBeNull();
    const inc = await api("GET", `/workspaces/${ws.id}/current-state-version?include=outputs`);
    expect(inc.body.included.map((o: { attributes: { name: string } }) => o.attributes.name).sort()).toEqual(["secret", "url"]);
  });

  it("Terraform's sequence: pending version, unlock refused with 503 until the signed upload lands", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { body: { data: { type: "", attributes: { reason: "Locked by Terraform" } } } });
    const res = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), "json-state-outputs": b64("{}") }) });
    expect(res.status).toBe(201);
    const sv = res.body.data;
    expect(sv.attributes.status).toBe("pending");
    expect(sv.attributes["hosted-state-upload-url"]).toMatch(/^http:\/\/localhost\/_blobs\//);
    const blocked = await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect(blocked.status).toBe(503);
    expect(blocked.headers.get("Retry-After")).toBe("1");
    expect(blocked.body.errors[0].detail).toContain("latest state version is still pending");
    const tampered = sv.attributes["hosted-state-upload-url"].replace(/sig=[0-9a-f]{4}/, "sig=0000");
    expect((await raw(tampered, { method: "PUT", body: STATE })).status).toBe(403);
    const wrong = await raw(sv.attributes["hosted-state-upload-url"], { method: "PUT", body: STATE + " ", headers: { "Content-Type": "application/octet-stream" } });
    expect(wrong.status).toBe(422);
    const put = await raw(sv.attributes["hosted-state-upload-url"], { method: "PUT", body: STATE, headers: { "Content-Type": "application/octet-stream" } });
    expect(put.status).toBe(200);
    const after = await api("GET", `/state-versions/${sv.id}`);
    expect(after.body.data.attributes.status).toBe("finalized");
    expect(after.body.data.attributes["hosted-state-download-url"]).toBeTruthy();
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(2);
  });

  it("force-unlock works while a state version is pending", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE) }) });
    expect((await api("POST", `/workspaces/${ws.id}/actions/force-unlock`)).status).toBe(200);
  });

  it("intermediate versions become current only when unlock promotes the latest finalized one", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const res = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE), intermediate: true }) });
    expect(res.body.data.attributes.intermediate).toBe(true);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).status).toBe(404);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).body.data.id).toBe(res.body.data.id);
  });

  it("refuses an md5 that does not match, expired URLs, and organisation tokens", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const bad = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5("other"), state: b64(STATE) }) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/md5");
    const ok = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) });
    const expired = ok.body.data.attributes["hosted-state-download-url"].replace(/exp=\d+/, "exp=1000");
    expect((await raw(expired)).status).toBe(403);
    const orgToken = (await api("POST", `/organizations/${org}/authentication-token`)).body.data.attributes.token;
    expect((await api("POST", `/workspaces/${ws.id}/state-versions`, { token: orgToken, body: svBody({ md5: md5(STATE), state: b64(STATE) }) })).status).toBe(404);
  });

  it("safe delete refuses a workspace that manages resources, and allows one whose state is empty", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const res = await api("POST", `/workspaces/${ws.id}/actions/safe-delete`);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe("workspace cannot be safely deleted because it is still managing resources");
    const empty = JSON.stringify({ version: 4, serial: 2, lineage: "abc", resources: [], outputs: {} });
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ serial: 2, md5: md5(empty), state: b64(empty) }) });
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(204);
  });

  it("a pending latest state version makes safe delete report processing", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE) }) });
    await api("POST", `/workspaces/${ws.id}/actions/force-unlock`);
    const res = await api("POST", `/workspaces/${ws.id}/actions/safe-delete`);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe("Latest workspace state is being processed to discover resources, please try again later");
  });
});
