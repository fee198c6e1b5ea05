// The private module registry: HCP Terraform's API without VCS (create, versions, upload to links.upload, list, show,
// delete), archive validation as the upload streams in, and the module registry protocol Terraform installs from.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signedObjectUrl } from "../../src/registry/registry-urls";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { gzip, MODULE_FILES, type TarEntry, tar, tarGz } from "../registry/archives";

const REG = "http://localhost/api/registry/v1/modules";

async function newModule(org: string, name = uniqueName("mod").replace(/-/g, "_"), token?: string) {
  const res = await api("POST", `/organizations/${org}/registry-modules`, {
    token,
    body: { data: { type: "registry-modules", attributes: { name, provider: "aws", "registry-name": "private" } } },
  });
  return { res, name };
}

async function newVersion(org: string, name: string, version: string, token?: string) {
  return api("POST", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/versions`, {
    token,
    body: { data: { type: "registry-module-versions", attributes: { version } } },
  });
}

const put = (url: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(url, { method: "PUT", body, headers: { "Content-Length": String(body.length), ...headers } }));

async function publish(org: string, name: string, version: string, archive?: Uint8Array) {
  const v = await newVersion(org, name, version);
  expect(v.status).toBe(201);
  const res = await put(v.body.data.links.upload, archive ?? (await tarGz(MODULE_FILES)));
  return { version: v.body.data, res };
}

const showModule = (org: string, name: string, token?: string) => api("GET", `/organizations/${org}/registry-modules/private/${org}/${name}/aws`, { token });

describe("registry modules", () => {
  it("creates a private module (201) in the documented shape; the same name and provider again is 422", async () => {
    const org = await createOrg();
    const { res, name } = await newModule(org);
    expect(res.status).toBe(201);
    const m = res.body.data;
    expect(m.id).toMatch(/^mod-[A-Za-z0-9]{16}$/);
    expect(m.attributes).toMatchObject({
      name,
      namespace: org,
      provider: "aws",
      "registry-name": "private",
      status: "pending",
      "version-statuses": [],
      permissions: { "can-delete": true, "can-resync": true, "can-retry": true },
    });
    expect(m.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    expect(m.links.self).toBe(`/api/v2/organizations/${org}/registry-modules/private/${org}/${name}/aws`);
    expect((await showModule(org, name)).body.data).toEqual(m);
    expect((await api("GET", `/registry-modules/${m.id}`)).body.data).toEqual(m);
    const again = (await newModule(org, name)).res;
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatchObject({ detail: "Name has already been taken", source: { pointer: "/data/attributes/name" } });
    expect((await api("GET", `/organizations/${org}/registry-modules`)).body.data).toHaveLength(1);
  });

  it("refuses bad names, a namespace on a private module and no-code, changing nothing", async () => {
    const org = await createOrg();
    const create = (attributes: Record<string, unknown>) =>
      api("POST", `/organizations/${org}/registry-modules`, { body: { data: { type: "registry-modules", attributes } } });
    for (const [attributes, pointer] of [
      [{ name: "bad name", provider: "aws" }, "name"],
      [{ name: "ok", provider: "AWS" }, "provider"],
      [{ name: "ok", provider: "aws", "registry-name": "PRIVATE" }, "registry-name"],
      [{ name: "ok", provider: "aws", "registry-name": "private", namespace: "someone-else" }, "namespace"],
      [{ name: "ok", provider: "aws", "registry-name": "public" }, "namespace"],
      [{ name: "ok", provider: "aws", "no-code": true }, "no-code"],
    ] as const) {
      const res = await create(attributes);
      expect(res.status, JSON.stringify(attributes)).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(`/data/attributes/${pointer}`);
    }
    expect((await api("GET", `/organizations/${org}/registry-modules`)).body.data).toEqual([]);
  });

  it("publishes a version: pending, then ok once its archive is uploaded; a duplicate version is 422", async () => {
    const org = await createOrg();
    const { name } = await newModule(org);
    const v = await newVersion(org, name, "1.2.3-alpha+feature");
    expect(v.status).toBe(201);
    expect(v.body.data.attributes).toMatchObject({ version: "1.2.3-alpha+feature", status: "pending", source: "tfe-api" });
    expect(v.body.data.links.upload).toMatch(/^http:\/\/localhost\/_registry\/object\/module\/modver-[A-Za-z0-9]+\?method=PUT&exp=\d+&sig=[0-9a-f]{64}$/);
    const dup = await newVersion(org, name, "1.2.3-alpha+feature");
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatchObject({ detail: "Version has already been taken", source: { pointer: "/data/attributes/version" } });
    expect((await newVersion(org, name, "not-a-version")).status).toBe(422);

    const up = await put(v.body.data.links.upload, await tarGz(MODULE_FILES));
    expect(up.status).toBe(200);
    const read = await api(
      "GET",
      `/organizations/${org}/registry-modules/private/${org}/${name}/aws/version?module_version=${encodeURIComponent("1.2.3-alpha+feature")}`,
    );
    expect(read.body.data.attributes).toMatchObject({ status: "ok", error: null });
    const m = (await showModule(org, name)).body.data.attributes;
    expect(m.status).toBe("setup_complete");
    expect(m["version-statuses"]).toEqual([{ version: "1.2.3-alpha+feature", status: "ok" }]);
    // The deprecated path go-tfe uses creates versions too.
    const legacy = await api("POST", `/registry-modules/${org}/${name}/aws/versions`, {
      body: { data: { type: "registry-module-versions", attributes: { version: "2.0.0" } } },
    });
    expect(legacy.status).toBe(201);
  });

  describe("archive validation", () => {
    /** A module archive of an empty main.tf and `entry`. */
    const besideMain = (entry: TarEntry) => tarGz([{ name: "main.tf", data: "" }, entry]);
    const cases: Array<[string, () => Promise<Uint8Array>, RegExp]> = [
      ["not gzip", async () => new TextEncoder().encode("just some text, not an archive"), /not a gzip-compressed tar archive/],
      ["gzip, not tar", async () => gzip(new TextEncoder().encode("x".repeat(2000))), /not a tar archive/],
      ["path traversal", async () => besideMain({ name: "../evil.tf", data: "x" }), /leaves the module directory/],
      ["absolute path", async () => tarGz([{ name: "/etc/passwd.tf", data: "x" }]), /absolute/],
      ["symlink", async () => besideMain({ name: "link.tf", type: "2", linkname: "/etc/passwd" }), /symbolic link/],
      ["hard link", async () => besideMain({ name: "h.tf", type: "1", linkname: "main.tf" }), /hard link/],
      ["device file", async () => besideMain({ name: "dev", type: "3" }), /not a file or directory/],
      ["truncated", async () => gzip(tar([{ name: "main.tf", data: "x".repeat(600) }], { end: false }).subarray(0, 700)), /truncated/],
      ["no configuration", async () => tarGz([{ name: "README.md", data: "# nothing" }]), /no Terraform configuration/],
      ["unpacks past the limit", async () => besideMain({ name: "big.bin", size: 600 * 1024 * 1024 }), /unpacks to more than/],
    ];
    for (const [what, make, reason] of cases) {
      it(`refuses ${what}: 422 with the reason, the version errored with it, nothing served`, async () => {
        const org = await createOrg();
        const { name } = await newModule(org);
        const { version, res } = await publish(org, name, "1.0.0", await make());
        expect(res.status).toBe(422);
        const body = (await res.json()) as { errors: Array<{ detail: string }> };
        expect(body.errors[0].detail).toMatch(reason);
        const m = (await showModule(org, name)).body.data.attributes;
        expect(m.status).toBe("setup_failed");
        expect(m["version-statuses"][0]).toMatchObject({ version: "1.0.0", status: "reg_ingress_failed" });
        expect(m["version-statuses"][0].error).toMatch(reason);
        expect((await api("GET", `${REG}/${org}/${name}/aws/versions`)).body.modules[0].versions).toEqual([]);
        expect((await api("GET", `${REG}/${org}/${name}/aws/1.0.0/download`)).status).toBe(404);
        // A valid upload to the same link fixes the version.
        expect((await put(version.links.upload, await tarGz(MODULE_FILES))).status).toBe(200);
        expect((await showModule(org, name)).body.data.attributes["version-statuses"][0]).toEqual({ version: "1.0.0", status: "ok" });
      });
    }

    it("refuses an upload announced past the size limit (413); takes one of unknown length (multipart)", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      const v = (await newVersion(org, name, "1.0.0")).body.data;
      const over = await exports.default
        .fetch(new Request(v.links.upload, { method: "PUT", body: new Uint8Array(10), headers: { "Content-Length": String(200 * 1024 * 1024) } }))
        .catch(() => null);
      // workerd may refuse the lying length itself; the service never accepts it.
      if (over) expect([400, 413]).toContain(over.status);
      const bytes = await tarGz(MODULE_FILES);
      // A stream of unknown length: the request goes out without Content-Length.
      const unknown = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes);
          c.close();
        },
      });
      const chunked = await exports.default.fetch(new Request(v.links.upload, { method: "PUT", body: unknown, duplex: "half" } as RequestInit));
      expect(chunked.status).toBe(200);
      expect((await showModule(org, name)).body.data.attributes["version-statuses"][0].status).toBe("ok");
    });
  });

  describe("the module registry protocol", () => {
    it("lists the versions whose archive was accepted and hands out a signed, expiring download location", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      const archive = await tarGz(MODULE_FILES);
      await publish(org, name, "1.0.0", archive);
      await publish(org, name, "1.1.0", archive);
      await newVersion(org, name, "2.0.0"); // never uploaded
      const list = await api("GET", `${REG}/${org}/${name}/aws/versions`);
      expect(list.status).toBe(200);
      expect(list.body.modules[0].source).toBe(`${org}/${name}/aws`);
      expect(list.body.modules[0].versions.map((v: { version: string }) => v.version)).toEqual(["1.1.0", "1.0.0"]);

      const dl = await api("GET", `${REG}/${org}/${name}/aws/1.1.0/download`);
      expect(dl.status).toBe(204);
      const location = dl.headers.get("X-Terraform-Get")!;
      expect(location).toMatch(/\/_registry\/object\/module\/modver-[A-Za-z0-9]+\?method=GET&exp=\d+&sig=[0-9a-f]{64}&archive=tar\.gz$/);
      const got = await exports.default.fetch(new Request(location));
      expect(got.status).toBe(200);
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(archive);
      expect((await api("GET", `${REG}/${org}/${name}/aws/2.0.0/download`)).status).toBe(404);
    });

    it("refuses an expired or altered download URL (403), and one whose version was deleted (404)", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      const { version } = await publish(org, name, "1.0.0");
      await publish(org, name, "1.0.1");
      const expired = await signedObjectUrl(env, "http://localhost", "GET", "module", version.id, Math.floor(Date.now() / 1000) - 11 * 60);
      expect((await exports.default.fetch(new Request(expired))).status).toBe(403);
      const fresh = await signedObjectUrl(env, "http://localhost", "GET", "module", version.id);
      expect((await exports.default.fetch(new Request(fresh))).status).toBe(200);
      // Another first character of the signature (a fixed "0" would leave one signature in 16 unaltered).
      const altered = fresh.replace(/sig=(.)/, (_m, c: string) => `sig=${c === "0" ? "1" : "0"}`);
      expect((await exports.default.fetch(new Request(altered))).status).toBe(403);
      expect((await exports.default.fetch(new Request(fresh.replace("method=GET", "method=PUT")))).status).toBe(403);
      // An upload URL is no download URL.
      const upload = await signedObjectUrl(env, "http://localhost", "PUT", "module", version.id);
      expect((await exports.default.fetch(new Request(upload))).status).toBe(403);
      expect((await api("DELETE", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/1.0.0`)).status).toBe(204);
      expect((await exports.default.fetch(new Request(fresh))).status).toBe(404);
    });

    it("reads inputs, outputs, submodules and examples from the module's files", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      await publish(org, name, "0.1.0");
      const d = (await api("GET", `${REG}/${org}/${name}/aws/0.1.0`)).body;
      expect(d.root.inputs).toEqual([
        { name: "name", type: "string", description: 'The name of "it"', default: "", required: true, sensitive: false },
        { name: "size", type: "number", description: "", default: "3", required: false, sensitive: false },
      ]);
      expect(d.root.outputs).toEqual([{ name: "id", description: "The resource's id" }]);
      expect(d.root.resources).toEqual([{ name: "this", type: "null_resource" }]);
      expect(d.root.readme).toBe("# Example module\n");
      expect(d.submodules.map((s: { path: string }) => s.path)).toEqual(["modules/child"]);
      expect(d.submodules[0].inputs.map((i: { name: string }) => i.name)).toEqual(["x"]);
      expect(d.examples.map((s: { path: string }) => s.path)).toEqual(["examples/basic"]);
      expect(d.examples[0].dependencies).toEqual([{ name: "m", source: "../..", version: "" }]);
    });
  });

  describe("another organisation's registry", () => {
    it("is invisible (404) in the API and the protocol, whatever the names", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      await publish(org, name, "1.0.0");
      const stranger = await makeUser({ ownerOf: await createOrg() });
      const paths = [
        `/organizations/${org}/registry-modules`,
        `/organizations/${org}/registry-modules/private/${org}/${name}/aws`,
        `/organizations/${org}/registry-modules/private/${org}/${name}/aws/version?module_version=1.0.0`,
        `${REG}/${org}/${name}/aws/versions`,
        `${REG}/${org}/${name}/aws/1.0.0/download`,
        `${REG}/${org}/${name}/aws/1.0.0`,
      ];
      for (const p of paths) expect((await api("GET", p, { token: stranger.token })).status, p).toBe(404);
      // Its own organisation named in the path does not reach this one's module either.
      const own = (await api("GET", "/organizations", { token: stranger.token })).body.data[0].id;
      expect((await api("GET", `/organizations/${own}/registry-modules/private/${org}/${name}/aws`, { token: stranger.token })).status).toBe(404);
      expect((await api("GET", `${REG}/${own}/${name}/aws/versions`, { token: stranger.token })).status).toBe(404);
      expect((await newVersion(org, name, "9.9.9", stranger.token)).status).toBe(404);
      expect((await api("DELETE", `/organizations/${org}/registry-modules/private/${org}/${name}`, { token: stranger.token })).status).toBe(404);
    });
  });

  describe("permissions", () => {
    it("manage-modules manages modules; members only read them", async () => {
      const org = await createOrg();
      const managers = await makeTeam(org, { "manage-modules": true });
      const providersOnly = await makeTeam(org, { "manage-providers": true });
      const member = await makeTeam(org);
      const { res, name } = await newModule(org, undefined, managers.token);
      expect(res.status).toBe(201);
      expect((await newModule(org, undefined, providersOnly.token)).res.status).toBe(404);
      expect((await newModule(org, undefined, member.token)).res.status).toBe(404);
      const read = await showModule(org, name, member.token);
      expect(read.status).toBe(200);
      expect(read.body.data.attributes.permissions).toEqual({ "can-delete": false, "can-resync": false, "can-retry": false });
      expect((await newVersion(org, name, "1.0.0", member.token)).status).toBe(404);
      const v = await newVersion(org, name, "1.0.0", managers.token);
      expect(v.status).toBe(201);
      // A member reads the version but gets no upload link.
      const seen = await api("GET", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/version?module_version=1.0.0`, { token: member.token });
      expect(seen.body.data.links).toBeUndefined();
    });

    it("a team given manage-modules through the teams API (organization-access, as go-tfe and the tfe provider send it) manages modules", async () => {
      const org = await createOrg();
      const team = await api("POST", `/organizations/${org}/teams`, {
        body: { data: { type: "teams", attributes: { name: uniqueName("t"), "organization-access": { "manage-modules": true } } } },
      });
      expect(team.body.data.attributes["organization-access"]).toMatchObject({ "manage-modules": true, "manage-providers": false });
      const token = (await api("POST", `/teams/${team.body.data.id}/authentication-token`)).body.data.attributes.token as string;
      expect((await newModule(org, undefined, token)).res.status).toBe(201);
      await api("PATCH", `/teams/${team.body.data.id}`, {
        body: { data: { type: "teams", attributes: { "organization-access": { "manage-modules": false } } } },
      });
      expect((await newModule(org, undefined, token)).res.status).toBe(404);
    });
  });

  describe("deletes", () => {
    it("deletes a version, a provider with its versions, and a whole name; the last version takes its provider", async () => {
      const org = await createOrg();
      const { name } = await newModule(org);
      await api("POST", `/organizations/${org}/registry-modules`, { body: { data: { type: "registry-modules", attributes: { name, provider: "gcp" } } } });
      await publish(org, name, "1.0.0");
      await publish(org, name, "1.1.0");
      expect((await api("DELETE", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/1.1.0`)).status).toBe(204);
      expect((await showModule(org, name)).body.data.attributes["version-statuses"].map((v: { version: string }) => v.version)).toEqual(["1.0.0"]);
      expect((await api("DELETE", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/1.0.0`)).status).toBe(204);
      expect((await showModule(org, name)).status).toBe(404);
      expect(
        (await api("GET", `/organizations/${org}/registry-modules`)).body.data.map((m: { attributes: { provider: string } }) => m.attributes.provider),
      ).toEqual(["gcp"]);
      expect((await api("POST", `/registry-modules/actions/delete/${org}/${name}`)).status).toBe(204);
      expect((await api("GET", `/organizations/${org}/registry-modules`)).body.data).toEqual([]);
      expect((await api("POST", `/registry-modules/actions/delete/${org}/${name}`)).status).toBe(404);
    });
  });
});
