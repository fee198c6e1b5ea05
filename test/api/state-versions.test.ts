// State versions under the lock, signed upload URLs, outputs, unlock's 503, safe delete with resources.
import { LIMITS } from "../../src/limits";
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api, indexSettled } from "../helpers";
import { nullResource, stateDoc, urlAndSecret } from "../state-docs";

const STATE = stateDoc({
  outputs: urlAndSecret("https://x", "hunter2"),
  resources: [nullResource([{}, {}]), { mode: "data", type: "null_data_source", name: "d", provider: "p", instances: [{}] }],
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
    expect(sv.attributes.resources).toEqual([
      { name: "a", type: "null_resource", count: 2, module: "root", provider: 'provider["registry.terraform.io/hashicorp/null"]' },
    ]);
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
    const wrong = await raw(sv.attributes["hosted-state-upload-url"], {
      method: "PUT",
      body: `${STATE} `,
      headers: { "Content-Type": "application/octet-stream" },
    });
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
    expect((await api("POST", `/workspaces/${ws.id}/state-versions`, { token: orgToken, body: svBody({ md5: md5(STATE), state: b64(STATE) }) })).status).toBe(
      404,
    );
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

describe("state version lifecycle", () => {
  const lockWs = (id: string) => api("POST", `/workspaces/${id}/actions/lock`);
  const createSv = (id: string, attrs: Record<string, unknown>) => api("POST", `/workspaces/${id}/state-versions`, { body: svBody(attrs) });
  const put = (url: string, body: BodyInit) => raw(url, { method: "PUT", body, headers: { "Content-Type": "application/octet-stream" } });

  it("a large state sent in odd-sized pieces round-trips byte for byte", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const resources = Array.from({ length: 9000 }, (_, i) => ({
      mode: "managed",
      type: "t",
      name: `r${i}`,
      provider: "p",
      instances: [{ attributes: { id: "x".repeat(250) } }],
    }));
    const big = JSON.stringify({ version: 4, serial: 1, lineage: "abc", outputs: {}, resources });
    expect(big.length).toBeGreaterThan(2.5 * 1024 * 1024);
    await lockWs(ws.id);
    const sv = (await createSv(ws.id, { md5: md5(big) })).body.data;
    const bytes = new TextEncoder().encode(big);
    // 100,000-byte pieces never line up with the 1 MiB storage chunks.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let off = 0; off < bytes.length; off += 100_000) controller.enqueue(bytes.slice(off, off + 100_000));
        controller.close();
      },
    });
    expect((await put(sv.attributes["hosted-state-upload-url"], stream)).status).toBe(200);
    const after = (await api("GET", `/state-versions/${sv.id}`)).body.data.attributes;
    expect(after).toMatchObject({ status: "finalized", size: bytes.length });
    const download = await raw(after["hosted-state-download-url"]);
    const text = await download.text();
    expect(text.length).toBe(big.length);
    expect(md5(text)).toBe(md5(big));
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(9000);
  });

  it("a newer version supersedes a pending one: the late upload is refused and cannot replace newer state", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await lockWs(ws.id);
    const stale = (await createSv(ws.id, { md5: md5(STATE) })).body.data;
    const empty = JSON.stringify({ version: 4, serial: 2, lineage: "abc", resources: [], outputs: {} });
    const fresh = (await createSv(ws.id, { serial: 2, md5: md5(empty), state: b64(empty) })).body.data;
    const late = await put(stale.attributes["hosted-state-upload-url"], STATE);
    expect(late.status).toBe(409);
    expect((await api("GET", `/state-versions/${stale.id}`)).body.data.attributes).toMatchObject({ status: "discarded", "hosted-state-upload-url": null });
    // Nothing is pending any more, so the holder may unlock; the newer state stays current.
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).body.data.id).toBe(fresh.id);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(0);
  });

  it("latest-change-at is the creation time of the newest state version, even while it is pending", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect(ws.attributes["latest-change-at"]).toBe(ws.attributes["created-at"]);
    await lockWs(ws.id);
    const sv = (await createSv(ws.id, { md5: md5(STATE) })).body.data;
    const shown = (await api("GET", `/workspaces/${ws.id}`)).body.data;
    expect(shown.attributes["latest-change-at"]).toBe(sv.attributes["created-at"]);
    expect(shown.relationships["current-state-version"].data).toBeNull();
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).status).toBe(404);
  });

  it("an intermediate pending version also blocks unlock (503) until its upload lands; then unlock promotes it", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await lockWs(ws.id);
    const sv = (await createSv(ws.id, { md5: md5(STATE), intermediate: true })).body.data;
    const blocked = await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect(blocked.status).toBe(503);
    expect(blocked.body.errors[0].detail).toContain("latest state version is still pending");
    expect((await put(sv.attributes["hosted-state-upload-url"], STATE)).status).toBe(200);
    // Finalized but intermediate: not current until the unlock.
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).status).toBe(404);
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
    const current = await api("GET", `/workspaces/${ws.id}/current-state-version`);
    expect(current.body.data).toMatchObject({ id: sv.id, attributes: { intermediate: false } });
  });

  it("force-unlock also makes the latest finalized intermediate version current", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await makeTeam(org);
    await grantWorkspace(other.id, ws.id, "write");
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: other.token });
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      token: other.token,
      body: svBody({ md5: md5(STATE), state: b64(STATE), intermediate: true }),
    });
    expect(sv.status).toBe(201);
    expect((await api("POST", `/workspaces/${ws.id}/actions/force-unlock`)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`)).body.data.id).toBe(sv.body.data.id);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(2);
  });

  it("lists a workspace's versions newest first, paginated and filtered by status", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await lockWs(ws.id);
    const ids: string[] = [];
    for (let serial = 1; serial <= 3; serial++) ids.push((await createSv(ws.id, { serial, md5: md5(STATE), state: b64(STATE) })).body.data.id);
    ids.push((await createSv(ws.id, { serial: 4, md5: md5(STATE) })).body.data.id);
    const q = (extra: string) =>
      api("GET", `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${ws.attributes.name}&filter%5Borganization%5D%5Bname%5D=${org}${extra}`);
    const page1 = await q("&page%5Bsize%5D=2");
    expect(page1.body.data.map((s: { id: string }) => s.id)).toEqual([ids[3], ids[2]]);
    expect(page1.body.meta.pagination).toMatchObject({ "total-count": 4, "total-pages": 2, "next-page": 2 });
    const page2 = await q("&page%5Bsize%5D=2&page%5Bnumber%5D=2");
    expect(page2.body.data.map((s: { id: string }) => s.id)).toEqual([ids[1], ids[0]]);
    const finalized = await q("&filter%5Bstatus%5D=finalized");
    expect(finalized.body.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await api("GET", `/state-versions?filter%5Borganization%5D%5Bname%5D=${org}`)).status).toBe(400);
  });

  it("state versions are 404 to callers who cannot read the workspace's state", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await lockWs(ws.id);
    const sv = (await createSv(ws.id, { md5: md5(STATE), state: b64(STATE) })).body.data;
    const outsider = await makeTeam(org);
    expect((await api("GET", `/state-versions/${sv.id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`, { token: outsider.token })).status).toBe(404);
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    expect((await api("GET", `/state-versions/${sv.id}`, { token: reader.token })).status).toBe(200);
  });
});

describe("signed blob URLs", () => {
  async function pendingVersion() {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    return { ws, sv: (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE) }) })).body.data };
  }
  const put = (url: string, body: string = STATE) => raw(url, { method: "PUT", body, headers: { "Content-Type": "application/octet-stream" } });

  it("refuses unsigned, re-targeted and wrong-method URLs with a JSON:API 403, and accepts the genuine one", async () => {
    const { sv } = await pendingVersion();
    const url = new URL(sv.attributes["hosted-state-upload-url"]);
    expect(url.searchParams.get("exp")).toMatch(/^\d+$/);
    // Valid for 25 hours, as the real service's.
    expect(Number(url.searchParams.get("exp")) - Date.now() / 1000).toBeGreaterThan(25 * 3600 - 120);
    const unsigned = new URL(url);
    unsigned.search = "";
    const res = await put(unsigned.toString());
    expect(res.status).toBe(403);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/vnd\.api\+json/);
    expect((await res.json<{ errors: { status: string }[] }>()).errors[0].status).toBe("403");
    const other = await pendingVersion();
    const retargeted = new URL(url);
    retargeted.pathname = new URL(other.sv.attributes["hosted-state-upload-url"]).pathname;
    expect((await put(retargeted.toString())).status).toBe(403);
    const asGet = new URL(url);
    asGet.searchParams.set("method", "GET");
    expect((await raw(asGet.toString())).status).toBe(403);
    expect((await raw(url.toString())).status).toBe(403); // a PUT URL is not a download URL
    expect((await put(url.toString())).status).toBe(200);
    expect((await put(url.toString())).status).toBe(409); // already uploaded
  });

  it("downloads work with or without a bearer token (go-tfe sends one, Terraform none); JSON state too", async () => {
    const { ws, sv } = await pendingVersion();
    const json = JSON.stringify({ format_version: "1.0", values: {} });
    expect((await put(sv.attributes["hosted-json-state-upload-url"], json)).status).toBe(200);
    expect((await put(sv.attributes["hosted-state-upload-url"])).status).toBe(200);
    const after = (await api("GET", `/state-versions/${sv.id}`)).body.data.attributes;
    expect(after["hosted-json-state-upload-url"]).toBeNull();
    const withToken = await raw(after["hosted-state-download-url"], { headers: { Authorization: "Bearer whatever", Accept: "application/json" } });
    expect(await withToken.text()).toBe(STATE);
    expect(await (await raw(after["hosted-json-state-download-url"])).text()).toBe(json);
    // After the workspace is deleted its blobs are gone, even through a still-valid URL.
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    expect((await raw(after["hosted-state-download-url"])).status).toBe(404);
    expect((await api("GET", `/state-versions/${sv.id}`)).status).toBe(404);
  });

  it("refuses an upload that declares more than the state size limit (413)", async () => {
    const { sv } = await pendingVersion();
    const res = await raw(sv.attributes["hosted-state-upload-url"], {
      method: "PUT",
      body: STATE,
      headers: { "Content-Type": "application/octet-stream", "Content-Length": String(LIMITS.stateBodyBytes + 1) },
    });
    expect(res.status).toBe(413);
  });
});

describe("the state-version index is the workspace DO's to write", () => {
  const indexed = async (wsId: string) =>
    (await env.DB.prepare("SELECT id FROM state_version_index WHERE workspace_id = ? ORDER BY id").bind(wsId).all<{ id: string }>()).results.map((r) => r.id);

  it("a version is indexed with its workspace's flush, repaired by the alarm when that flush fails, and dropped with the workspace", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const first = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) });
    expect(first.status).toBe(201);
    // The version's id names its workspace, so it is found before its index write lands.
    expect(first.body.data.id).toMatch(new RegExp(`^sv-[A-Za-z0-9]{16}${ws.id.slice(3)}$`));
    await indexSettled(ws.id);
    expect(await indexed(ws.id)).toEqual([first.body.data.id]);
    // A failed index write: the version is committed in the DO and found by id at once; the alarm indexes it.
    const second = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      body: svBody({ serial: 2, md5: md5(STATE), state: b64(STATE) }),
      headers: { "X-Fault-Fail-Index-Writes": "1" },
    });
    expect(second.status).toBe(201);
    expect((await api("GET", `/state-versions/${second.body.data.id}`)).status).toBe(200);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(ws.id))).toBe(true);
    expect((await api("GET", `/state-versions/${second.body.data.id}`)).status).toBe(200);
    expect(await indexed(ws.id)).toEqual([first.body.data.id, second.body.data.id].sort());
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    expect(await indexed(ws.id)).toEqual([]);
  });
});

describe("workspace resources (GET /workspaces/:id/resources)", () => {
  const MODULE_STATE = stateDoc({
    terraformVersion: "1.11.4",
    lineage: "res",
    resources: [
      {
        module: "module.media_bucket",
        mode: "managed",
        type: "aws_s3_bucket_public_access_block",
        name: "this",
        provider: 'provider["registry.terraform.io/hashicorp/aws"]',
        instances: [{ index_key: 0, attributes: {} }],
      },
      {
        mode: "managed",
        type: "random_pet",
        name: "each",
        provider: 'provider["registry.terraform.io/hashicorp/random"]',
        instances: [{ index_key: "a" }, { index_key: "b" }],
      },
      { mode: "managed", type: "null_resource", name: "one", provider: 'provider["registry.terraform.io/hashicorp/null"]', instances: [{}] },
      { mode: "data", type: "aws_region", name: "current", provider: 'provider["registry.terraform.io/hashicorp/aws"]', instances: [{}] },
    ],
  });

  it("lists every managed instance of the current state with its address, module and provider, paginated", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect((await api("GET", `/workspaces/${ws.id}/resources`)).body.data).toEqual([]);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(MODULE_STATE), state: b64(MODULE_STATE) }) });
    expect(sv.status).toBe(201);
    const res = await api("GET", `/workspaces/${ws.id}/resources`);
    expect(res.status).toBe(200);
    const rows = res.body.data.map((r: { attributes: Record<string, unknown> }) => [
      r.attributes.address,
      r.attributes.name,
      r.attributes.module,
      r.attributes.provider,
    ]);
    expect(rows).toEqual([
      ["media_bucket.aws_s3_bucket_public_access_block.this[0]", "this", "media_bucket", "hashicorp/aws"],
      ['random_pet.each["a"]', "each", "root", "hashicorp/random"],
      ['random_pet.each["b"]', "each", "root", "hashicorp/random"],
      ["null_resource.one", "one", "root", "hashicorp/null"],
    ]);
    expect(res.body.data[0]).toMatchObject({ type: "resources", attributes: { "modified-by-state-version-id": sv.body.data.id } });
    // Ids are stable across reads.
    expect((await api("GET", `/workspaces/${ws.id}/resources`)).body.data.map((r: { id: string }) => r.id)).toEqual(
      res.body.data.map((r: { id: string }) => r.id),
    );
    const far = await api("GET", `/workspaces/${ws.id}/resources?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 4 });
  });
});

describe("backing data of state versions (Terraform Enterprise's data retention actions)", () => {
  it("soft delete hides the blob, restore brings it back, a permanent delete is final, the current version keeps its data", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const old = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: b64(STATE) }) })).body.data;
    const current = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ serial: 2, md5: md5(STATE), state: b64(STATE) }) })).body.data;
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const download = async () => (await raw(old.attributes["hosted-state-download-url"])).status;
    const act = (id: string, action: string) => api("POST", `/state-versions/${id}/actions/${action}`);
    expect(await download()).toBe(200);
    expect((await act(old.id, "soft_delete_backing_data")).status).toBe(204);
    expect(await download()).toBe(404);
    expect((await act(old.id, "restore_backing_data")).status).toBe(204);
    expect(await download()).toBe(200);
    expect((await act(old.id, "permanently_delete_backing_data")).status).toBe(422); // only after a soft delete
    expect((await act(old.id, "soft_delete_backing_data")).status).toBe(204);
    expect((await act(old.id, "permanently_delete_backing_data")).status).toBe(204);
    const refused = await act(old.id, "restore_backing_data");
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toContain("transition not allowed");
    expect(await download()).toBe(404);
    expect((await act(current.id, "soft_delete_backing_data")).status).toBe(422);
    expect((await raw(current.attributes["hosted-state-download-url"])).status).toBe(200);
  });
});
