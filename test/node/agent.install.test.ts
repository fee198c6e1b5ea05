// The agent's installer of Terraform versions (agent/install.ts) against a local releases server: a version installed
// once and then taken from the cache, and every refusal (checksum, signature, checksums file, unreachable download,
// a binary of another version) failing before anything is cached; then a job's choice of Terraform end to end with
// the fake service: an installed version runs and is reported, a pinned agent refuses another version, and a version
// that cannot be installed fails the plan with the reason before Terraform starts.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as openpgp from "openpgp";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InstallError, releaseArch, TerraformInstaller } from "../../agent/install.ts";
import { Agent } from "../../agent/loop.ts";
import type { JobTerraform } from "../../agent/protocol.ts";
import { probeVersion } from "../../agent/sandbox.ts";
import { AGENT_TOKEN, FakeService, fakeTerraform, job, tarGz } from "./agent.fakes.ts";

const ARCH = releaseArch();
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** A release zip holding `terraform` (a script reporting `version`, else handing over to `exec`) and a licence. */
function releaseZip(dir: string, version: string, exec?: string): Buffer {
  const src = mkdtempSync(join(dir, "zip-"));
  writeFileSync(
    join(src, "terraform"),
    `#!/bin/sh\nif [ "$1" = version ]; then echo '{"terraform_version":"${version}"}'; exit 0; fi\n${exec ? `exec "${exec}" "$@"` : "exit 3"}\n`,
  );
  chmodSync(join(src, "terraform"), 0o755);
  writeFileSync(join(src, "LICENSE.txt"), "licence\n");
  const out = join(dir, `tf-${version}-${Math.random()}.zip`);
  const z = spawnSync("zip", ["-q", "-j", out, join(src, "terraform"), join(src, "LICENSE.txt")]);
  if (z.status !== 0) throw new Error(`zip failed: ${z.stderr}`);
  return readFileSync(out);
}

let dir: string;
let server: Server;
let base = "";
const files = new Map<string, Buffer>();
const served: string[] = [];
let key: { publicKey: string; privateKey: openpgp.PrivateKey };
let otherKey: { privateKey: openpgp.PrivateKey };

async function sign(text: Buffer, k = key.privateKey): Promise<Buffer> {
  const message = await openpgp.createMessage({ binary: text });
  const sig = await openpgp.sign({ message, signingKeys: k, detached: true, format: "binary" });
  return Buffer.from(sig as Uint8Array);
}

async function newKey() {
  const k = await openpgp.generateKey({
    type: "ecc",
    curve: "curve25519Legacy",
    userIDs: [{ name: "Test Releases", email: "releases@example.test" }],
    format: "armored",
  });
  return { publicKey: k.publicKey, privateKey: await openpgp.readPrivateKey({ armoredKey: k.privateKey }) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-install-"));
  key = await newKey();
  otherKey = await newKey();
  server = createServer((req, res) => {
    served.push(req.url ?? "");
    const f = files.get(req.url ?? "");
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Length": f.length }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Publishes a release at /<version>/: its zip, SHA256SUMS naming it and the signature (`signWith` null: none). */
async function publish(
  version: string,
  opts: { zip?: Buffer; sumsSha?: string; signWith?: openpgp.PrivateKey | null; exec?: string } = {},
): Promise<JobTerraform> {
  const zip = opts.zip ?? releaseZip(dir, version, opts.exec);
  const name = `terraform_${version}_linux_${ARCH}.zip`;
  const sums = Buffer.from(`${opts.sumsSha ?? sha256(zip)}  ${name}\n${"0".repeat(64)}  terraform_${version}_darwin_arm64.zip\n`);
  files.set(`/${version}/${name}`, zip);
  files.set(`/${version}/SHA256SUMS`, sums);
  if (opts.signWith !== null) files.set(`/${version}/SHA256SUMS.sig`, await sign(sums, opts.signWith ?? key.privateKey));
  return {
    version,
    archs: [{ url: `${base}/${version}/${name}`, sha: sha256(zip), os: "linux", arch: ARCH }],
    shasumsUrl: `${base}/${version}/SHA256SUMS`,
    shasumsSignatureUrl: opts.signWith === null ? null : `${base}/${version}/SHA256SUMS.sig`,
  };
}

const installer = (cacheDir: string) => new TerraformInstaller({ cacheDir, releasesKeys: key.publicKey, probe: (bin, d) => probeVersion(bin, d, null) });

describe("the installer", () => {
  let cache: string;
  beforeEach(() => {
    cache = mkdtempSync(join(dir, "cache-"));
    served.length = 0;
  });
  const entries = () => readdirSync(cache).filter((n) => !n.startsWith("."));

  it("installs a version once, checked, and takes it from the cache afterwards", async () => {
    const t = await publish("1.9.0");
    const first = await installer(cache).ensure(t);
    expect(first).toMatchObject({ version: "1.9.0", downloaded: true });
    expect(first.bin).toBe(join(cache, `1.9.0_${ARCH}_${t.archs[0].sha.slice(0, 12)}`, "terraform"));
    expect(served).toEqual([`/1.9.0/terraform_1.9.0_linux_${ARCH}.zip`, "/1.9.0/SHA256SUMS", "/1.9.0/SHA256SUMS.sig"]);
    // Only the binary and what it reported; no licence file, no leftovers of the download.
    expect(readdirSync(join(cache, entries()[0])).sort()).toEqual(["terraform", "version"]);
    expect(readdirSync(cache)).toEqual(entries());
    served.length = 0;
    // A new installer (a restarted agent) on the same cache downloads nothing.
    expect(await installer(cache).ensure(t)).toEqual({ bin: first.bin, version: "1.9.0", downloaded: false });
    expect(served).toEqual([]);
  });

  it("two jobs asking at once share one download", async () => {
    const t = await publish("1.9.1");
    const i = installer(cache);
    const [a, b] = await Promise.all([i.ensure(t), i.ensure(t)]);
    expect(a.bin).toBe(b.bin);
    expect(served.filter((u) => u.endsWith(".zip"))).toHaveLength(1);
  });

  const refuses = async (t: JobTerraform, text: string) => {
    const err = await installer(cache)
      .ensure(t)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InstallError);
    expect((err as Error).message).toContain(text);
    expect(entries()).toEqual([]);
  };

  it("refuses a download whose SHA-256 is not the listed one", async () => {
    const t = await publish("1.9.2");
    await refuses({ ...t, archs: [{ ...t.archs[0], sha: "1".repeat(64) }] }, `not the ${"1".repeat(64)} the service lists`);
  });

  it("refuses checksums signed by a key it does not trust, or not signed at all where a signature is named", async () => {
    await refuses(await publish("1.9.3", { signWith: otherKey.privateKey }), "does not verify with the trusted release keys");
    const t = await publish("1.9.4");
    files.set("/1.9.4/SHA256SUMS.sig", Buffer.from("not a signature"));
    await refuses(t, "does not verify");
  });

  it("refuses a signed SHA256SUMS that gives the build another checksum", async () => {
    // The listed sha matches the zip, but the signed file says otherwise (the list and the release disagree).
    await refuses(await publish("1.9.5", { sumsSha: "2".repeat(64) }), `gives terraform_1.9.5_linux_${ARCH}.zip the SHA-256 ${"2".repeat(64)}`);
  });

  it("installs without a signature check when the release names none", async () => {
    const t = await publish("1.9.6", { signWith: null });
    expect((await installer(cache).ensure(t)).version).toBe("1.9.6");
    expect(served.some((u) => u.endsWith(".sig"))).toBe(false);
  });

  it("reports an unreachable download, a missing build and a binary of another version", async () => {
    const t = await publish("1.9.7");
    await refuses({ ...t, archs: [{ ...t.archs[0], url: "http://127.0.0.1:1/terraform.zip" }] }, "could not be downloaded");
    await refuses({ ...t, archs: [{ ...t.archs[0], url: `${base}/missing.zip` }] }, "answered 404");
    await refuses({ ...t, archs: [{ ...t.archs[0], arch: "ppc64" }] }, `no linux/${ARCH} build`);
    await refuses({ ...t, archs: [] }, "lists no download for Terraform 1.9.7");
    const lying = await publish("1.9.8", { zip: releaseZip(dir, "1.5.0") });
    await refuses(lying, "the download listed as Terraform 1.9.8 is Terraform 1.5.0");
  });
});

describe("a job's Terraform", () => {
  let svc: FakeService;
  let work: string;
  let record: string;
  let agent: Agent | null;
  let running: Promise<void> | null;
  const CONFIG = tarGz([{ path: "main.tf", body: 'resource "null_resource" "a" {}\n' }]);

  beforeEach(async () => {
    svc = new FakeService();
    await svc.start();
    work = mkdtempSync(join(dir, "job-"));
    mkdirSync(join(work, "jobs"));
    record = join(work, "record.jsonl");
    agent = null;
    running = null;
  });
  afterEach(async () => {
    agent?.interrupt();
    await running?.catch(() => {});
    await svc.stop();
  });

  const start = (opts: { terraform?: string; terraformVersion?: string; cache?: string }) => {
    agent = new Agent({
      url: svc.base,
      token: AGENT_TOKEN,
      name: "t",
      terraform: opts.terraform ?? null,
      terraformVersion: opts.terraformVersion ?? null,
      installer: opts.cache ? installer(opts.cache) : null,
      tmpDir: join(work, "jobs"),
      heartbeatMs: 20,
      flushMs: 10,
      statusMs: 50,
      idleDelayMs: 5,
      retryDelayMs: 5,
    });
    running = agent.run();
  };
  const fakeVars = [{ key: "FAKE_RECORD", value: "", category: "env" as const, hcl: false, sensitive: false }];
  const finished = async (j: ReturnType<typeof job>) => {
    const state = svc.jobs.get(`${j.run}/${j.phase}`)!;
    await svc.until(() => state.finish !== null);
    agent!.stop();
    await running;
    return state;
  };

  it("runs the version the service resolved, installed on first use, and reports it", async () => {
    const t = await publish("1.8.3", { exec: fakeTerraform(work) });
    const j = job({ variables: [{ ...fakeVars[0], value: record }], terraform: t });
    svc.offer(j, CONFIG);
    start({ cache: join(work, "cache") });
    const state = await finished(j);
    expect(state.finish).toMatchObject({ status: "finished", terraformVersion: "1.8.3" });
    expect(existsSync(record)).toBe(true);
  });

  it("a pinned agent fails a run asking for another version, before Terraform starts", async () => {
    const j = job({ variables: [{ ...fakeVars[0], value: record }], terraform: { version: "1.8.3", archs: [], shasumsUrl: null, shasumsSignatureUrl: null } });
    svc.offer(j, CONFIG);
    start({ terraform: fakeTerraform(work), terraformVersion: "1.11.4" });
    const state = await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: expect.stringContaining("runs only Terraform 1.11.4") });
    expect(state.finish?.terraformVersion).toBeUndefined();
    expect(state.log.toString()).toContain("the run asks for Terraform 1.8.3");
    expect(existsSync(record)).toBe(false);
  });

  it("a version that cannot be installed fails the plan with the reason, before Terraform starts", async () => {
    const t = await publish("1.8.4");
    const j = job({ variables: [{ ...fakeVars[0], value: record }], terraform: { ...t, archs: [{ ...t.archs[0], sha: "3".repeat(64) }] } });
    svc.offer(j, CONFIG);
    start({ cache: join(work, "cache") });
    const state = await finished(j);
    expect(state.finish).toMatchObject({
      status: "errored",
      error: expect.stringMatching(/^Terraform 1\.8\.4 could not be installed: the download of .* has SHA-256/),
    });
    expect(state.log.toString()).toContain("Error: Terraform 1.8.4 could not be installed");
    expect(existsSync(record)).toBe(false);
  });

  it("the service's reason when nothing resolves is the plan's error", async () => {
    const j = job({ terraform: { version: "~> 9.0", archs: [], shasumsUrl: null, shasumsSignatureUrl: null, error: "no listed version satisfies it" } });
    svc.offer(j, CONFIG);
    start({ cache: join(work, "cache") });
    const state = await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: "Terraform ~> 9.0 cannot run: no listed version satisfies it" });
  });
});
