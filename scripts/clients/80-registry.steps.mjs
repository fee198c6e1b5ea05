// The private registry end to end, for `npm run test:clients`: modules and GPG-signed providers published through the
// API and installed by the real Terraform and OpenTofu from this service (modules.v1 and providers.v1).
//
// A module with versions 1.0.0, 1.1.0 and 2.0.0 is uploaded as tar.gz; `terraform init` with `version = "~> 1.0"` must
// choose 1.1.0. The hashicorp/null stand-in (test/clients/null-provider, built by scripts/lib/binaries.mjs) is zipped,
// its SHA256SUMS signed with a key made here (`gpg --batch`, in a temporary GNUPGHOME), and published: key, version,
// checksums, signature, platform, binary. `terraform init` installs it with the signature checked (Terraform reports a
// key without a HashiCorp trust signature as "self-signed, key ID …"), `terraform apply` uses it; OpenTofu installs both
// too. Another organisation's credentials install nothing. Last, `terraform init` of a 50 MB provider, timed.
//
// The CLI configuration maps the clients' host to the registry protocols with a `host` block (discovery is https-only)
// and gives the token in a `credentials` block. Node built-ins only (a zip is written here: stored entries, zlib's CRC).
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tarGz, zip } from "../lib/archives.mjs";
import { check, jsonApi } from "../lib/harness.mjs";

const ORG = "clients-registry";
const OTHER_ORG = "clients-registry-other";
const MODULE = "greeting";
const NULL_VERSION = "3.2.3";

const sha256 = (b) => createHash("sha256").update(b).digest("hex");

/**
 * The clients reach the service through the recording proxy (`proxy.base`); the harness's own calls go straight to it.
 * @param {import("./context.mjs").ClientContext} h
 */
export default async function (h) {
  const { step, tf, tfOk, work, nullProvider } = h;
  const base = h.proxy.base;
  const serviceBase = h.service.base;
  const adminToken = h.service.token;
  const clients = { terraform: h.TF, tofu: h.TOFU };
  // Module registry addresses need a hostname with a dot (Terraform's and OpenTofu's parsers refuse `localhost:<port>`);
  // the host block maps this name to the service, so it is never resolved.
  const host = "registry.test";
  const dir = mkdtempSync(join(work, "registry-"));
  const state = { otherToken: null, keyId: null, fingerprint: null };

  const api = jsonApi(`${serviceBase}/api/v2`, adminToken, { timeoutMs: 60_000 });
  const apiOk = async (method, path, body, want = [200, 201, 204]) => {
    const r = await api(method, path, body);
    check(want.includes(r.status), `harness API call ${method} ${path} answered ${r.status}: ${r.text.slice(0, 400)}`);
    return r.json;
  };
  const upload = async (url, bytes) => {
    const res = await fetch(url, { method: "PUT", body: bytes, headers: { "Content-Length": String(bytes.length) }, signal: AbortSignal.timeout(300_000) });
    check(res.status === 200, `upload to ${new URL(url).pathname} answered ${res.status}: ${(await res.text()).slice(0, 400)}`);
  };

  /** A CLI configuration mapping the host's registry protocols to `url`, with `token`. */
  const cliConfig = (name, token, url = base) => {
    const file = join(dir, `${name}.tfrc`);
    writeFileSync(
      file,
      `host ${JSON.stringify(host)} {
  services = {
    "modules.v1"   = ${JSON.stringify(`${url}/api/registry/v1/modules/`)}
    "providers.v1" = ${JSON.stringify(`${url}/api/registry/v1/providers/`)}
  }
}
credentials ${JSON.stringify(host)} {
  token = ${JSON.stringify(token)}
}
`,
    );
    return { TF_CLI_CONFIG_FILE: file, TF_PLUGIN_CACHE_DIR: "" };
  };
  const config = (name, body) => {
    const d = join(dir, name);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, "main.tf"), body);
    return d;
  };

  await step("registry: organisations, and a module published through the API in three versions", async () => {
    for (const name of [ORG, OTHER_ORG])
      await apiOk("POST", "/organizations", { data: { type: "organizations", attributes: { name, email: "registry@example.com" } } });
    state.otherToken = (
      await apiOk("POST", `/organizations/${OTHER_ORG}/authentication-token`, { data: { type: "authentication-token" } })
    ).data.attributes.token;
    await apiOk("POST", `/organizations/${ORG}/registry-modules`, {
      data: { type: "registry-modules", attributes: { name: MODULE, provider: "null", "registry-name": "private" } },
    });
    for (const version of ["1.0.0", "1.1.0", "2.0.0"]) {
      const v = await apiOk("POST", `/organizations/${ORG}/registry-modules/private/${ORG}/${MODULE}/null/versions`, {
        data: { type: "registry-module-versions", attributes: { version } },
      });
      const files = {
        "main.tf": `variable "who" {\n  type    = string\n  default = "world"\n}\n\noutput "greeting" {\n  value = "hello \${var.who} from ${version}"\n}\n`,
        "README.md": `# greeting ${version}\n`,
      };
      await upload(v.data.links.upload, tarGz(files));
    }
    const m = await apiOk("GET", `/organizations/${ORG}/registry-modules/private/${ORG}/${MODULE}/null`);
    const statuses = m.data.attributes["version-statuses"].map((v) => `${v.version}:${v.status}`).join(",");
    check(statuses === "2.0.0:ok,1.1.0:ok,1.0.0:ok", `version statuses ${statuses}`);
  });

  const moduleConfig = `module "greeting" {
  source  = "${host}/${ORG}/${MODULE}/null"
  version = "~> 1.0"
  who     = "registry"
}

output "greeting" {
  value = module.greeting.greeting
}
`;

  await step("registry: terraform init installs the module with ~> 1.0 (1.1.0, the newest match); apply reads its output", async () => {
    const d = config("tf-module", moduleConfig);
    const env = cliConfig("admin", adminToken);
    const init = await tfOk(d, ["init", "-input=false", "-no-color"], { env });
    check(init.out.includes(`Downloading ${host}/${ORG}/${MODULE}/null 1.1.0 for greeting`), "init did not download version 1.1.0", init);
    const manifest = JSON.parse(readFileSync(join(d, ".terraform", "modules", "modules.json"), "utf8"));
    const entry = manifest.Modules.find((m) => m.Key === "greeting");
    check(entry?.Version === "1.1.0", `modules.json records ${entry?.Version}`, init);
    await tfOk(d, ["apply", "-auto-approve", "-input=false", "-no-color"], { env });
    const out = await tfOk(d, ["output", "-raw", "greeting"], { env });
    check(out.out.trim() === "hello registry from 1.1.0", `output ${JSON.stringify(out.out)}`, out);
  });

  await step("registry: a GPG key made with gpg --batch; the null provider zipped, signed and published", async () => {
    const gnupg = mkdtempSync(join(dir, "gnupg-"));
    chmodSync(gnupg, 0o700);
    const gpg = (args, input) => {
      const r = spawnSync("gpg", ["--batch", "--homedir", gnupg, ...args], {
        input,
        encoding: input === undefined ? "utf8" : undefined,
        maxBuffer: 64 * 1024 * 1024,
      });
      check(r.status === 0, `gpg ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
      return r.stdout;
    };
    gpg(["--passphrase", "", "--quick-gen-key", "Registry Test <registry@example.com>", "rsa3072", "sign", "1d"]);
    const listing = gpg(["--with-colons", "--list-keys"]);
    state.fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listing)?.[1];
    check(state.fingerprint, `no fingerprint in ${listing}`);
    state.keyId = state.fingerprint.slice(-16);
    const armor = gpg(["--armor", "--export", state.fingerprint]);
    const key = await apiOk("POST", `${serviceBase}/api/registry/private/v2/gpg-keys`, {
      data: { type: "gpg-keys", attributes: { namespace: ORG, "ascii-armor": armor } },
    });
    check(key.data.attributes["key-id"] === state.keyId, `the service read key id ${key.data.attributes["key-id"]}, gpg ${state.keyId}`);
    state.publish = async (name, version, extra = []) => {
      const binary = readFileSync(nullProvider.path);
      const filename = `terraform-provider-${name}_${version}_linux_amd64.zip`;
      const archive = zip([{ name: `terraform-provider-${name}_v${version}`, data: binary, mode: 0o755 }, ...extra]);
      const sums = Buffer.from(`${sha256(archive)}  ${filename}\n`);
      writeFileSync(join(gnupg, "SHA256SUMS"), sums);
      gpg(["--yes", "--local-user", state.fingerprint, "--output", join(gnupg, "SHA256SUMS.sig"), "--detach-sign", join(gnupg, "SHA256SUMS")]);
      const sig = readFileSync(join(gnupg, "SHA256SUMS.sig"));
      const p = `/organizations/${ORG}/registry-providers/private/${ORG}/${name}`;
      if ((await api("GET", p)).status === 404) {
        await apiOk("POST", `/organizations/${ORG}/registry-providers`, {
          data: { type: "registry-providers", attributes: { name, namespace: ORG, "registry-name": "private" } },
        });
      }
      const v = await apiOk("POST", `${p}/versions`, {
        data: { type: "registry-provider-versions", attributes: { version, "key-id": state.keyId, protocols: ["5.0"] } },
      });
      await upload(v.data.links["shasums-upload"], sums);
      await upload(v.data.links["shasums-sig-upload"], sig);
      const pl = await apiOk("POST", `${p}/versions/${version}/platforms`, {
        data: { type: "registry-provider-platforms", attributes: { os: "linux", arch: "amd64", shasum: sha256(archive), filename } },
      });
      await upload(pl.data.links["provider-binary-upload"], archive);
      return archive.length;
    };
    await state.publish("null", NULL_VERSION);
  });

  const providerConfig = `terraform {
  required_providers {
    null = {
      source  = "${host}/${ORG}/null"
      version = "~> 3.0"
    }
  }
}

resource "null_resource" "registry" {}
`;

  await step("registry: terraform init installs the provider with its signature checked (key ID shown); apply uses it", async () => {
    const d = config("tf-provider", providerConfig);
    const env = cliConfig("admin", adminToken);
    const init = await tfOk(d, ["init", "-input=false", "-no-color"], { env });
    const installed = new RegExp(
      `Installed ${host.replace(/[.]/g, "\\.")}/${ORG}/null v${NULL_VERSION} \\((self-signed|signed by [^,]+), key ID ${state.keyId}\\)`,
    );
    check(installed.test(init.out), `init did not report the verified signature of key ${state.keyId}`, init);
    console.log(
      `clients: registry: terraform said: ${init.out
        .split("\n")
        .find((l) => installed.test(l))
        ?.trim()}`,
    );
    const apply = await tfOk(d, ["apply", "-auto-approve", "-input=false", "-no-color"], { env });
    check(/null_resource\.registry: Creation complete/.test(apply.out), "apply did not create null_resource.registry", apply);
  });

  await step("registry: OpenTofu installs the module (~> 1.0: 1.1.0) and the signed provider", async () => {
    const d = config("tofu", `${moduleConfig}\n${providerConfig}`);
    const env = cliConfig("tofu", adminToken);
    const init = await tfOk(d, ["init", "-input=false", "-no-color"], { env, client: clients.tofu });
    check(init.out.includes(`Downloading ${host}/${ORG}/${MODULE}/null 1.1.0 for greeting`), "tofu did not download module version 1.1.0", init);
    const signed = new RegExp(`Installed ${host}/${ORG}/null v${NULL_VERSION} \\(signed, key ID ${state.keyId}\\)`);
    check(signed.test(init.out), "tofu did not report the signed provider", init);
    console.log(
      `clients: registry: tofu said: ${init.out
        .split("\n")
        .find((l) => signed.test(l))
        ?.trim()}`,
    );
    await tfOk(d, ["apply", "-auto-approve", "-input=false", "-no-color"], { env, client: clients.tofu });
  });

  await step("registry: another organisation's credentials install neither the module nor the provider", async () => {
    const env = cliConfig("other", state.otherToken);
    for (const [name, body] of [
      ["other-module", moduleConfig],
      ["other-provider", providerConfig],
    ]) {
      const r = await tf(config(name, body), ["init", "-input=false", "-no-color"], { env });
      check(r.code !== 0, `init with another organisation's token succeeded in ${name}`, r);
    }
  });

  await step("registry: terraform init of a 50 MB provider from the local service (timed)", async () => {
    const padding = randomBytes(50 * 1024 * 1024 - statSync(nullProvider.path).size);
    const bytes = await state.publish("bignull", "1.0.0", [{ name: "padding.bin", data: padding }]);
    const d = config("tf-big", `terraform {\n  required_providers {\n    bignull = { source = "${host}/${ORG}/bignull" }\n  }\n}\n`);
    // Straight to the service (not through the recording proxy), so the time is the service's.
    const env = cliConfig("big", adminToken, serviceBase);
    const started = Date.now();
    const init = await tfOk(d, ["init", "-input=false", "-no-color"], { env, timeoutMs: 300_000 });
    const seconds = (Date.now() - started) / 1000;
    check(init.out.includes(`Installed ${host}/${ORG}/bignull v1.0.0`), "init did not install bignull", init);
    const unpacked = readdirSync(join(d, ".terraform", "providers", host, ORG, "bignull", "1.0.0", "linux_amd64"));
    check(unpacked.includes("padding.bin"), `unpacked ${unpacked.join(", ")}`, init);
    console.log(`clients: registry: terraform init installed a ${(bytes / 1024 / 1024).toFixed(1)} MiB provider in ${seconds.toFixed(2)} s`);
  });

  rmSync(join(dir, "tf-big", ".terraform"), { recursive: true, force: true });
}
