// The private registry's web UI pages: the organisation's modules and providers, a module's versions with the inputs and
// outputs read from its files and a usage snippet, a provider's versions and platforms; other organisations' pages 404.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { api, ADMIN } from "../helpers";
import { MODULE_FILES, tarGz } from "../registry/archives";
import { signIn, ui } from "../ui-client";

async function publishedModule(org: string) {
  await api("POST", `/organizations/${org}/registry-modules`, {
    body: { data: { type: "registry-modules", attributes: { name: "network", provider: "aws" } } },
  });
  for (const version of ["1.0.0", "1.2.0"]) {
    const v = await api("POST", `/organizations/${org}/registry-modules/private/${org}/network/aws/versions`, {
      body: { data: { type: "registry-module-versions", attributes: { version } } },
    });
    const archive = await tarGz(MODULE_FILES);
    await exports.default.fetch(new Request(v.body.data.links.upload, { method: "PUT", body: archive, headers: { "Content-Length": String(archive.length) } }));
  }
}

describe("registry pages", () => {
  it("lists modules and providers; a module page shows versions, inputs, outputs, submodules, examples and usage", async () => {
    const org = await createOrg();
    await publishedModule(org);
    await api("POST", `/organizations/${org}/registry-providers`, {
      body: { data: { type: "registry-providers", attributes: { name: "tool", namespace: org, "registry-name": "private" } } },
    });
    await api("POST", `/organizations/${org}/registry-providers/private/${org}/tool/versions`, {
      body: { data: { type: "registry-provider-versions", attributes: { version: "0.3.0", "key-id": "ABCDEF0123456789", protocols: ["5.0"] } } },
    });
    await api("POST", `/organizations/${org}/registry-providers/private/${org}/tool/versions/0.3.0/platforms`, {
      body: { data: { type: "registry-provider-platforms", attributes: { os: "linux", arch: "arm64", shasum: "0".repeat(64), filename: "tool.zip" } } },
    });
    const member = await makeTeam(org);
    const cookie = await signIn(member.token);

    const index = await ui("GET", `/app/${org}/registry`, { cookie });
    expect(index.status).toBe(200);
    expect(index.text).toContain(`href="/app/${org}/registry/modules/private/${org}/network/aws"`);
    expect(index.text).toContain('data-module="network/aws"');
    expect(index.text).toContain(`href="/app/${org}/registry/providers/private/${org}/tool"`);
    expect(index.text).toContain(`href="/app/${org}/registry" aria-current="page"`);

    const page = await ui("GET", `/app/${org}/registry/modules/private/${org}/network/aws`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Showing version 1.2.0.");
    expect(page.text).toContain(`source  = &quot;localhost/${org}/network/aws&quot;`);
    expect(page.text).toContain("version = &quot;1.2.0&quot;");
    expect(page.text).toContain("name = # string: The name of &quot;it&quot;");
    expect(page.text).not.toContain("size = #");
    expect(page.text).toContain('data-input="size"');
    expect(page.text).toContain('data-output="id"');
    expect(page.text).toContain("modules/child");
    expect(page.text).toContain("examples/basic");
    expect(page.text).toContain("# Example module");
    const older = await ui("GET", `/app/${org}/registry/modules/private/${org}/network/aws?version=1.0.0`, { cookie });
    expect(older.text).toContain("Showing version 1.0.0.");
    expect((await ui("GET", `/app/${org}/registry/modules/private/${org}/network/aws?version=9.9.9`, { cookie })).status).toBe(404);

    const provider = await ui("GET", `/app/${org}/registry/providers/private/${org}/tool`, { cookie });
    expect(provider.status).toBe(200);
    expect(provider.text).toContain('data-platform="linux_arm64"');
    expect(provider.text).toContain(`source  = &quot;localhost/${org}/tool&quot;`);
  });

  it("another organisation's registry pages are not found", async () => {
    const org = await createOrg();
    await publishedModule(org);
    const stranger = await makeUser({ ownerOf: await createOrg() });
    const cookie = await signIn(stranger.token);
    for (const path of [
      `/app/${org}/registry`,
      `/app/${org}/registry/modules/private/${org}/network/aws`,
      `/app/${org}/registry/providers/private/${org}/tool`,
    ]) {
      expect((await ui("GET", path, { cookie })).status, path).toBe(404);
    }
    expect((await ui("GET", `/app/${org}/registry`, { cookie: await signIn(ADMIN) })).status).toBe(200);
  });
});
