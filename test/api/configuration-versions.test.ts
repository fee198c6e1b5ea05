// Configuration versions: create (defaults, speculative, provisional), upload through the signed URL without a token,
// read and list as go-tfe compares them, download of the exact bytes, archive rules, the workspace's current
// configuration version, who may do what, and bad input.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api } from "../helpers";

const raw = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url, init));
const cvBody = (attributes?: Record<string, unknown>) => ({ data: { type: "configuration-versions", ...(attributes ? { attributes } : {}) } });

async function workspace() {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  return { org, ws: ws.id as string };
}

async function createCv(ws: string, attributes?: Record<string, unknown>, opts: { token?: string; headers?: Record<string, string> } = {}) {
  const res = await api("POST", `/workspaces/${ws}/configuration-versions`, { body: cvBody(attributes), ...opts });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** Bytes that are not text (a tar.gz never is), of `n` bytes. */
function bytesOf(n: number, seed = 7): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** PUT as go-tfe does it: no Authorization, octet-stream. */
const upload = (url: string, body: Uint8Array) =>
  raw(url, { method: "PUT", body, headers: { "Content-Type": "application/octet-stream", Accept: "application/json, */*" } });

async function uploaded(ws: string, body = bytesOf(1000)) {
  const cv = await createCv(ws, { "auto-queue-runs": false });
  expect((await upload(cv.attributes["upload-url"], body)).status).toBe(200);
  return cv;
}

const withoutUploadUrl = (data: { attributes: Record<string, unknown> }) => {
  const { "upload-url": _url, ...attributes } = data.attributes;
  return { ...data, attributes };
};

/** The download endpoint's answer, its redirect not followed. */
const downloadOf = (id: string, token = ADMIN) =>
  raw(`http://localhost/api/v2/configuration-versions/${id}/download`, { redirect: "manual", headers: { Authorization: `Bearer ${token}` } });

const currentCv = async (ws: string) => (await api("GET", `/workspaces/${ws}`)).body.data.relationships["current-configuration-version"].data;

describe("configuration versions: create", () => {
  it("defaults: pending, from the API, queues runs, not speculative or provisional; an absolute upload URL only here", async () => {
    const { ws } = await workspace();
    const cv = await createCv(ws);
    expect(cv.id).toMatch(/^cv-[A-Za-z0-9]{16}$/);
    expect(cv.attributes).toEqual({
      "auto-queue-runs": true,
      error: null,
      "error-message": null,
      source: "tfe-api",
      speculative: false,
      provisional: false,
      status: "pending",
      "status-timestamps": {},
      "upload-url": expect.stringMatching(new RegExp(`^http://localhost/_slugs/${ws}/${cv.id}\\?`)),
    });
    expect(cv.relationships["ingress-attributes"]).toEqual({
      data: null,
      links: { related: `/api/v2/configuration-versions/${cv.id}/ingress-attributes` },
    });
    expect(cv.links).toEqual({ self: `/api/v2/configuration-versions/${cv.id}`, download: `/api/v2/configuration-versions/${cv.id}/download` });
    // A body without attributes is the same request.
    expect((await api("POST", `/workspaces/${ws}/configuration-versions`, { body: cvBody() })).body.data.attributes["auto-queue-runs"]).toBe(true);
  });

  it("echoes speculative and auto-queue-runs; the CLI's integration header makes the source terraform", async () => {
    const { ws } = await workspace();
    const cv = await createCv(ws, { speculative: true, "auto-queue-runs": false }, { headers: { "X-Terraform-Integration": "cloud" } });
    expect(cv.attributes).toMatchObject({ speculative: true, "auto-queue-runs": false, provisional: false, source: "terraform" });
    expect((await api("GET", `/configuration-versions/${cv.id}`)).body.data.attributes.source).toBe("terraform");
  });

  it("a non-provisional version is current at once, uploaded or not; a provisional one never replaces it", async () => {
    const { ws } = await workspace();
    expect(await currentCv(ws)).toBeNull();
    const first = await createCv(ws, { "auto-queue-runs": false });
    expect(await currentCv(ws)).toEqual({ id: first.id, type: "configuration-versions" });
    const provisional = await createCv(ws, { provisional: true });
    expect(provisional.attributes.provisional).toBe(true);
    expect(await currentCv(ws)).toEqual({ id: first.id, type: "configuration-versions" });
    const third = await createCv(ws);
    expect(await currentCv(ws)).toEqual({ id: third.id, type: "configuration-versions" });
    // include=current_configuration_version carries the version itself, as its own endpoint shows it.
    const shown = await api("GET", `/workspaces/${ws}?include=current_configuration_version`);
    expect(shown.body.included).toEqual([(await api("GET", `/configuration-versions/${third.id}`)).body.data]);
  });

  it("refuses bad input with 4xx and creates nothing", async () => {
    const { ws } = await workspace();
    const wrongType = await api("POST", `/workspaces/${ws}/configuration-versions`, { body: { data: { type: "runs" } } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors[0].source).toEqual({ pointer: "/data/type" });
    const wrongValue = await api("POST", `/workspaces/${ws}/configuration-versions`, { body: cvBody({ "auto-queue-runs": "yes" }) });
    expect(wrongValue.status).toBe(422);
    expect(wrongValue.body.errors[0].source).toEqual({ pointer: "/data/attributes/auto-queue-runs" });
    expect((await api("POST", `/workspaces/${ws}/configuration-versions`, { raw: "{", contentType: "application/vnd.api+json" })).status).toBe(400);
    expect((await api("POST", `/workspaces/ws-doesnotexist00000/configuration-versions`, { body: cvBody() })).status).toBe(404);
    const list = await api("GET", `/workspaces/${ws}/configuration-versions`);
    expect(list.body.meta.pagination["total-count"]).toBe(0);
    expect(await currentCv(ws)).toBeNull();
    // Unknown and malformed ids are simply not found (go-tfe expects ErrResourceNotFound for both).
    for (const id of ["cv-doesnotexist0000", "nonexisting"]) {
      expect((await api("GET", `/configuration-versions/${id}`)).status).toBe(404);
      expect((await api("GET", `/configuration-versions/${id}/download`)).status).toBe(404);
      expect((await api("POST", `/configuration-versions/${id}/actions/archive`)).status).toBe(404);
    }
    expect((await api("GET", `/workspaces/${ws}/configuration-versions?include=bogus`)).status).toBe(400);
  });
});

describe("configuration versions: upload and download", () => {
  it("uploads without a token through the signed URL; the version is uploaded; download returns the exact bytes", async () => {
    const { ws } = await workspace();
    const cv = await createCv(ws, { "auto-queue-runs": false });
    // Larger than one stored piece and than one read part, so both are exercised.
    const body = bytesOf(9 * 1024 * 1024 + 123);
    const put = await upload(cv.attributes["upload-url"], body);
    expect(put.status).toBe(200);
    const read = (await api("GET", `/configuration-versions/${cv.id}`)).body.data;
    expect(read.attributes.status).toBe("uploaded");
    expect(Object.keys(read.attributes["status-timestamps"]).sort()).toEqual(["finished-at", "started-at"]);
    expect(read.attributes["status-timestamps"]["finished-at"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(read.attributes["upload-url"]).toBeUndefined();
    const redirect = await downloadOf(cv.id);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get("Location")!;
    expect(location).toMatch(new RegExp(`^http://localhost/_slugs/${ws}/${cv.id}\\?method=GET&`));
    const got = await raw(location);
    expect(got.status).toBe(200);
    const bytes = new Uint8Array(await got.arrayBuffer());
    expect(bytes.byteLength).toBe(body.byteLength);
    expect(bytes.every((b, i) => b === body[i])).toBe(true);
  });

  it("a run's configuration downloads through the run, byte for byte; a caller who cannot read the run gets 404", async () => {
    const { ws } = await workspace();
    const cv = await createCv(ws, { "auto-queue-runs": false });
    const body = bytesOf(4096);
    expect((await upload(cv.attributes["upload-url"], body)).status).toBe(200);
    const run = await api("POST", "/runs", {
      body: {
        data: {
          type: "runs",
          relationships: {
            workspace: { data: { type: "workspaces", id: ws } },
            "configuration-version": { data: { type: "configuration-versions", id: cv.id } },
          },
        },
      },
    });
    expect(run.status).toBe(201);
    const redirect = await raw(`http://localhost/api/v2/runs/${run.body.data.id}/configuration-version/download`, {
      redirect: "manual",
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    expect(redirect.status).toBe(302);
    const got = new Uint8Array(await (await raw(redirect.headers.get("Location")!)).arrayBuffer());
    expect(got.byteLength).toBe(body.byteLength);
    expect(got.every((b, i) => b === body[i])).toBe(true);
    const other = await makeUser();
    const refused = await raw(`http://localhost/api/v2/runs/${run.body.data.id}/configuration-version/download`, {
      redirect: "manual",
      headers: { Authorization: `Bearer ${other.token}` },
    });
    expect(refused.status).toBe(404);
  });

  it("a mutated URL is refused and stores nothing; the download URL does not take uploads", async () => {
    const { ws } = await workspace();
    const cv = await createCv(ws, { "auto-queue-runs": false });
    const url: string = cv.attributes["upload-url"];
    const other = await createCv(ws, { "auto-queue-runs": false });
    const body = bytesOf(100);
    // go-tfe's own mutation: the URL's last ten characters replaced.
    expect((await upload(`${url.slice(0, -10)}nonexisting`, body)).status).toBe(403);
    expect((await upload(url.replace(cv.id, other.id), body)).status).toBe(403);
    expect((await upload(url.replace("method=PUT", "method=GET"), body)).status).toBe(403);
    expect(
      (
        await upload(
          url.replace(/exp=(\d+)/, (_m, e) => `exp=${Number(e) + 1}`),
          body,
        )
      ).status,
    ).toBe(403);
    expect((await upload(url.replace(`/${ws}/`, "/ws-doesnotexist00000/"), body)).status).toBe(403);
    expect((await raw(url)).status).toBe(403);
    for (const id of [cv.id, other.id]) expect((await api("GET", `/configuration-versions/${id}`)).body.data.attributes.status).toBe("pending");
    // Not uploaded: nothing to download (404, as the docs say).
    expect((await api("GET", `/configuration-versions/${cv.id}/download`)).status).toBe(404);
  });

  it("a second upload replaces the archive until a run uses it (go-tfe uploads twice to one URL)", async () => {
    const { ws } = await workspace();
    const cv = await uploaded(ws, bytesOf(500, 1));
    const second = bytesOf(700, 2);
    expect((await upload(cv.attributes["upload-url"], second)).status).toBe(200);
    const got = new Uint8Array(await (await raw((await downloadOf(cv.id)).headers.get("Location")!)).arrayBuffer());
    expect([...got]).toEqual([...second]);
  });

  it("a deleted workspace's URLs stop working and its versions leave the index", async () => {
    const { org, ws } = await workspace();
    const cv = await uploaded(ws);
    const pending = await createCv(ws);
    const orgId = (await env.DB.prepare("SELECT external_id FROM organizations WHERE name = ?").bind(org).first<{ external_id: string }>())!.external_id;
    const rows = async () =>
      (await env.DB.prepare("SELECT id, organization_id FROM configuration_versions WHERE workspace_id = ? ORDER BY id").bind(ws).all()).results;
    expect(await rows()).toEqual([cv.id, pending.id].sort().map((id) => ({ id, organization_id: orgId })));
    const download = (await downloadOf(cv.id)).headers.get("Location")!;
    expect((await api("DELETE", `/workspaces/${ws}`)).status).toBe(204);
    expect(await rows()).toEqual([]);
    expect((await api("GET", `/configuration-versions/${cv.id}`)).status).toBe(404);
    expect((await raw(download)).status).toBe(404);
    expect((await upload(pending.attributes["upload-url"], bytesOf(10))).status).toBe(404);
  });
});

describe("configuration versions: organisation delete", () => {
  it("drops the organisation's versions from the index; their URLs and reads answer 404", async () => {
    const { org, ws } = await workspace();
    const cv = await uploaded(ws);
    const download = (await downloadOf(cv.id)).headers.get("Location")!;
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM configuration_versions WHERE workspace_id = ?").bind(ws).first<{ n: number }>())?.n).toBe(0);
    expect((await api("GET", `/configuration-versions/${cv.id}`)).status).toBe(404);
    expect((await raw(download)).status).toBe(404);
  });
});

describe("configuration versions: read and list", () => {
  it("create, read and list items are deep-equal apart from upload-url; page 999 keeps the total", async () => {
    const { ws } = await workspace();
    const one = await createCv(ws, { "auto-queue-runs": false });
    const two = await createCv(ws, { speculative: true });
    for (const created of [one, two]) {
      expect((await api("GET", `/configuration-versions/${created.id}?include=ingress_attributes`)).body.data).toEqual(withoutUploadUrl(created));
    }
    const list = await api("GET", `/workspaces/${ws}/configuration-versions?include=run`);
    expect(list.body.data).toEqual([withoutUploadUrl(two), withoutUploadUrl(one)]);
    expect(list.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 2 });
    const far = await api("GET", `/workspaces/${ws}/configuration-versions?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(far.status).toBe(200);
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 2 });
  });
});

describe("configuration versions: archive", () => {
  it("only an uploaded version that is not current; archived versions lose their archive", async () => {
    const { ws } = await workspace();
    const old = await createCv(ws, { "auto-queue-runs": false });
    const pendingArchive = await api("POST", `/configuration-versions/${old.id}/actions/archive`);
    // Pending and current: current is named first, as the real service does for the latest version.
    expect(pendingArchive.status).toBe(409);
    expect((await upload(old.attributes["upload-url"], bytesOf(300))).status).toBe(200);
    const current = await api("POST", `/configuration-versions/${old.id}/actions/archive`);
    expect(current.status).toBe(409);
    expect(current.body.errors).toEqual([
      { status: "409", title: "transition not allowed", detail: "configuration could not be archived because it is current" },
    ]);

    const newer = await createCv(ws, { "auto-queue-runs": false });
    // Not uploaded, and not current any more: still not archivable.
    const provisional = await createCv(ws, { provisional: true });
    const notUploaded = await api("POST", `/configuration-versions/${provisional.id}/actions/archive`);
    expect(notUploaded.status).toBe(409);
    expect(notUploaded.body.errors[0]).toMatchObject({ title: "transition not allowed", detail: "configuration could not be archived because it is pending" });
    expect((await upload(newer.attributes["upload-url"], bytesOf(300))).status).toBe(200);

    const archived = await api("POST", `/configuration-versions/${old.id}/actions/archive`);
    expect(archived.status).toBe(202);
    expect(archived.text).toBe("");
    const read = (await api("GET", `/configuration-versions/${old.id}`)).body.data.attributes;
    expect(read.status).toBe("archived");
    expect(Object.keys(read["status-timestamps"]).sort()).toEqual(["archived-at", "finished-at", "started-at"]);
    expect((await api("GET", `/configuration-versions/${old.id}/download`)).status).toBe(404);
    expect((await api("POST", `/configuration-versions/${old.id}/actions/archive`)).status).toBe(409);
    expect((await upload(old.attributes["upload-url"], bytesOf(10))).status).toBe(409);
    expect(await currentCv(ws)).toEqual({ id: newer.id, type: "configuration-versions" });
  });
});

describe("configuration versions: backing data (Terraform Enterprise's data retention actions)", () => {
  const act = (id: string, action: string, edition?: "hosted") => api("POST", `/configuration-versions/${id}/actions/${action}`, { edition });
  const runOn = (ws: string, cv: string) =>
    api("POST", "/runs", {
      body: {
        data: {
          type: "runs",
          relationships: { workspace: { data: { type: "workspaces", id: ws } }, "configuration-version": { data: { type: "configuration-versions", id: cv } } },
        },
      },
    });

  it("soft delete hides the archive, restore brings it back, a permanent delete is final; the current version keeps its data", async () => {
    const { ws } = await workspace();
    const bytes = bytesOf(700, 3);
    const old = await uploaded(ws, bytes);
    const current = await uploaded(ws);
    expect((await act(old.id, "soft_delete_backing_data")).status).toBe(204);
    expect((await downloadOf(old.id)).status).toBe(404);
    // The version itself is still there, as it was; it cannot start a run without its archive.
    expect((await api("GET", `/configuration-versions/${old.id}`)).body.data.attributes.status).toBe("uploaded");
    const refusedRun = await runOn(ws, old.id);
    expect(refusedRun.status).toBe(422);
    expect(refusedRun.body.errors[0].source).toEqual({ pointer: "/data/relationships/configuration-version/data/id" });
    expect((await api("GET", `/workspaces/${ws}/runs`)).body.data).toEqual([]);

    expect((await act(old.id, "restore_backing_data")).status).toBe(204);
    const back = await downloadOf(old.id);
    expect(back.status).toBe(302);
    expect(new Uint8Array(await (await raw(back.headers.get("Location")!)).arrayBuffer())).toEqual(bytes);

    expect((await act(old.id, "permanently_delete_backing_data")).status).toBe(422); // only after a soft delete
    expect((await act(old.id, "soft_delete_backing_data")).status).toBe(204);
    expect((await act(old.id, "soft_delete_backing_data")).status).toBe(204); // repeating it changes nothing
    expect((await act(old.id, "permanently_delete_backing_data")).status).toBe(204);
    const refused = await act(old.id, "restore_backing_data");
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toContain("transition not allowed");
    expect((await downloadOf(old.id)).status).toBe(404);

    const keeps = await act(current.id, "soft_delete_backing_data");
    expect(keeps.status).toBe(422);
    expect(keeps.body.errors[0].detail).toContain("current configuration version");
    expect((await downloadOf(current.id)).status).toBe(302);
  });

  it("are the self-hosted edition's: the hosted edition answers 404 and changes nothing", async () => {
    const { ws } = await workspace();
    const old = await uploaded(ws);
    await uploaded(ws);
    expect((await act(old.id, "soft_delete_backing_data", "hosted")).status).toBe(404);
    expect((await downloadOf(old.id)).status).toBe(302);
  });
});

describe("configuration versions: who may", () => {
  it("readers read, list and download; planners create, upload and archive; the organisation token and readers may not create", async () => {
    const { org, ws } = await workspace();
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws, "read");
    const planner = await makeTeam(org);
    await grantWorkspace(planner.id, ws, "plan");
    const orgToken = await makeOrgToken(org);
    const outsider = await makeTeam(await createOrg());

    for (const token of [reader.token, orgToken.token]) {
      expect((await api("POST", `/workspaces/${ws}/configuration-versions`, { body: cvBody(), token })).status).toBe(404);
    }
    expect((await api("GET", `/workspaces/${ws}/configuration-versions`)).body.meta.pagination["total-count"]).toBe(0);

    const old = await uploaded(ws);
    const cv = await createCv(ws, { "auto-queue-runs": false }, { token: planner.token });
    expect((await upload(cv.attributes["upload-url"], bytesOf(50))).status).toBe(200);
    for (const token of [reader.token, planner.token, orgToken.token]) {
      expect((await api("GET", `/configuration-versions/${cv.id}`, { token })).status).toBe(200);
      expect((await api("GET", `/workspaces/${ws}/configuration-versions`, { token })).body.data).toHaveLength(2);
      expect((await downloadOf(cv.id, token)).status).toBe(302);
    }
    for (const path of [`/configuration-versions/${cv.id}`, `/workspaces/${ws}/configuration-versions`, `/configuration-versions/${cv.id}/download`]) {
      expect((await api("GET", path, { token: outsider.token })).status).toBe(404);
    }
    expect((await api("POST", `/configuration-versions/${old.id}/actions/archive`, { token: reader.token })).status).toBe(404);
    expect((await api("POST", `/configuration-versions/${old.id}/actions/archive`, { token: orgToken.token })).status).toBe(404);
    expect((await api("GET", `/configuration-versions/${old.id}`)).body.data.attributes.status).toBe("uploaded");
    expect((await api("POST", `/configuration-versions/${old.id}/actions/archive`, { token: planner.token })).status).toBe(202);
  });
});
