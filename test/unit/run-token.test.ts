// The run token's format (docs/runs.md "The run token"): minted at claim, verified by signature and expiry alone; and
// the standing a run token gets (its own workspace's state, variables and lock; nothing elsewhere).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RUN_CAPABILITIES, NO_ACCESS } from "../../src/auth/permissions";
import { buildOrgAccess, workspaceCapabilities } from "../../src/auth/access";
import { allows } from "../../src/auth/requirements";
import { mintRunToken, RUN_TOKEN_TTL_SECONDS, runPrincipalOf, runStillStands, runTokenMayCall, verifyRunToken } from "../../src/auth/run-token";
import type { Organization } from "../../src/auth/organization.d1";

const claims = {
  runId: "run-abcdefghijklmnop",
  workspaceId: "ws-abcdefghijklmnop",
  organizationId: "org-abcdefghijklmnop",
  phase: "apply" as const,
  claimId: "c1",
};
const NOW = 1_800_000_000;

describe("run tokens", () => {
  it("verifies what it minted, with the claims and the expiry", async () => {
    const token = await mintRunToken(env, claims, NOW);
    expect(token).toMatch(/^run\.[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
    expect(await verifyRunToken(env, token, NOW + 1)).toEqual({ ...claims, expiresAt: NOW + RUN_TOKEN_TTL_SECONDS });
  });

  it("carries the workspace's project when minted with it, and the principal has it (project remote state sharing)", async () => {
    const token = await mintRunToken(env, { ...claims, projectId: "prj-abcdefghijklmnop" }, NOW);
    const verified = await verifyRunToken(env, token, NOW + 1);
    expect(verified).toEqual({ ...claims, projectId: "prj-abcdefghijklmnop", expiresAt: NOW + RUN_TOKEN_TTL_SECONDS });
    expect(runPrincipalOf(verified!).projectId).toBe("prj-abcdefghijklmnop");
    // A token minted before the claim existed has none, and still verifies.
    expect(runPrincipalOf((await verifyRunToken(env, await mintRunToken(env, claims, NOW), NOW + 1))!)).not.toHaveProperty("projectId");
  });

  it("refuses an expired token, a changed payload, a changed signature and another key's token", async () => {
    const token = await mintRunToken(env, claims, NOW);
    expect(await verifyRunToken(env, token, NOW + RUN_TOKEN_TTL_SECONDS)).toBeNull();
    const [, payload, sig] = token.split(".");
    const forged = btoa(JSON.stringify({ r: claims.runId, w: "ws-other", o: claims.organizationId, p: "apply", c: "c1", x: NOW + 10 ** 6 }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect(await verifyRunToken(env, `run.${forged}.${sig}`, NOW)).toBeNull();
    const flipped = sig.slice(0, -1) + (sig.endsWith("0") ? "1" : "0");
    expect(await verifyRunToken(env, `run.${payload}.${flipped}`, NOW)).toBeNull();
    const other = await mintRunToken({ ...env, BLOB_SIGNING_KEY: "another key" }, claims, NOW);
    expect(await verifyRunToken(env, other, NOW)).toBeNull();
    for (const junk of ["run.", "run.a.b", `run.${payload}`, `run.${payload}.${sig}.x`, token.replace("run.", "")]) {
      expect(await verifyRunToken(env, junk, NOW)).toBeNull();
    }
  });

  it("stands while its run's index row is live and of its workspace", () => {
    const p = runPrincipalOf({ ...claims, expiresAt: NOW });
    const row = { id: claims.runId, workspace_id: claims.workspaceId, organization_id: claims.organizationId, status: "applying" };
    expect(runStillStands(p, row)).toEqual(p);
    expect(runStillStands(p, null)).toBeNull();
    for (const status of ["applied", "planned_and_finished", "discarded", "errored", "canceled"]) expect(runStillStands(p, { ...row, status })).toBeNull();
    expect(runStillStands(p, { ...row, workspace_id: "ws-other" })).toBeNull();
  });

  it("holds its capabilities on its own workspace only, and no organisation permission", () => {
    const p = runPrincipalOf({ ...claims, expiresAt: NOW });
    const org = { externalId: claims.organizationId, name: "acme", attrs: {} } as unknown as Organization;
    const access = buildOrgAccess(p, org, []);
    expect(access).not.toBeNull();
    expect(access!.isOwner || access!.isOrgToken || access!.isSiteAdmin).toBe(false);
    expect(Object.values(access!.orgPermissions).some(Boolean)).toBe(false);
    expect(buildOrgAccess(p, { ...org, externalId: "org-other" } as Organization, [])).toBeNull();
    const grants = { workspaces: [], projects: [] };
    const own = workspaceCapabilities(access!, { id: claims.workspaceId, projectId: "prj-x" }, grants);
    expect(own).toEqual(RUN_CAPABILITIES);
    expect(workspaceCapabilities(access!, { id: "ws-other", projectId: "prj-x" }, grants)).toEqual(NO_ACCESS);
    const target = { access, caps: own };
    for (const a of ["workspace.read", "state.read", "state.create", "variables.read", "workspace.lock", "runs.read", "organization.read"] as const)
      expect(allows(p, a, target), a).toBe(true);
    for (const a of ["variables.write", "workspace.update", "runs.queue", "runs.apply", "teams.manage", "organization.manage", "agent-pools.manage"] as const)
      expect(allows(p, a, target), a).toBe(false);
    // An action outside the run token's list never holds, whatever the target says.
    expect(allows(p, "runs.queue", { access, caps: { ...own, runs: 3 } })).toBe(false);
  });

  it("may call only the routes Terraform needs and the reads of runs", () => {
    const cases: Array<[string, string, boolean]> = [
      ["GET /api/v2/organizations/:organization_name/entitlement-set", "organization.read", true],
      ["POST /api/v2/workspaces/:workspace_id/state-versions", "state.create", true],
      ["GET /api/v2/organizations/:organization_name/teams", "organization.read", false],
      ["POST /api/v2/workspaces/:workspace_id/vars", "variables.write", false],
      ["GET /api/v2/runs/:run_id", "runs.read", true],
      ["POST /api/v2/runs/:run_id/actions/cancel", "runs.read", false],
    ];
    expect(cases.map(([route, action]) => runTokenMayCall(route, action))).toEqual(cases.map(([, , may]) => may));
  });
});
