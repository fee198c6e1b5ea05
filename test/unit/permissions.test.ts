// The pure permission model — one function from every grant a caller holds to capabilities and flags.
import { describe, expect, it } from "vitest";
import {
  canRead,
  createAllowed,
  effectiveCapabilities,
  forceDeleteAllowed,
  FULL_ACCESS,
  NO_ACCESS,
  permissionFlags,
  projectAccessCapabilities,
  union,
  workspaceAccessCapabilities,
  type Capabilities,
  type GrantLevel,
  type Standing,
} from "../../src/auth/permissions";
import { resolveOrgAccess } from "../../src/teams/teams.rules";

const nobody: Standing = { siteAdmin: false, owner: false, orgToken: false, orgPermissions: {} };
const withOrg = (p: Record<string, boolean>): Standing => ({ ...nobody, orgPermissions: p });
const g = (access: string, perms: Record<string, unknown> = {}): GrantLevel => ({ access, perms });
const caps = (s: Standing, ws: GrantLevel[] = [], prj: GrantLevel[] = []) => effectiveCapabilities(s, ws, prj);
const flags = (c: Capabilities, opts: { canForceDelete?: boolean; isOrgToken?: boolean } = {}) =>
  permissionFlags(c, { canForceDelete: opts.canForceDelete ?? false, isOrgToken: opts.isOrgToken });

/** The 21 documented workspace permission flags, in the documented order. */
const FLAGS = [
  "can-update",
  "can-destroy",
  "can-queue-run",
  "can-read-run",
  "can-read-variable",
  "can-update-variable",
  "can-read-state-versions",
  "can-read-state-outputs",
  "can-create-state-versions",
  "can-queue-apply",
  "can-lock",
  "can-unlock",
  "can-force-unlock",
  "can-read-settings",
  "can-manage-tags",
  "can-manage-run-tasks",
  "can-force-delete",
  "can-manage-assessments",
  "can-manage-ephemeral-workspaces",
  "can-read-assessment-results",
  "can-queue-destroy",
];
const trueFlags = (c: Capabilities, opts: { canForceDelete?: boolean; isOrgToken?: boolean } = {}) =>
  Object.entries(flags(c, opts))
    .filter(([, v]) => v)
    .map(([k]) => k)
    .sort();

describe("workspace role table (team-workspaces)", () => {
  it("yields exactly the 21 documented flags", () => {
    expect(Object.keys(flags(NO_ACCESS)).sort()).toEqual([...FLAGS].sort());
  });

  it("read: read runs, variables, state", () => {
    expect(trueFlags(workspaceAccessCapabilities("read"))).toEqual(
      ["can-read-assessment-results", "can-read-run", "can-read-settings", "can-read-state-outputs", "can-read-state-versions", "can-read-variable"].sort(),
    );
  });

  it("plan adds queueing plans; write adds apply, variables, state, locking; admin adds settings, tags, run tasks, delete", () => {
    const read = new Set(trueFlags(workspaceAccessCapabilities("read")));
    const plan = trueFlags(workspaceAccessCapabilities("plan")).filter((f) => !read.has(f));
    expect(plan).toEqual(["can-queue-run"]);
    const planSet = new Set(trueFlags(workspaceAccessCapabilities("plan")));
    const write = trueFlags(workspaceAccessCapabilities("write")).filter((f) => !planSet.has(f));
    expect(write).toEqual(["can-create-state-versions", "can-lock", "can-queue-apply", "can-unlock", "can-update-variable"].sort());
    const writeSet = new Set(trueFlags(workspaceAccessCapabilities("write")));
    const admin = trueFlags(workspaceAccessCapabilities("admin")).filter((f) => !writeSet.has(f));
    expect(admin).toEqual(
      [
        "can-destroy",
        "can-force-unlock",
        "can-manage-assessments",
        "can-manage-ephemeral-workspaces",
        "can-manage-run-tasks",
        "can-manage-tags",
        "can-queue-destroy",
        "can-update",
      ].sort(),
    );
    // Force delete is never implied by a role: it depends on ownership or the organisation setting.
    expect(flags(workspaceAccessCapabilities("admin"))["can-force-delete"]).toBe(false);
  });

  it("custom: defaults to reading runs only, each key adds its capability", () => {
    expect(trueFlags(workspaceAccessCapabilities("custom"))).toEqual(["can-read-assessment-results", "can-read-run", "can-read-settings"]);
    const c = workspaceAccessCapabilities("custom", {
      runs: "plan",
      variables: "write",
      "state-versions": "read-outputs",
      "workspace-locking": true,
      "run-tasks": true,
      "sentinel-mocks": "read",
    });
    expect(c).toMatchObject({ runs: 2, variables: 2, stateVersions: 1, locking: true, runTasks: true, sentinelMocks: true, admin: false, delete: false });
    const f = flags(c);
    expect(f["can-read-state-outputs"]).toBe(true);
    expect(f["can-read-state-versions"]).toBe(false);
    expect(f["can-lock"]).toBe(true);
    expect(f["can-update"]).toBe(false);
  });

  it("an unknown level grants nothing", () => {
    expect(workspaceAccessCapabilities("superuser")).toEqual(NO_ACCESS);
  });
});

describe("project role table (team-projects)", () => {
  it("read/write mirror the workspace roles; maintain is workspace admin; admin also moves", () => {
    expect(projectAccessCapabilities("read")).toEqual(workspaceAccessCapabilities("read"));
    expect(projectAccessCapabilities("write")).toEqual(workspaceAccessCapabilities("write"));
    expect(projectAccessCapabilities("maintain")).toMatchObject({ admin: true, delete: true, move: false, locking: true });
    expect(projectAccessCapabilities("admin")).toEqual(FULL_ACCESS);
  });

  it("custom workspace-access keys", () => {
    const c = projectAccessCapabilities("custom", {
      "workspace-access": { runs: "apply", locking: true, delete: true, move: true, "state-versions": "write" },
    });
    expect(c).toMatchObject({ runs: 3, locking: true, delete: true, move: true, stateVersions: 3, admin: false });
    expect(projectAccessCapabilities("custom")).toMatchObject({ runs: 1, variables: 0, stateVersions: 0, locking: false });
  });

  it("creation: maintain, admin, or custom create", () => {
    expect(createAllowed(nobody, [g("read")])).toBe(false);
    expect(createAllowed(nobody, [g("write")])).toBe(false);
    expect(createAllowed(nobody, [g("maintain")])).toBe(true);
    expect(createAllowed(nobody, [g("admin")])).toBe(true);
    expect(createAllowed(nobody, [g("custom", { "workspace-access": { create: true } })])).toBe(true);
    expect(createAllowed(nobody, [g("custom", { "workspace-access": { create: false } })])).toBe(false);
    expect(createAllowed(withOrg({ "manage-workspaces": true }), [])).toBe(true);
    expect(createAllowed({ ...nobody, orgToken: true }, [])).toBe(true);
    expect(createAllowed({ ...nobody, owner: true }, [])).toBe(true);
    expect(createAllowed(withOrg({ "read-workspaces": true }), [])).toBe(false);
  });
});

describe("effective capabilities", () => {
  it("site admins, owners and the organisation token hold everything", () => {
    for (const s of [
      { ...nobody, siteAdmin: true },
      { ...nobody, owner: true },
      { ...nobody, orgToken: true },
    ])
      expect(caps(s)).toEqual(FULL_ACCESS);
  });

  it("organisation access: manage-workspaces is admin everywhere (moving needs manage-projects too); read-workspaces reads", () => {
    expect(caps(withOrg({ "manage-workspaces": true }))).toEqual({ ...FULL_ACCESS, move: false });
    expect(caps(withOrg({ "manage-workspaces": true, "manage-projects": true }))).toEqual(FULL_ACCESS);
    expect(caps(withOrg({ "read-workspaces": true }))).toEqual(workspaceAccessCapabilities("read"));
    expect(caps(withOrg({ "read-projects": true, "manage-teams": true }))).toEqual(NO_ACCESS);
  });

  it("no grant, no access", () => {
    expect(canRead(caps(nobody))).toBe(false);
  });

  it("grants are cumulative: the most permissive wins per capability, from any source", () => {
    // Custom locking (no state) + project read (state, no locking): both.
    const c = caps(nobody, [g("custom", { "workspace-locking": true })], [g("read")]);
    expect(c).toMatchObject({ locking: true, stateVersions: 2, runs: 1, admin: false });
    // A weaker grant never takes a stronger one away, in either order.
    expect(caps(nobody, [g("admin"), g("read")])).toEqual(caps(nobody, [g("read"), g("admin")]));
    expect(caps(nobody, [g("read")], [g("maintain")]).admin).toBe(true);
    expect(caps(withOrg({ "read-workspaces": true }), [g("write")])).toEqual(workspaceAccessCapabilities("write"));
    expect(caps(withOrg({ "manage-workspaces": true }), [g("read")])).toEqual({ ...FULL_ACCESS, move: false });
  });

  it("union is commutative, associative and idempotent over the role table", () => {
    const all = [
      ...["read", "plan", "write", "admin", "custom"].map((l) => workspaceAccessCapabilities(l)),
      ...["read", "write", "maintain", "admin", "custom"].map((l) => projectAccessCapabilities(l)),
      NO_ACCESS,
      FULL_ACCESS,
    ];
    for (const a of all) {
      expect(union(a, a)).toEqual(a);
      expect(union(a, NO_ACCESS)).toEqual(a);
      for (const b of all) {
        expect(union(a, b)).toEqual(union(b, a));
        for (const c of all) expect(union(union(a, b), c)).toEqual(union(a, union(b, c)));
      }
    }
  });

  it("every grant level reads (the listing's SQL counts any grant as readable)", () => {
    for (const l of ["read", "plan", "write", "admin", "custom"]) expect(canRead(caps(nobody, [g(l)]))).toBe(true);
    for (const l of ["read", "write", "maintain", "admin", "custom"]) expect(canRead(caps(nobody, [], [g(l)]))).toBe(true);
  });
});

describe("force delete and organisation-token limits", () => {
  it("owners always; workspace admins only when the organisation allows it", () => {
    const admin = caps(nobody, [g("admin")]);
    expect(forceDeleteAllowed({ ...nobody, owner: true }, NO_ACCESS, false)).toBe(true);
    expect(forceDeleteAllowed({ ...nobody, orgToken: true }, NO_ACCESS, false)).toBe(true);
    expect(forceDeleteAllowed(nobody, admin, false)).toBe(false);
    expect(forceDeleteAllowed(nobody, admin, true)).toBe(true);
    expect(forceDeleteAllowed(nobody, caps(nobody, [g("write")]), true)).toBe(false);
    // A custom project grant that may delete but is not admin does not force delete.
    expect(forceDeleteAllowed(nobody, caps(nobody, [], [g("custom", { "workspace-access": { delete: true } })]), true)).toBe(false);
  });

  it("the organisation token cannot create state versions", () => {
    expect(flags(FULL_ACCESS, { isOrgToken: true })["can-create-state-versions"]).toBe(false);
    expect(flags(FULL_ACCESS)["can-create-state-versions"]).toBe(true);
  });
});

describe("organisation-access dependency rules", () => {
  it("implies reads from manages, refuses missing requirements, merges with what is stored", () => {
    const ok = resolveOrgAccess({}, { "manage-workspaces": true, "manage-projects": true });
    expect(ok).toMatchObject({ ok: true, value: { "read-workspaces": true, "read-projects": true, "manage-teams": false } });
    expect(resolveOrgAccess({}, { "manage-projects": true })).toMatchObject({ ok: false, code: "invalid_attribute" });
    expect(resolveOrgAccess({}, { "manage-workspaces": true, "read-workspaces": false })).toMatchObject({
      ok: false,
      pointer: "/data/attributes/organization-access/read-workspaces",
    });
    expect(resolveOrgAccess({ "manage-workspaces": true, "read-workspaces": true }, { "read-workspaces": false })).toMatchObject({ ok: false });
    expect(resolveOrgAccess({ "manage-workspaces": true, "read-workspaces": true }, { "manage-workspaces": false })).toMatchObject({
      ok: true,
      value: { "read-workspaces": true, "manage-workspaces": false },
    });
    expect(
      resolveOrgAccess({}, { "access-secret-teams": true, "manage-organization-access": true, "manage-teams": true, "manage-membership": true }),
    ).toMatchObject({ ok: true });
    expect(resolveOrgAccess({}, { "manage-organization-access": true, "manage-membership": true })).toMatchObject({ ok: false });
  });
});
