// Browser steps for the private registry's pages: a module published through the API in two versions (one with a
// README, inputs, outputs, a submodule and an example), a provider with a version and a platform; the registry tab,
// the module's page (inputs, outputs, usage snippet, another version) and the provider's page, each audited.
import { tarGz } from "../lib/archives.mjs";

const MODULE_FILES = {
  "main.tf": `variable "name" {\n  type        = string\n  description = "What to call it"\n}\n\nvariable "size" {\n  type    = number\n  default = 2\n}\n\noutput "id" {\n  description = "The id"\n  value       = var.name\n}\n`,
  "README.md": "# Network\n\nA network for the UI steps.\n",
  "modules/subnet/main.tf": 'variable "cidr" {}\n',
  "examples/basic/main.tf": 'module "network" {\n  source = "../.."\n  name   = "x"\n}\n',
};

export default async function (h) {
  const { step, check, api, service, ORG } = h;
  const base = `/app/${ORG}/registry`;
  let admin;

  await step("registry: publish a module in two versions and a provider with a platform (through the API)", async () => {
    await api("POST", `/organizations/${ORG}/registry-modules`, { data: { type: "registry-modules", attributes: { name: "network", provider: "aws" } } });
    for (const version of ["1.0.0", "1.1.0"]) {
      const v = (
        await api("POST", `/organizations/${ORG}/registry-modules/private/${ORG}/network/aws/versions`, {
          data: { type: "registry-module-versions", attributes: { version } },
        })
      ).data;
      const archive = tarGz(MODULE_FILES);
      const put = await fetch(v.links.upload, { method: "PUT", body: archive, headers: { "Content-Length": String(archive.length) } });
      check(put.status === 200, `upload of ${version} answered ${put.status}`);
    }
    await api("POST", `/organizations/${ORG}/registry-providers`, {
      data: { type: "registry-providers", attributes: { name: "tool", namespace: ORG, "registry-name": "private" } },
    });
    await api("POST", `/organizations/${ORG}/registry-providers/private/${ORG}/tool/versions`, {
      data: { type: "registry-provider-versions", attributes: { version: "0.1.0", "key-id": "ABCDEF0123456789", protocols: ["5.0"] } },
    });
    await api("POST", `/organizations/${ORG}/registry-providers/private/${ORG}/tool/versions/0.1.0/platforms`, {
      data: { type: "registry-provider-platforms", attributes: { os: "linux", arch: "amd64", shasum: "0".repeat(64), filename: "tool.zip" } },
    });
  });

  await step("registry: the registry tab lists the module and the provider", async () => {
    admin = await h.signedIn(service.token);
    await h.gotoPage(admin, `${service.base}/app/${ORG}/workspaces`);
    await Promise.all([admin.waitForURL(`**${base}`), admin.click(`nav.orgnav a[href="${base}"]`)]);
    check((await admin.$$("tr[data-module='network/aws']")).length === 1, "the module is not listed");
    check((await admin.$$("tr[data-provider='tool']")).length === 1, "the provider is not listed");
    await h.audit(admin, "registry");
  });

  await step("registry: a module's page shows the newest version's inputs, outputs, submodules, examples and usage", async () => {
    await Promise.all([admin.waitForURL(`**${base}/modules/private/${ORG}/network/aws`), admin.click("tr[data-module='network/aws'] a")]);
    check((await admin.textContent("#shown")).includes("1.1.0"), "the newest version is not shown");
    const usage = await admin.textContent("#usage");
    check(
      usage.includes(`/${ORG}/network/aws"`) && usage.includes('version = "1.1.0"') && usage.includes("name = # string: What to call it"),
      `usage: ${usage}`,
    );
    check((await admin.$$("#root-inputs tr[data-input]")).length === 2, "root inputs");
    check((await admin.$$("#root-outputs tr[data-output='id']")).length === 1, "root outputs");
    const text = await admin.textContent("main");
    check(
      text.includes("modules/subnet") && text.includes("examples/basic") && text.includes("A network for the UI steps."),
      "submodules, examples or README missing",
    );
    await h.audit(admin, "registry-module");
    await Promise.all([admin.waitForURL(/version=1\.0\.0/), admin.click("tr[data-version='1.0.0'] a")]);
    check((await admin.textContent("#shown")).includes("1.0.0"), "the older version is not shown");
  });

  await step("registry: a provider's page shows its versions and platforms", async () => {
    await h.gotoPage(admin, `${service.base}${base}/providers/private/${ORG}/tool`);
    check((await admin.$$("tr[data-platform='linux_amd64']")).length === 1, "the platform is not listed");
    check((await admin.textContent("#usage")).includes(`/${ORG}/tool"`), "provider usage");
    await h.audit(admin, "registry-provider");
    await admin.context().close();
  });
}
