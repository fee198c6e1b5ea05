// The requirement table's rules, as pure functions of a caller and a loaded target.
import { describe, expect, it } from "vitest";
import { buildOrgAccess, projectRights, type Grant } from "../../src/auth/access";
import { FULL_ACCESS, NO_ACCESS, workspaceAccessCapabilities } from "../../src/auth/permissions";
import type { Principal } from "../../src/auth/principal";
import { allows, authorize, REQUIREMENTS, type Action } from "../../src/auth/requirements";
import { toOrganization } from "../../src/auth/organization.d1";

const orgRow = { name: "acme", external_id: "org-1", email: "a@b.c", attrs: "{}", created_at: "2026-01-01T00:00:00Z" } as never;
const user = (id = "user-1", isSiteAdmin = false): Principal => ({ kind: "user", userId: id, isSiteAdmin }) as Principal;
const orgToken: Principal = { kind: "organization", organizationId: "org-1", organization: "acme", serviceUserId: "user-org" } as Principal;
const team = (id: string, perms: Record<string, boolean> = {}, owners = false) => ({
  id,
  isOwners: owners,
  organizationAccess: perms,
});
const accessOf = (p: Principal, teams: ReturnType<typeof team>[]) => buildOrgAccess(p, toOrganization(orgRow), teams as never)!;
const grant = (access: string, perms: Record<string, unknown> = {}): Grant => ({ teamId: "t", targetId: "prj-1", access, perms });

describe("the requirement table", () => {
  it("turns away callers without standing whatever the rule", () => {
    const noStanding = { access: null, caps: FULL_ACCESS };
    const orgActions = (Object.keys(REQUIREMENTS) as Action[]).filter(
      (a) => !["authenticated", "user", "site-admin", "user.self", "user.self-or-site-admin", "token.manage", "membership.read"].includes(a),
    );
    for (const action of orgActions) expect({ action, allowed: allows(user(), action, noStanding) }).toEqual({ action, allowed: false });
  });

  it("owners may do everything in the organisation; manage-teams alone may not touch the owners team", () => {
    const owner = accessOf(user(), [team("owners", {}, true)]);
    const delegate = accessOf(user("user-2"), [team("t-1", { "manage-membership": true, "manage-teams": true })]);
    const ownersTeam = { id: "owners", isOwners: true, organizationAccess: {}, allowMemberTokenManagement: false };
    const plainTeam = { id: "t-9", isOwners: false, organizationAccess: {}, allowMemberTokenManagement: false };
    expect(allows(user(), "teams.change-members", { access: owner, team: ownersTeam })).toBe(true);
    expect(allows(user("user-2"), "teams.change-members", { access: delegate, team: ownersTeam })).toBe(false);
    expect(allows(user("user-2"), "teams.change-members", { access: delegate, team: plainTeam })).toBe(true);
    expect(allows(user("user-2"), "teams.manage-tokens", { access: delegate, team: ownersTeam })).toBe(false);
    // A team holding a permission the caller lacks: its tokens would be more power than the caller has.
    expect(
      allows(user("user-2"), "teams.manage-tokens", { access: delegate, team: { ...plainTeam, organizationAccess: { "manage-vcs-settings": true } } }),
    ).toBe(false);
  });

  it("keeps the organisation token out of what the real service refuses it", () => {
    const access = accessOf(orgToken, []);
    expect(allows(orgToken, "organization.manage", { access })).toBe(true);
    expect(allows(orgToken, "organization.owner", { access })).toBe(false);
    // It may change the organisation's settings, not its name; refused as forbidden, since it sees the organisation.
    expect(allows(orgToken, "organization.rename", { access })).toBe(false);
    expect(() => authorize({ principal: orgToken }, "organization.rename", { access })).toThrow(expect.objectContaining({ status: 403 }));
    expect(allows(user(), "organization.rename", { access: accessOf(user(), [team("owners", {}, true)]) })).toBe(true);
    // An organisation token of another organisation has no standing in this one.
    const stranger: Principal = { ...orgToken, organizationId: "org-2" } as Principal;
    expect(accessOf(stranger, [])).toBeNull();
    expect(allows(orgToken, "ssh-keys.create", { access })).toBe(false);
    expect(allows(orgToken, "state.create", { access, caps: FULL_ACCESS })).toBe(false);
    expect(allows(orgToken, "state.read", { access, caps: FULL_ACCESS })).toBe(true);
  });

  it("an agent token by id follows its pool's management, whoever minted it", () => {
    const pool = { id: "apool-1" };
    const manager = accessOf(user("user-4"), [team("t-4", { "manage-agent-pools": true })]);
    const member = accessOf(user("user-5"), [team("t-5", { "manage-vcs-settings": true, "manage-teams": true })]);
    expect(allows(user("user-4"), "token.manage", { access: manager, agentPool: pool })).toBe(true);
    expect(allows(orgToken, "token.manage", { access: accessOf(orgToken, []), agentPool: pool })).toBe(true);
    expect(allows(user("user-5"), "token.manage", { access: member, agentPool: pool })).toBe(false);
    expect(allows(user("user-5"), "token.manage", { access: null, agentPool: pool })).toBe(false);
  });

  it("reads state outputs with read-outputs, and the state itself only with read", () => {
    const access = accessOf(user("user-3"), [team("t-3")]);
    const outputsOnly = workspaceAccessCapabilities("custom", { runs: "read", "state-versions": "read-outputs" });
    expect(allows(user("user-3"), "state.read-outputs", { access, caps: outputsOnly })).toBe(true);
    expect(allows(user("user-3"), "state.read", { access, caps: outputsOnly })).toBe(false);
  });

  it("refuses force delete with 403 to readers and 404 to others", () => {
    const access = accessOf(user("user-4"), [team("t-4")]);
    const caller = { principal: user("user-4"), authorized: new Set<string>() };
    expect(() => authorize(caller, "workspace.force-delete", { access, caps: workspaceAccessCapabilities("read") })).toThrow(
      expect.objectContaining({ status: 403 }),
    );
    expect(() => authorize(caller, "workspace.force-delete", { access, caps: NO_ACCESS })).toThrow(expect.objectContaining({ status: 404 }));
    expect(caller.authorized.size).toBe(0);
    authorize(caller, "workspace.read", { access, caps: workspaceAccessCapabilities("read") });
    expect([...caller.authorized]).toEqual(["workspace.read"]);
  });

  it("derives project rights from grants: maintain creates workspaces, custom settings update administers", () => {
    const access = accessOf(user("user-5"), [team("t-5")]);
    expect(projectRights(access, "prj-1", [grant("maintain")])).toMatchObject({ read: true, admin: false, createWorkspaces: true });
    expect(projectRights(access, "prj-1", [grant("custom", { "project-access": { settings: "update" } })])).toMatchObject({ admin: true, manageTeams: false });
    expect(projectRights(access, "prj-1", [grant("custom", { "project-access": { teams: "manage" } })])).toMatchObject({ admin: false, manageTeams: true });
    expect(projectRights(access, "prj-2", [grant("admin")])).toMatchObject({ read: false, admin: false });
    expect(projectRights(access, "prj-2", [], true).read).toBe(true);
  });

  it("derives the project's own variable sets: custom variable-sets read / write, the admin role writes, others none", () => {
    const access = accessOf(user("user-6"), [team("t-6")]);
    const sets = (g: ReturnType<typeof grant>) => {
      const r = projectRights(access, "prj-1", [g]);
      return { read: r.readVariableSets, manage: r.manageVariableSets };
    };
    expect(sets(grant("custom", { "project-access": { "variable-sets": "read" } }))).toEqual({ read: true, manage: false });
    expect(sets(grant("custom", { "project-access": { "variable-sets": "write" } }))).toEqual({ read: true, manage: true });
    expect(sets(grant("custom", { "project-access": { "variable-sets": "none" } }))).toEqual({ read: false, manage: false });
    expect(sets(grant("custom"))).toEqual({ read: false, manage: false });
    expect(sets(grant("admin"))).toEqual({ read: true, manage: true });
    for (const level of ["read", "write", "maintain"]) expect(sets(grant(level))).toEqual({ read: false, manage: false });
    // The set's project only: a grant on another project gives nothing here.
    expect(projectRights(access, "prj-2", [grant("admin")]).manageVariableSets).toBe(false);
    // varsets.read / varsets.manage take the owning project's rights; without them the organisation permissions decide.
    const project = projectRights(access, "prj-1", [grant("custom", { "project-access": { "variable-sets": "read" } })]);
    expect(allows(user("user-6"), "varsets.read", { access, project })).toBe(true);
    expect(allows(user("user-6"), "varsets.manage", { access, project })).toBe(false);
    expect(allows(user("user-6"), "varsets.read", { access })).toBe(false);
  });
});
