// The version rules as Terraform's own version library reads versions and constraints (hashicorp/go-version).
import { describe, expect, it } from "vitest";
import {
  type Candidate,
  newestOfficial,
  parseConstraint,
  parseVersion,
  readIndex,
  readShasums,
  resolve,
  satisfies,
  sortKey,
  wantedOf,
} from "../../src/terraform-versions/terraform-versions.rules";

const holds = (version: string, constraint: string) => satisfies(parseVersion(version)!, parseConstraint(constraint)!);

describe("constraints", () => {
  it("follow go-version: pessimistic, ranges, exclusions and pre-releases", () => {
    expect(holds("1.5.7", "~> 1.5.0")).toBe(true);
    expect(holds("1.6.0", "~> 1.5.0")).toBe(false);
    expect(holds("1.9.0", "~> 1.5")).toBe(true);
    expect(holds("2.0.0", "~> 1.5")).toBe(false);
    expect(holds("1.5.7", ">= 1.2, < 2.0")).toBe(true);
    expect(holds("1.5.7", ">= 1.2, != 1.5.7")).toBe(false);
    expect(holds("1.5.7", "1.5.7")).toBe(true);
    expect(holds("1.5.7", "= 1.5.6")).toBe(false);
    // A pre-release matches only a constraint naming a pre-release of the same version.
    expect(holds("1.6.0-beta1", ">= 1.5.0")).toBe(false);
    expect(holds("1.6.0-beta2", ">= 1.6.0-beta1")).toBe(true);
    expect(holds("1.6.0-rc1", "~> 1.6.0-beta1")).toBe(true);
    expect(parseConstraint("~> one")).toBeNull();
    expect(wantedOf("latest")).toEqual({ kind: "latest" });
    expect(wantedOf("v1.2.3")).toEqual({ kind: "exact", version: "1.2.3" });
  });

  it("order versions numerically, a release after its pre-releases (sortKey too)", () => {
    const versions = ["1.10.0", "1.9.9", "1.10.0-rc1", "1.10.0-beta10", "1.10.0-beta2", "0.15.4", "1.2.0"];
    const sorted = [...versions].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
    expect(sorted).toEqual(["0.15.4", "1.2.0", "1.9.9", "1.10.0-beta2", "1.10.0-beta10", "1.10.0-rc1", "1.10.0"]);
  });
});

describe("resolution", () => {
  const list: Candidate[] = [
    { version: "1.5.2", enabled: true, official: true, beta: false },
    { version: "1.5.7", enabled: true, official: true, beta: false },
    { version: "1.6.0", enabled: false, official: true, beta: false },
    { version: "1.7.0-beta1", enabled: true, official: true, beta: true },
    { version: "1.8.0", enabled: true, official: false, beta: false },
  ];
  it("picks the newest enabled match; latest and the default are the newest official release", () => {
    expect(newestOfficial(list)).toBe("1.5.7");
    expect(resolve({ kind: "latest" }, list)).toBe("1.5.7");
    expect(resolve(wantedOf(">= 1.5")!, list)).toBe("1.8.0");
    expect(resolve(wantedOf("~> 1.5.0")!, list)).toBe("1.5.7");
    expect(resolve(wantedOf("1.6.0")!, list)).toBeNull();
    expect(resolve(wantedOf("1.6.0")!, list, { anyExact: true })).toBe("1.6.0");
    expect(resolve(wantedOf("1.7.0-beta1")!, list)).toBe("1.7.0-beta1");
  });
});

describe("releases indexes", () => {
  it("read HashiCorp's index.json shape: linux builds, checksums and signature beside the index, newest first", () => {
    const index = {
      versions: {
        "1.5.7": {
          version: "1.5.7",
          shasums: "terraform_1.5.7_SHA256SUMS",
          shasums_signatures: ["terraform_1.5.7_SHA256SUMS.72D7468F.sig", "terraform_1.5.7_SHA256SUMS.sig"],
          builds: [
            {
              os: "linux",
              arch: "amd64",
              filename: "terraform_1.5.7_linux_amd64.zip",
              url: "https://releases.hashicorp.com/terraform/1.5.7/terraform_1.5.7_linux_amd64.zip",
            },
            { os: "windows", arch: "amd64", filename: "terraform_1.5.7_windows_amd64.zip", url: "https://x" },
          ],
        },
        "1.10.0": { version: "1.10.0", shasums: "s", builds: [{ os: "linux", arch: "arm64", filename: "f.zip" }] },
        bogus: { version: "not a version", builds: [] },
      },
    };
    const releases = readIndex("https://releases.hashicorp.com/terraform/index.json", index);
    expect(releases.map((r) => r.version)).toEqual(["1.10.0", "1.5.7"]);
    expect(releases[1]).toMatchObject({
      shasumsUrl: "https://releases.hashicorp.com/terraform/1.5.7/terraform_1.5.7_SHA256SUMS",
      shasumsSignatureUrl: "https://releases.hashicorp.com/terraform/1.5.7/terraform_1.5.7_SHA256SUMS.72D7468F.sig",
      builds: [{ arch: "amd64", os: "linux" }],
    });
    expect(releases[0].builds[0].url).toBe("https://releases.hashicorp.com/terraform/1.10.0/f.zip");
    expect(readShasums(`${"A".repeat(64)}  f.zip\ngarbage\n`).get("f.zip")).toBe("a".repeat(64));
  });
});
