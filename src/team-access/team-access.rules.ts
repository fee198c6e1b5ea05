/** The access levels of team access and the permissions each implies (pure tables, read by service and serialiser). */

export const WS_LEVELS = ["read", "plan", "write", "admin", "custom"] as const;
export type WsLevel = (typeof WS_LEVELS)[number];

/** A workspace access's permissions (the custom keys). */
export interface WsCustom {
  runs: "read" | "plan" | "apply";
  variables: "none" | "read" | "write";
  "state-versions": "none" | "read-outputs" | "read" | "write";
  "sentinel-mocks": "none" | "read";
  "workspace-locking": boolean;
  "run-tasks": boolean;
  "policy-overrides": boolean;
}

export const WS_DEFAULT_CUSTOM: WsCustom = {
  runs: "read",
  variables: "none",
  "state-versions": "none",
  "sentinel-mocks": "none",
  "workspace-locking": false,
  "run-tasks": false,
  "policy-overrides": false,
};

/** What each fixed level implies (UTO/permissions_workspace). */
export const WS_IMPLIED: Record<Exclude<WsLevel, "custom">, WsCustom> = {
  read: { ...WS_DEFAULT_CUSTOM, variables: "read", "state-versions": "read" },
  plan: { ...WS_DEFAULT_CUSTOM, runs: "plan", variables: "read", "state-versions": "read" },
  write: { ...WS_DEFAULT_CUSTOM, runs: "apply", variables: "write", "state-versions": "write", "sentinel-mocks": "read", "workspace-locking": true },
  admin: {
    ...WS_DEFAULT_CUSTOM,
    runs: "apply",
    variables: "write",
    "state-versions": "write",
    "sentinel-mocks": "read",
    "workspace-locking": true,
    "run-tasks": true,
  },
};

export const PRJ_LEVELS = ["read", "write", "maintain", "admin", "custom"] as const;

export type PrjAccess = { "project-access": Record<string, unknown>; "workspace-access": Record<string, unknown> };

const ws = (runs: string, mocks: string, state: string, vars: string, create: boolean, locking: boolean, del: boolean, move: boolean, tasks: boolean) => ({
  runs,
  "sentinel-mocks": mocks,
  "state-versions": state,
  variables: vars,
  create,
  locking,
  delete: del,
  move,
  "run-tasks": tasks,
});

const prj = (settings: string, teams: string, variableSets: string) => ({ settings, teams, "variable-sets": variableSets });

/**
 * The implied-permissions table (HCP Terraform API docs: Project Team Access). `variable-sets` (the sets the project owns): only the admin
 * role manages them, as the project permissions reference lists "Manage variable sets" for admins alone.
 */
export const PRJ_IMPLIED: Record<string, PrjAccess> = {
  read: { "project-access": prj("read", "none", "none"), "workspace-access": ws("read", "none", "read", "read", false, false, false, false, false) },
  write: { "project-access": prj("read", "none", "none"), "workspace-access": ws("apply", "read", "write", "write", false, true, false, false, false) },
  maintain: { "project-access": prj("read", "none", "none"), "workspace-access": ws("apply", "read", "write", "write", true, true, true, false, true) },
  admin: { "project-access": prj("delete", "manage", "write"), "workspace-access": ws("apply", "read", "write", "write", true, true, true, true, true) },
  custom: { "project-access": prj("read", "none", "none"), "workspace-access": ws("read", "none", "none", "none", false, false, false, false, false) },
};
