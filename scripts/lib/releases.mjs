// A local stand-in for releases.hashicorp.com/terraform for the harnesses: `index.json` in HashiCorp's shape, each
// release's SHA256SUMS (and, with a signing key, its detached signature made by `gpg --batch`), and the release zips.
// A release with a binary is served as a real zip of it (cached per binary under the clients' cache); one without is
// listed only: its SHA256SUMS names a zip that is not there (go-tfe's fixture versions, or a version an agent cannot
// install). The service seeds its list of Terraform versions from the index (TERRAFORM_RELEASES_URL). Node built-ins,
// `zip` and `gpg`.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { cacheDir } from "./binaries.mjs";
import { listen, readJson } from "./harness.mjs";

const sha256 = (b) => createHash("sha256").update(b).digest("hex");

/** A zip of `binary` named `terraform` (with a licence beside it, as the real ones), cached by the binary's digest. */
export function releaseZip(binary, log) {
  const digest = sha256(readFileSync(binary)).slice(0, 16);
  const dir = join(cacheDir(), "releases", digest);
  const zip = join(dir, "terraform.zip");
  if (existsSync(zip)) return zip;
  mkdirSync(join(dir, "src"), { recursive: true });
  const src = join(dir, "src");
  writeFileSync(join(src, "terraform"), readFileSync(binary), { mode: 0o755 });
  writeFileSync(join(src, "LICENSE.txt"), "test release\n");
  log?.(`zipping ${binary} as a release (cached in ${dir})`);
  const tmp = `${zip}.tmp-${process.pid}.zip`;
  const z = spawnSync("zip", ["-q", "-j", tmp, join(src, "terraform"), join(src, "LICENSE.txt")], { encoding: "utf8" });
  if (z.status !== 0) throw new Error(`zip failed (is it installed?): ${z.stderr || z.error?.message}`);
  renameSync(tmp, zip);
  return zip;
}

/** A fresh OpenPGP key in `home` (a GnuPG home of its own) and its armored public key in `<home>/releases-key.asc`. */
export function signingKey(home) {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const gpg = (args, input) => spawnSync("gpg", ["--batch", "--homedir", home, ...args], { encoding: "utf8", input });
  const gen = gpg(["--passphrase", "", "--quick-gen-key", "Test Releases <releases@example.test>", "ed25519", "sign", "never"]);
  if (gen.status !== 0) throw new Error(`gpg --quick-gen-key failed (is gnupg installed?): ${gen.stderr || gen.error?.message}`);
  const exp = gpg(["--armor", "--export"]);
  if (exp.status !== 0 || !exp.stdout.includes("BEGIN PGP PUBLIC KEY BLOCK")) throw new Error(`gpg --export failed: ${exp.stderr}`);
  const publicKeyFile = join(home, "releases-key.asc");
  writeFileSync(publicKeyFile, exp.stdout);
  return {
    home,
    publicKeyFile,
    sign(file) {
      const s = spawnSync("gpg", ["--batch", "--homedir", home, "--yes", "--detach-sign", "-o", `${file}.sig`, file], { encoding: "utf8" });
      if (s.status !== 0) throw new Error(`gpg --detach-sign failed: ${s.stderr}`);
      return readFileSync(`${file}.sig`);
    },
  };
}

/**
 * Serves `releases` ([{ version, binary? }]) on 127.0.0.1: answers { base, indexUrl, served (paths requested),
 * close() }. `key` (from signingKey) signs every SHA256SUMS; `workDir` holds the files.
 */
/** @param {{ releases: { version: string, binary?: string }[], key?: any, workDir: string, log?: (msg: string) => void }} options */
export async function startReleasesServer({ releases, key = null, workDir, log = () => {} }) {
  mkdirSync(workDir, { recursive: true });
  const files = new Map();
  const served = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    served.push(path);
    const body = files.get(path);
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { "Content-Length": body.length }).end(body);
  });
  const port = await listen(server);
  // It lives as long as the harness that started it, and keeps no harness from ending.
  server.unref();
  const base = `http://127.0.0.1:${port}/terraform`;
  const versions = {};
  for (const r of releases) {
    const v = r.version;
    const lines = [];
    const builds = [];
    for (const arch of ["amd64", "arm64"]) {
      const filename = `terraform_${v}_linux_${arch}.zip`;
      const here = arch === (process.arch === "x64" ? "amd64" : process.arch);
      let digest = sha256(`${v} ${arch} not served`);
      if (r.binary && here) {
        const zip = readFileSync(releaseZip(r.binary, log));
        files.set(`/terraform/${v}/${filename}`, zip);
        digest = sha256(zip);
      }
      lines.push(`${digest}  ${filename}`);
      builds.push({ name: "terraform", version: v, os: "linux", arch, filename, url: `${base}/${v}/${filename}` });
    }
    const sums = Buffer.from(`${lines.join("\n")}\n`);
    const sumsName = `terraform_${v}_SHA256SUMS`;
    files.set(`/terraform/${v}/${sumsName}`, sums);
    const entry = { name: "terraform", version: v, shasums: sumsName, builds };
    if (key) {
      const file = join(workDir, sumsName);
      writeFileSync(file, sums);
      files.set(`/terraform/${v}/${sumsName}.sig`, key.sign(file));
      entry.shasums_signature = `${sumsName}.sig`;
      entry.shasums_signatures = [`${sumsName}.sig`];
    }
    versions[v] = entry;
  }
  files.set("/terraform/index.json", Buffer.from(JSON.stringify({ name: "terraform", versions })));
  return {
    base,
    indexUrl: `${base}/index.json`,
    served,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Waits until the service at `base` lists every one of `versions` (the first read of the list starts its sync from
 * the index; later reads see what it added). Throws after `timeoutMs` with what the list holds.
 */
export async function waitForVersions(base, token, versions, timeoutMs = 60_000) {
  const started = Date.now();
  let listed = [];
  for (;;) {
    try {
      const r = await fetch(`${base}/api/v2/admin/terraform-versions?page%5Bsize%5D=100`, {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (r.ok) listed = (await readJson(r)).data.map((v) => v.attributes.version);
    } catch {}
    if (versions.every((v) => listed.includes(v))) return listed;
    if (Date.now() - started > timeoutMs) {
      throw new Error(`the service did not list Terraform ${versions.join(", ")} within ${timeoutMs / 1000} s (it lists: ${listed.join(", ") || "none"})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Versions go-tfe's tests set on workspaces and runs, or look up (admin_terraform_version: filter 1.0.4, search 1.0). */
export const GO_TFE_TERRAFORM_VERSIONS = ["0.10.0", "0.11.0", "0.11.1", "0.15.4", "1.0.0", "1.0.4", "1.3.0"];
