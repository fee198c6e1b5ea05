// Pure rules of the private registry: Semantic Versioning precedence, module status, SHA256SUMS, archive paths, and
// what is read of a module's Terraform files.
import { describe, expect, it } from "vitest";
import { keptPath, safePath } from "../../src/registry/module-archive.parse";
import { moduleDetails, scanItems, unquote } from "../../src/registry/module-config.parse";
import { compareVersions, moduleStatus, parseShasums, parseVersion } from "../../src/registry/registry.rules";

describe("versions", () => {
  it("orders by Semantic Versioning precedence, build metadata ignored", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.2.0+b",
      "1.10.0",
      "2.0.0",
    ];
    // The release ahead of its pre-releases, and the last three reversed.
    const shuffled = ["1.0.0", ...ordered.slice(0, 7), ...ordered.slice(8).reverse()];
    expect(shuffled).toHaveLength(ordered.length);
    expect(shuffled.sort(compareVersions)).toEqual(ordered);
    expect(compareVersions("1.2.3+a", "1.2.3+b")).toBe(0);
  });
  it("accepts Semantic Versioning 2.0.0 only", () => {
    for (const ok of ["0.0.1", "1.2.3-alpha+feature", "10.20.30-rc.1+build.5"]) expect(parseVersion(ok), ok).not.toBeNull();
    for (const bad of ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "invalid version", "1.2.3 "]) expect(parseVersion(bad), bad).toBeNull();
  });
  it("derives a module's status from its versions'", () => {
    expect(moduleStatus([])).toBe("pending");
    expect(moduleStatus([{ status: "pending" }, { status: "ok" }])).toBe("setup_complete");
    expect(moduleStatus([{ status: "reg_ingress_failed" }])).toBe("setup_failed");
    expect(moduleStatus([{ status: "reg_ingress_failed" }, { status: "pending" }])).toBe("pending");
  });
});

describe("SHA256SUMS", () => {
  it("reads `shasum -a 256` lines and refuses anything else", () => {
    const sum = "a".repeat(64);
    const parsed = parseShasums(`${sum}  terraform-provider-x_1.0.0_linux_amd64.zip\n${"B".repeat(64)} *other.zip\n`);
    expect(parsed.ok && [...parsed.entries]).toEqual([
      ["terraform-provider-x_1.0.0_linux_amd64.zip", sum],
      ["other.zip", "b".repeat(64)],
    ]);
    expect(parseShasums("").ok).toBe(false);
    expect(parseShasums(`${sum}  ../escape.zip\n`).ok).toBe(false);
    expect(parseShasums("abc  file.zip\n").ok).toBe(false);
  });
});

describe("archive paths", () => {
  it("keeps paths inside the module and refuses the others", () => {
    expect(safePath("./main.tf")).toEqual({ ok: true, path: "main.tf" });
    expect(safePath("modules/a/")).toEqual({ ok: true, path: "modules/a" });
    for (const bad of ["../x", "a/../../x", "/etc/passwd", "C:/x", "a\\b", "a\0b"]) expect(safePath(bad).ok, bad).toBe(false);
  });
  it("keeps the Terraform files and READMEs of the root, submodules and examples only", () => {
    expect(["main.tf", "x.tf.json", "README.md", "modules/a/main.tf", "examples/b/README.md"].every(keptPath)).toBe(true);
    expect(["modules/a/b/main.tf", "other/main.tf", "main.go", "modules/main.tf"].some(keptPath)).toBe(false);
  });
});

describe("module files", () => {
  it("finds blocks past strings, templates, heredocs and comments", () => {
    const src = `
# variable "commented" {}
/* variable "block_commented" {} */
locals {
  x = "} { \\" \${"}"} %{ if true }}{%{ endif }"
  doc = <<-EOT
    variable "in_heredoc" {}
    }
  EOT
}
variable "a" {
  description = <<EOT
Line one
EOT
  type = map(object({ x = string }))
  default = { x = "}" }
}
output "b" { value = "x" } // trailing
`;
    const items = scanItems(src);
    expect(items.map((i) => `${i.kind}:${i.name}:${i.labels.join(",")}`)).toEqual(["block:locals:", "block:variable:a", "block:output:b"]);
    const d = moduleDetails(new Map([["main.tf", src]]), "m");
    expect(d.root.inputs).toEqual([
      { name: "a", type: "map(object({ x = string }))", description: "Line one", default: '{ x = "}" }', required: false, sensitive: false },
    ]);
    expect(d.root.outputs).toEqual([{ name: "b", description: "" }]);
    expect(unquote('"a\\nb\\"c"')).toBe('a\nb"c');
  });
  it("reads .tf.json files and provider requirements", () => {
    const json = JSON.stringify({ variable: { v: { type: "string", description: "d" }, w: { default: 3 } }, output: { o: { value: "x" } } });
    const tf = `terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = ">= 5.0"\n    }\n  }\n}\n`;
    const d = moduleDetails(
      new Map([
        ["main.tf.json", json],
        ["versions.tf", tf],
      ]),
      "m",
    );
    expect(d.root.inputs.map((i) => [i.name, i.required, i.default])).toEqual([
      ["v", true, ""],
      ["w", false, "3"],
    ]);
    expect(d.root.provider_dependencies).toEqual([{ name: "aws", namespace: "hashicorp", source: "hashicorp/aws", version: ">= 5.0" }]);
  });
});
