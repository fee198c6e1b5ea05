// The private provider registry: GPG keys, providers, versions with their SHA256SUMS and signature, platforms with
// their binaries (checked against their shasum), and the provider registry protocol Terraform installs from.
import { env, exports } from "cloudflare:workers";
import { createMessage, generateKey, readPrivateKey, sign } from "openpgp";
import { beforeAll, describe, expect, it } from "vitest";
import { signedObjectUrl } from "../../src/registry/registry-urls";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const GPG = "http://localhost/api/registry/private/v2/gpg-keys";
const REG = "http://localhost/api/registry/v1/providers";
const enc = new TextEncoder();

let keys: { publicKey: string; privateKey: string; keyId: string };
let otherKey: { publicKey: string; privateKey: string };

beforeAll(async () => {
  const k = await generateKey({ type: "ecc", curve: "curve25519Legacy", userIDs: [{ name: "test", email: "test@example.com" }], format: "armored" });
  const priv = await readPrivateKey({ armoredKey: k.privateKey });
  keys = { publicKey: k.publicKey, privateKey: k.privateKey, keyId: priv.getKeyID().toHex().toUpperCase() };
  otherKey = await generateKey({ type: "ecc", curve: "curve25519Legacy", userIDs: [{ name: "other" }], format: "armored" });
});

async function detachedSignature(privateKey: string, data: Uint8Array): Promise<Uint8Array> {
  const key = await readPrivateKey({ armoredKey: privateKey });
  return sign({ message: await createMessage({ binary: data }), signingKeys: key, detached: true, format: "binary" }) as Promise<Uint8Array>;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const put = (url: string, body: Uint8Array) =>
  exports.default.fetch(new Request(url, { method: "PUT", body, headers: { "Content-Length": String(body.length) } }));

const addKey = (org: string, armor: string, token?: string) =>
  api("POST", GPG, { token, body: { data: { type: "gpg-keys", attributes: { namespace: org, "ascii-armor": armor } } } });

const newProvider = (org: string, name: string, registry = "private", namespace = org, token?: string) =>
  api("POST", `/organizations/${org}/registry-providers`, {
    token,
    body: { data: { type: "registry-providers", attributes: { name, namespace, "registry-name": registry } } },
  });

const base = (org: string, name: string) => `/organizations/${org}/registry-providers/private/${org}/${name}`;

/** A provider with version `version` on linux/amd64: key added, SHA256SUMS and signature and the binary uploaded. */
async function publishProvider(org: string, name: string, version = "1.0.0", zip = enc.encode(`zip of ${name} ${version}`)) {
  if ((await api("GET", `${GPG}/${org}/${keys.keyId}`)).status === 404) expect((await addKey(org, keys.publicKey)).status).toBe(201);
  if ((await api("GET", base(org, name))).status === 404) expect((await newProvider(org, name)).status).toBe(201);
  const filename = `terraform-provider-${name}_${version}_linux_amd64.zip`;
  const sum = await sha256(zip);
  const v = await api("POST", `${base(org, name)}/versions`, {
    body: { data: { type: "registry-provider-versions", attributes: { version, "key-id": keys.keyId, protocols: ["5.0"] } } },
  });
  expect(v.status).toBe(201);
  const sums = enc.encode(`${sum}  ${filename}\n`);
  expect((await put(v.body.data.links["shasums-upload"], sums)).status).toBe(200);
  expect((await put(v.body.data.links["shasums-sig-upload"], await detachedSignature(keys.privateKey, sums))).status).toBe(200);
  const pl = await api("POST", `${base(org, name)}/versions/${version}/platforms`, {
    body: { data: { type: "registry-provider-platforms", attributes: { os: "linux", arch: "amd64", shasum: sum, filename } } },
  });
  expect(pl.status).toBe(201);
  expect((await put(pl.body.data.links["provider-binary-upload"], zip)).status).toBe(200);
  return { version: v.body.data, platform: pl.body.data, zip, sums, filename, sum };
}

describe("GPG keys", () => {
  it("adds a key to a namespace (its id read from the armor), lists, shows, moves and deletes it", async () => {
    const org = await createOrg();
    const res = await addKey(org, keys.publicKey);
    expect(res.status).toBe(201);
    expect(res.body.data.attributes).toMatchObject({ "key-id": keys.keyId, namespace: org, source: "", "trust-signature": "", "source-url": null });
    expect(res.body.data.attributes["ascii-armor"]).toBe(keys.publicKey);
    expect((await addKey(org, keys.publicKey)).status).toBe(422);
    const list = await api("GET", `${GPG}?filter%5Bnamespace%5D=${org}`);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([res.body.data.id]);
    expect(list.body.meta.pagination["total-count"]).toBe(1);
    expect((await api("GET", `${GPG}/${org}/${keys.keyId}`)).body.data).toEqual(res.body.data);
    expect((await api("GET", GPG)).status).toBe(400);

    const other = await createOrg();
    const moved = await api("PATCH", `${GPG}/${org}/${keys.keyId}`, { body: { data: { type: "gpg-keys", attributes: { namespace: other } } } });
    expect(moved.status).toBe(200);
    expect(moved.body.data.attributes.namespace).toBe(other);
    expect((await api("GET", `${GPG}/${org}/${keys.keyId}`)).status).toBe(404);
    const stranger = await makeUser({ ownerOf: await createOrg() });
    const own = (await api("GET", "/organizations", { token: stranger.token })).body.data[0].id;
    expect((await addKey(own, keys.publicKey, stranger.token)).status).toBe(201);
    const refused = await api("PATCH", `${GPG}/${own}/${keys.keyId}`, {
      token: stranger.token,
      body: { data: { type: "gpg-keys", attributes: { namespace: other } } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.errors[0].detail).toBe("namespace not authorized");
    expect((await api("DELETE", `${GPG}/${other}/${keys.keyId}`)).status).toBe(204);
    expect((await api("GET", `${GPG}/${other}/${keys.keyId}`)).status).toBe(404);
  });

  it("refuses armor that is no public key, changing nothing", async () => {
    const org = await createOrg();
    for (const armor of ["not a key", otherKey.privateKey]) {
      const res = await addKey(org, armor);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe("/data/attributes/ascii-armor");
    }
    expect((await api("GET", `${GPG}?filter%5Bnamespace%5D=${org}`)).body.data).toEqual([]);
  });
});

describe("registry providers", () => {
  it("creates private and public providers; the real service's texts for a bad registry name", async () => {
    const org = await createOrg();
    const priv = await newProvider(org, "provider_name");
    expect(priv.status).toBe(201);
    expect(priv.body.data.attributes).toMatchObject({ name: "provider_name", namespace: org, "registry-name": "private", permissions: { "can-delete": true } });
    expect(priv.body.data.relationships.organization.data.id).toBe(org);
    const pub = await newProvider(org, "provider_name", "public", "public_namespace");
    expect(pub.status).toBe(201);
    expect((await newProvider(org, "provider_name")).status).toBe(422);
    expect((await newProvider(org, "x", "private", "someone-else")).status).toBe(422);
    const blank = await newProvider(org, "x", "");
    expect(blank.body.errors.map((e: { title: string; detail: string }) => `${e.title}\n\n${e.detail}`).join("\n")).toBe(
      "invalid attribute\n\nRegistry name can't be blank\ninvalid attribute\n\nRegistry name is not included in the list",
    );
    expect((await newProvider(org, "x", "invalid")).body.errors).toHaveLength(1);
    const list = await api("GET", `/organizations/${org}/registry-providers?filter%5Bregistry_name%5D=public`);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([pub.body.data.id]);
    expect((await api("GET", `/organizations/${org}/registry-providers?q=provider_`)).body.meta.pagination["total-count"]).toBe(2);
    expect((await api("GET", `/registry-providers/${priv.body.data.id}`)).body.data.id).toBe(priv.body.data.id);
  });

  it("versions: links to upload, no download links until uploaded, duplicates refused; include lists them", async () => {
    const org = await createOrg();
    await newProvider(org, "p");
    const create = (version: string) =>
      api("POST", `${base(org, "p")}/versions`, { body: { data: { type: "", attributes: { version, "key-id": "ABCDEF", protocols: ["5.0", "6.0"] } } } });
    const v = await create("1.0.0");
    expect(v.status).toBe(201);
    expect(v.body.data.attributes).toMatchObject({
      version: "1.0.0",
      "key-id": "ABCDEF",
      protocols: ["5.0", "6.0"],
      "shasums-uploaded": false,
      "shasums-sig-uploaded": false,
    });
    expect(Object.keys(v.body.data.links).sort()).toEqual(["shasums-sig-upload", "shasums-upload"]);
    expect(v.body.data.links["shasums-upload"]).toContain("/object/");
    const dup = await create("1.0.0");
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0].detail).toBe("Version has already been taken");
    await create("1.1.0");
    const list = await api("GET", `${base(org, "p")}/versions`);
    expect(list.body.data.map((x: { attributes: { version: string } }) => x.attributes.version)).toEqual(["1.1.0", "1.0.0"]);
    const withVersions = await api("GET", `${base(org, "p")}?include=registry-provider-versions`);
    expect(withVersions.body.included.map((x: { type: string }) => x.type)).toEqual(["registry-provider-versions", "registry-provider-versions"]);
    expect((await api("GET", `${base(org, "p")}?include=nope`)).status).toBe(400);
  });

  it("refuses a malformed SHA256SUMS, a bad signature and a binary whose SHA-256 is not the shasum, keeping nothing", async () => {
    const org = await createOrg();
    const { version, platform } = await publishProvider(org, "checks");
    expect((await put(version.links["shasums-upload"], enc.encode("not a checksum file\n"))).status).toBe(422);
    const badSig = await put(version.links["shasums-sig-upload"], await detachedSignature(otherKey.privateKey, enc.encode("something else")));
    expect(badSig.status).toBe(422);
    const badBinary = await put(platform.links["provider-binary-upload"], enc.encode("another zip"));
    expect(badBinary.status).toBe(422);
    expect(((await badBinary.json()) as { errors: Array<{ detail: string }> }).errors[0].detail).toMatch(/SHA-256/);
    // What was uploaded before is still served.
    const dl = await api("GET", `${REG}/${org}/checks/1.0.0/download/linux/amd64`);
    expect(dl.status).toBe(200);
    const zip = await exports.default.fetch(new Request(dl.body.download_url));
    expect(await zip.text()).toBe("zip of checks 1.0.0");
  });

  describe("the provider registry protocol", () => {
    it("lists complete versions with their platforms and describes a package as Terraform needs it", async () => {
      const org = await createOrg();
      const one = await publishProvider(org, "null", "1.0.0");
      await publishProvider(org, "null", "1.1.0");
      // A version without its files is not offered.
      await api("POST", `${base(org, "null")}/versions`, { body: { data: { type: "", attributes: { version: "2.0.0", "key-id": keys.keyId } } } });
      const versions = await api("GET", `${REG}/${org}/null/versions`);
      expect(versions.status).toBe(200);
      expect(versions.body.versions).toEqual([
        { version: "1.1.0", protocols: ["5.0"], platforms: [{ os: "linux", arch: "amd64" }] },
        { version: "1.0.0", protocols: ["5.0"], platforms: [{ os: "linux", arch: "amd64" }] },
      ]);
      const dl = await api("GET", `${REG}/${org}/null/1.0.0/download/linux/amd64`);
      expect(dl.status).toBe(200);
      expect(dl.body).toMatchObject({ protocols: ["5.0"], os: "linux", arch: "amd64", filename: one.filename, shasum: one.sum });
      expect(dl.body.signing_keys.gpg_public_keys).toEqual([
        { key_id: keys.keyId, ascii_armor: keys.publicKey, trust_signature: "", source: "", source_url: null },
      ]);
      const fetchBytes = async (url: string) => new Uint8Array(await (await exports.default.fetch(new Request(url))).arrayBuffer());
      expect(await fetchBytes(dl.body.download_url)).toEqual(one.zip);
      expect(await fetchBytes(dl.body.shasums_url)).toEqual(one.sums);
      expect((await fetchBytes(dl.body.shasums_signature_url)).length).toBeGreaterThan(0);
      expect((await api("GET", `${REG}/${org}/null/1.0.0/download/darwin/arm64`)).status).toBe(404);
      expect((await api("GET", `${REG}/${org}/null/2.0.0/download/linux/amd64`)).status).toBe(404);
    });

    it("expires its download URLs", async () => {
      const org = await createOrg();
      const { platform } = await publishProvider(org, "exp");
      const old = await signedObjectUrl(env, "http://localhost", "GET", "binary", platform.id, Math.floor(Date.now() / 1000) - 11 * 60);
      expect((await exports.default.fetch(new Request(old))).status).toBe(403);
    });

    it("needs the version's signing key in the registry", async () => {
      const org = await createOrg();
      await publishProvider(org, "keyless");
      expect((await api("DELETE", `${GPG}/${org}/${keys.keyId}`)).status).toBe(204);
      expect((await api("GET", `${REG}/${org}/keyless/1.0.0/download/linux/amd64`)).status).toBe(404);
    });
  });

  it("another organisation's providers and keys are invisible (404), in the API and the protocol", async () => {
    const org = await createOrg();
    await publishProvider(org, "hidden");
    const stranger = await makeUser({ ownerOf: await createOrg() });
    for (const p of [
      `/organizations/${org}/registry-providers`,
      base(org, "hidden"),
      `${base(org, "hidden")}/versions`,
      `${base(org, "hidden")}/versions/1.0.0`,
      `${base(org, "hidden")}/versions/1.0.0/platforms`,
      `${base(org, "hidden")}/versions/1.0.0/platforms/linux/amd64`,
      `${GPG}?filter%5Bnamespace%5D=${org}`,
      `${GPG}/${org}/${keys.keyId}`,
      `${REG}/${org}/hidden/versions`,
      `${REG}/${org}/hidden/1.0.0/download/linux/amd64`,
    ]) {
      expect((await api("GET", p, { token: stranger.token })).status, p).toBe(404);
    }
    expect((await api("DELETE", base(org, "hidden"), { token: stranger.token })).status).toBe(404);
    expect((await addKey(org, otherKey.publicKey, stranger.token)).status).toBe(404);
  });

  it("manage-providers manages providers and keys; members read them", async () => {
    const org = await createOrg();
    const managers = await makeTeam(org, { "manage-providers": true });
    const modulesOnly = await makeTeam(org, { "manage-modules": true });
    const member = await makeTeam(org);
    expect((await newProvider(org, "a", "private", org, managers.token)).status).toBe(201);
    expect((await newProvider(org, "b", "private", org, modulesOnly.token)).status).toBe(404);
    expect((await addKey(org, keys.publicKey, member.token)).status).toBe(404);
    expect((await addKey(org, keys.publicKey, managers.token)).status).toBe(201);
    const read = await api("GET", base(org, "a"), { token: member.token });
    expect(read.status).toBe(200);
    expect(read.body.data.attributes.permissions).toEqual({ "can-delete": false });
    expect((await api("GET", `${GPG}/${org}/${keys.keyId}`, { token: member.token })).status).toBe(200);
    expect((await api("DELETE", base(org, "a"), { token: member.token })).status).toBe(404);
    expect((await api("DELETE", base(org, "a"), { token: managers.token })).status).toBe(204);
  });

  it("streams a 20 MiB binary sent without a length (multipart, several parts) and serves it whole", async () => {
    const org = await createOrg();
    const zip = new Uint8Array(20 * 1024 * 1024 + 123);
    for (let i = 0; i < zip.length; i += 65536) crypto.getRandomValues(zip.subarray(i, Math.min(i + 65536, zip.length)));
    const { platform } = await publishProvider(org, "big", "1.0.0", new Uint8Array([1]));
    // A second platform of the same version carries the big binary.
    const pl = await api("POST", `${base(org, "big")}/versions/1.0.0/platforms`, {
      body: { data: { type: "", attributes: { os: "darwin", arch: "arm64", shasum: await sha256(zip), filename: "big.zip" } } },
    });
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= zip.length) return c.close();
        c.enqueue(zip.slice(sent, sent + 1024 * 1024));
        sent += 1024 * 1024;
      },
    });
    const res = await exports.default.fetch(
      new Request(pl.body.data.links["provider-binary-upload"], { method: "PUT", body: stream, duplex: "half" } as RequestInit),
    );
    expect(res.status).toBe(200);
    const read = await api("GET", `${base(org, "big")}/versions/1.0.0/platforms/darwin/arm64`);
    expect(read.body.data.attributes["provider-binary-uploaded"]).toBe(true);
    const got = new Uint8Array(await (await exports.default.fetch(new Request(read.body.data.links["provider-binary-download"]))).arrayBuffer());
    expect(got.length).toBe(zip.length);
    expect(await sha256(got)).toBe(await sha256(zip));
    expect(platform.id).not.toBe(read.body.data.id);
  });

  it("deletes platforms, versions and providers, with their files", async () => {
    const org = await createOrg();
    const { platform } = await publishProvider(org, uniqueName("del").replace(/-/g, "_"));
    const name = (await api("GET", `/organizations/${org}/registry-providers`)).body.data[0].attributes.name;
    const download = await signedObjectUrl(env, "http://localhost", "GET", "binary", platform.id);
    expect((await exports.default.fetch(new Request(download))).status).toBe(200);
    expect((await api("DELETE", `${base(org, name)}/versions/1.0.0/platforms/linux/amd64`)).status).toBe(204);
    expect((await exports.default.fetch(new Request(download))).status).toBe(404);
    expect((await api("DELETE", `${base(org, name)}/versions/1.0.0`)).status).toBe(204);
    expect((await api("GET", `${base(org, name)}/versions/1.0.0`)).status).toBe(404);
    expect((await api("DELETE", base(org, name))).status).toBe(204);
    expect((await api("GET", base(org, name))).status).toBe(404);
  });
});
