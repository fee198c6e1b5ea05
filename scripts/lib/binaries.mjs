// The real client binaries for scripts/clients.mjs, built with the machine's Go through the Go module proxy and
// cached OUTSIDE the repository ($CLIENTS_CACHE_DIR, default ~/.cache/workspace-service-clients).
//   terraform: the one on PATH when it is >= 1.10, else TERRAFORM_VERSION built from source inside the downloaded
//              module directory (`go install` refuses terraform because of the replace directives in its go.mod).
//   terraform-provider-tfe: PROVIDER_VERSION, `go build` inside the downloaded module directory.
//   tofu: TOFU_VERSION (OpenTofu), `go build ./cmd/tofu` inside a writable copy of the downloaded module (its go.mod
//         has a replace directive, which `go install` refuses).
//   terraform-provider-null: a stand-in for hashicorp/null built from test/clients/null-provider (its dependencies
//         through the module proxy), placed in a filesystem mirror for configurations that use null_resource.
// Node built-ins only.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const TERRAFORM_MIN = [1, 10, 0];
export const TERRAFORM_VERSION = "v1.11.4"; // built from source only when PATH has none >= TERRAFORM_MIN
export const PROVIDER_MODULE = "github.com/hashicorp/terraform-provider-tfe";
export const PROVIDER_VERSION = "v0.79.0";
export const TOFU_MODULE = "github.com/opentofu/opentofu";
export const TOFU_VERSION = "v1.10.10";
// The version the null stand-in is published as in the mirror: a 3.x release, so both `null_resource` without
// `required_providers` and `source = "hashicorp/null"` with a `~> 3.0` constraint resolve to it.
export const NULL_PROVIDER_VERSION = "3.2.3";
const NULL_PROVIDER_SOURCE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "clients", "null-provider");

export const cacheDir = () => process.env.CLIENTS_CACHE_DIR || join(homedir(), ".cache", "workspace-service-clients");

function run(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
}

/** A Terraform or OpenTofu binary `out` and the version it reports: { path, version, built }. */
function reported(/** @type {string} */ out, /** @type {boolean} */ built) {
  const v = run(out, ["version", "-json"]);
  if (v.status !== 0) throw new Error(`${out} does not run: ${v.stderr || v.error?.message}`);
  return { path: out, version: JSON.parse(v.stdout).terraform_version, built };
}

function goAvailable() {
  const v = run("go", ["version"]);
  if (v.error || v.status !== 0) throw new Error("the Go toolchain (`go`) is required to build the clients but was not found on PATH");
  return v.stdout.trim();
}

// `go mod download -json module@version` outside any module: fetches into the module cache, returns { Dir, Sum }.
// Also scripts/go-tfe.mjs's download of go-tfe.
/** @param {string} module @param {string} version @returns {{ Dir: string, Sum: string, Version: string }} */
export function download(module, version) {
  const tmp = mkdtempSync(join(tmpdir(), "clients-dl-"));
  const dl = run("go", ["mod", "download", "-json", `${module}@${version}`], { cwd: tmp, env: { ...process.env, GOFLAGS: "-mod=mod" } });
  rmSync(tmp, { recursive: true, force: true });
  let info = null;
  try {
    info = JSON.parse(dl.stdout);
  } catch {}
  if (dl.status !== 0 || !info?.Dir || info.Error) {
    throw new Error(`go mod download ${module}@${version} failed: ${info?.Error ?? (dl.stderr || dl.stdout || dl.error?.message)}`);
  }
  return info;
}

// `go build -o out <pkg>` inside the module's directory; the module cache is read-only, so the build must not
// need to write there (-mod=mod lets go resolve missing go.sum lines without editing the module's files).
function build(dir, out, log, extraArgs = [], pkg = ".") {
  mkdirSync(join(out, ".."), { recursive: true });
  const tmpOut = `${out}.tmp-${process.pid}`;
  const b = run("go", ["build", "-trimpath", ...extraArgs, "-o", tmpOut, pkg], {
    cwd: dir,
    env: { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ""} -mod=mod`.trim(), CGO_ENABLED: "0" },
  });
  if (b.status !== 0) {
    rmSync(tmpOut, { force: true });
    throw new Error(`go build in ${dir} failed:\n${(b.stderr || b.stdout || b.error?.message || "").slice(-4000)}`);
  }
  renameSync(tmpOut, out);
  log?.(`built ${out}`);
}

// terraform's go.mod replaces its nested modules (remote-state backends, internal/legacy) with ./directories, but a
// module zip leaves nested modules out, so those directories are missing. Each nested module is fetched through the
// module proxy at the release's commit and copied in. The commit: the proxy names it in a nested module's `latest`
// pseudo-version, accepted only when that pseudo-version's time is the release's own time (the tag's commit).
function addNestedModules(src, info, log, version = TERRAFORM_VERSION) {
  const gomod = readFileSync(join(src, "go.mod"), "utf8");
  const missing = [...gomod.matchAll(/^replace\s+(\S+)\s+=>\s+(\.\/\S+)\s*$/gm)]
    .map((m) => ({ module: m[1], dir: join(src, m[2]) }))
    .filter((r) => !existsSync(r.dir));
  if (!missing.length) return;
  const releaseTime = JSON.parse(readFileSync(info.Info, "utf8")).Time; // e.g. 2025-04-09T13:10:05Z
  const stamp = releaseTime.replace(/[-:TZ]/g, "").slice(0, 14);
  let commit = null;
  for (const r of missing) {
    try {
      const v = download(r.module, "latest").Version; // v0.0.0-<yyyymmddhhmmss>-<commit12>
      const m = /-(\d{14})-([0-9a-f]{12})$/.exec(v);
      if (m && m[1] === stamp) {
        commit = m[2];
        break;
      }
    } catch {}
  }
  if (!commit) throw new Error(`cannot find the commit of terraform ${version} (released ${releaseTime}) for its nested modules through the module proxy`);
  log?.(`terraform ${version}: fetching ${missing.length} nested modules at commit ${commit}`);
  for (const r of missing) {
    const nested = download(r.module, `v0.0.0-${stamp}-${commit}`); // the pseudo-version of that commit
    cpSync(nested.Dir, r.dir, { recursive: true });
    makeWritable(r.dir);
  }
}

function makeWritable(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    chmodSync(p, e.isDirectory() ? 0o755 : statSync(p).mode | 0o200);
    if (e.isDirectory()) makeWritable(p);
  }
}

// build() in a writable copy of a module, dropping the go.mod `godebug` lines this Go does not know.
function buildCopy(src, out, log, extraArgs, pkg = ".") {
  for (let attempt = 0; ; attempt++) {
    try {
      return build(src, out, log, extraArgs, pkg);
    } catch (e) {
      const m = /go\.mod:(\d+): unknown godebug "([^"]+)"/.exec(e.message);
      if (!m || attempt >= 5) throw e;
      log?.(`dropping godebug ${m[2]} (go.mod line ${m[1]}), unknown to this Go`);
      const lines = readFileSync(join(src, "go.mod"), "utf8").split("\n");
      lines.splice(Number(m[1]) - 1, 1);
      writeFileSync(join(src, "go.mod"), lines.join("\n"));
    }
  }
}

const parseVersion = (s) => (/(\d+)\.(\d+)\.(\d+)/.exec(s) ?? []).slice(1, 4).map(Number);
const atLeast = (v, min) => {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
  return true;
};

// Terraform `version` (e.g. "v1.10.5") built from source once and cached: { path, version, built }. For a second
// Terraform beside the one on PATH (scripts/clients/70-terraform-versions.steps.mjs serves both as releases).
export function ensureTerraformVersion(version, log) {
  const out = join(cacheDir(), `terraform_${version}`, "terraform");
  let built = false;
  if (!existsSync(out)) {
    log?.(`building terraform ${version} from source (${goAvailable()}); cached in ${out}`);
    const info = download("github.com/hashicorp/terraform", version);
    // A writable copy of the module: its go.mod may name `godebug` settings a newer Go no longer knows
    // (v1.11.4: "tlskyber", removed in Go 1.24+), which stops the build; those lines are dropped.
    const src = join(cacheDir(), `terraform_${version}-src`);
    rmSync(src, { recursive: true, force: true });
    cpSync(info.Dir, src, { recursive: true });
    makeWritable(src);
    addNestedModules(src, info, log, version);
    // As release builds do: without version.dev=no the binary calls itself "1.11.4-dev".
    buildCopy(src, out, log, ["-ldflags", "-X github.com/hashicorp/terraform/version.dev=no"]);
    rmSync(src, { recursive: true, force: true });
    built = true;
  }
  return reported(out, built);
}

// Resolves { path, version, source }.
export function ensureTerraform(log) {
  const onPath = run("terraform", ["version", "-json"]);
  if (!onPath.error && onPath.status === 0) {
    let version = "";
    try {
      version = JSON.parse(onPath.stdout).terraform_version;
    } catch {
      version = (/Terraform v(\S+)/.exec(onPath.stdout) ?? [])[1] ?? "";
    }
    const v = parseVersion(version);
    if (v.length === 3 && atLeast(v, TERRAFORM_MIN)) {
      const which = run("sh", ["-c", "command -v terraform"]).stdout.trim() || "terraform";
      return { path: which, version, source: "PATH" };
    }
    log?.(`terraform ${version || "(unknown version)"} on PATH is older than ${TERRAFORM_MIN.join(".")}; building ${TERRAFORM_VERSION}`);
  }
  const { path, version } = ensureTerraformVersion(TERRAFORM_VERSION, log);
  return { path, version, source: "built" };
}

// Resolves { dir, path, version, built } where dir holds terraform-provider-tfe (the dev_overrides directory).
export function ensureProvider(log) {
  const dir = join(cacheDir(), `terraform-provider-tfe_${PROVIDER_VERSION}`);
  const path = join(dir, "terraform-provider-tfe");
  const stamp = join(dir, ".module-sum");
  if (existsSync(path) && existsSync(stamp)) return { dir, path, version: PROVIDER_VERSION, built: false, sum: readFileSync(stamp, "utf8").trim() };
  log?.(`building ${PROVIDER_MODULE}@${PROVIDER_VERSION} (${goAvailable()}); cached in ${dir}`);
  const info = download(PROVIDER_MODULE, PROVIDER_VERSION);
  build(info.Dir, path, log);
  writeFileSync(stamp, `${info.Sum}\n`);
  return { dir, path, version: PROVIDER_VERSION, built: true, sum: info.Sum };
}

// Resolves { path, version, built } for OpenTofu's `tofu`, built once and cached per version.
export function ensureTofu(log) {
  const out = join(cacheDir(), `tofu_${TOFU_VERSION}`, "tofu");
  let built = false;
  if (!existsSync(out)) {
    log?.(`building ${TOFU_MODULE}@${TOFU_VERSION} (${goAvailable()}); cached in ${out}`);
    const info = download(TOFU_MODULE, TOFU_VERSION);
    const src = join(cacheDir(), `tofu_${TOFU_VERSION}-src`);
    rmSync(src, { recursive: true, force: true });
    cpSync(info.Dir, src, { recursive: true });
    makeWritable(src);
    // As release builds do: without version.dev=no the binary calls itself "1.10.10-dev".
    buildCopy(src, out, log, ["-ldflags", "-X github.com/opentofu/opentofu/version.dev=no"], "./cmd/tofu");
    rmSync(src, { recursive: true, force: true });
    built = true;
  }
  return reported(out, built);
}

// Resolves { mirror, path, version, built }: `mirror` is a directory for a CLI configuration's
// `provider_installation { filesystem_mirror { path = mirror } }` (or an agent's plugin mirror), holding
// registry.terraform.io/hashicorp/null/<version>/<os>_<arch>/terraform-provider-null_v<version>. Cached per hash of
// the source files, so a change to the stand-in rebuilds it.
export function ensureNullProvider(log) {
  const hash = createHash("sha256");
  for (const f of ["go.mod", "go.sum", "main.go"])
    hash
      .update(`${f}\0`)
      .update(readFileSync(join(NULL_PROVIDER_SOURCE, f)))
      .update("\0");
  const key = hash.digest("hex").slice(0, 16);
  const mirror = join(cacheDir(), `terraform-provider-null_${NULL_PROVIDER_VERSION}_${key}`, "mirror");
  const env = run("go", ["env", "GOOS", "GOARCH"]);
  const [goos, goarch] = env.status === 0 ? env.stdout.trim().split("\n") : [process.platform, process.arch === "x64" ? "amd64" : process.arch];
  const path = join(
    mirror,
    "registry.terraform.io",
    "hashicorp",
    "null",
    NULL_PROVIDER_VERSION,
    `${goos}_${goarch}`,
    `terraform-provider-null_v${NULL_PROVIDER_VERSION}`,
  );
  if (existsSync(path)) return { mirror, path, version: NULL_PROVIDER_VERSION, built: false };
  log?.(`building the hashicorp/null stand-in ${NULL_PROVIDER_VERSION} from test/clients/null-provider (${goAvailable()}); cached in ${mirror}`);
  // -mod=readonly: the build must not rewrite the repository's go.mod or go.sum.
  build(NULL_PROVIDER_SOURCE, path, log, ["-mod=readonly", "-buildvcs=false", "-ldflags", `-X main.version=${NULL_PROVIDER_VERSION}`]);
  chmodSync(path, 0o755);
  return { mirror, path, version: NULL_PROVIDER_VERSION, built: true };
}
