/**
 * Pure workspace rules shared by the Worker (create) and the Durable Object (update, where the
 * rules need the current state). Failures are returned as values so they can cross RPC.
 */
import type { Edition } from "../env";
import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";
import { acceptedIn, fieldRows } from "./workspace.fields";
import type { WorkspaceAttributesInput } from "./workspaces.schemas";
import { WORKSPACE_NAME } from "./workspaces.schemas";
import type { ExecutionMode, NormalisedAttributes, VcsRepo, WorkspaceSettings } from "./workspace.types";

export type { NormalisedAttributes };
// The defaults are the field table's (the create path and the tests take them from here).
export { defaultSettings } from "./workspace.fields";

const A = "/data/attributes";

export function checkName(name: string): Failure | null {
  if (name.length === 0 || name.length > LIMITS.workspaceNameMax || !WORKSPACE_NAME.test(name)) {
    return fail(
      "invalid_attribute",
      `Name is invalid: it may contain only letters, numbers, dashes (-) and underscores (_), at most ${LIMITS.workspaceNameMax} characters`,
      `${A}/name`,
    );
  }
  return null;
}

/** Picks one value from alias pairs (the documented name and the name the real clients send); different values → 422. */
function alias<T>(values: Array<[string, T | undefined]>): { value?: T; failure?: Failure } {
  const given = values.filter(([, v]) => v !== undefined) as Array<[string, T]>;
  if (given.length === 0) return {};
  const [first, ...rest] = given;
  for (const [member, v] of rest) {
    if (JSON.stringify(v) !== JSON.stringify(first[1])) {
      return { failure: fail("invalid_attribute", `${first[0]} and ${member} were both given with different values`, `${A}/${member}`) };
    }
  }
  return { value: first[1] };
}

/** Maps request attributes to settings, checking every rule that needs only the request. */
export function normaliseAttributes(attrs: WorkspaceAttributesInput, edition: Edition): NormalisedAttributes | Failure {
  const out: NormalisedAttributes = { settings: {} };
  const s = out.settings;
  if (attrs.name !== undefined) {
    const f = checkName(attrs.name);
    if (f) return f;
    out.name = attrs.name;
  }
  // Every setting the field table takes from a request by itself (those it leaves to the rules follow below).
  const sent = attrs as Record<string, unknown>;
  for (const [key, row] of fieldRows) {
    if (row.byRules || !acceptedIn(row, edition)) continue;
    const given = alias<unknown>([key, ...(row.aliases ?? [])].map((name) => [name, sent[name]]));
    if (given.failure) return given.failure;
    if (given.value === undefined) continue;
    const value = row.update ? row.update(given.value) : given.value;
    if (isFailure(value)) return value;
    (s as Record<string, unknown>)[key] = value;
  }
  if (attrs["execution-mode"] !== undefined && attrs.operations !== undefined) {
    return fail("invalid_attribute", "operations is deprecated and cannot be specified when execution mode is used", `${A}/operations`);
  }
  if (attrs["global-remote-state"] === true && attrs["project-remote-state"] === true) {
    return fail("invalid_attribute", "Project remote state cannot be enabled when global remote state sharing is enabled", `${A}/project-remote-state`);
  }
  if (attrs["execution-mode"] !== undefined) s["execution-mode"] = attrs["execution-mode"];
  if (attrs.operations !== undefined) {
    out.operations = attrs.operations;
    s["execution-mode"] = attrs.operations ? "remote" : "local";
  }
  if (attrs["agent-pool-id"] !== undefined) {
    if (attrs.operations === true && attrs["agent-pool-id"] !== null) {
      return fail("invalid_attribute", "Agent pool must not be specified unless using 'agent' execution mode", `${A}/agent-pool-id`);
    }
    s["agent-pool-id"] = attrs["agent-pool-id"];
  }
  if (attrs["setting-overwrites"] !== undefined) {
    out.overwrites = attrs["setting-overwrites"];
    if (attrs["setting-overwrites"]["execution-mode"] === true && s["execution-mode"] === undefined) {
      return fail("invalid_attribute", "execution-mode must be sent when setting-overwrites execution-mode is true", `${A}/execution-mode`);
    }
  }
  if (attrs["vcs-repo"] !== undefined) {
    if (attrs["vcs-repo"] === null) out.vcsRepo = null;
    else {
      const v = attrs["vcs-repo"];
      const app = alias<string>([
        ["vcs-app-installation-id", v["vcs-app-installation-id"]],
        ["github-app-installation-id", v["github-app-installation-id"]],
      ]);
      if (app.failure) return { ...app.failure, pointer: `${A}/vcs-repo/github-app-installation-id` };
      // The tfe provider sends every key on update, `""` meaning unset (never a value to check or keep).
      const repo: Partial<VcsRepo> = {};
      if (v.identifier) repo.identifier = v.identifier;
      if (v["oauth-token-id"]) repo["oauth-token-id"] = v["oauth-token-id"];
      if (app.value) repo["vcs-app-installation-id"] = app.value;
      if (v.branch !== undefined) repo.branch = v.branch;
      if (v["ingress-submodules"] !== undefined) repo["ingress-submodules"] = v["ingress-submodules"];
      if (v["tags-regex"] !== undefined) repo["tags-regex"] = v["tags-regex"] || null;
      if (repo.identifier && !/^[^/\s]+(\/[^/\s]+)+$/.test(repo.identifier)) {
        return fail("invalid_attribute", "vcs-repo identifier must be :org/:repo", `${A}/vcs-repo/identifier`);
      }
      if (repo["oauth-token-id"] && repo["vcs-app-installation-id"]) {
        return fail("invalid_attribute", "oauth-token-id and vcs-app-installation-id cannot both be given", `${A}/vcs-repo/oauth-token-id`);
      }
      if (repo["tags-regex"]) {
        try {
          new RegExp(repo["tags-regex"]);
        } catch {
          return fail("invalid_attribute", "tags-regex is not a valid regular expression", `${A}/vcs-repo/tags-regex`);
        }
      }
      if (repo["tags-regex"] && attrs["file-triggers-enabled"] === true) {
        return fail("invalid_attribute", "vcs-repo tags-regex cannot be set while file-triggers-enabled is true", `${A}/vcs-repo/tags-regex`);
      }
      out.vcsRepo = repo;
    }
  }
  return out;
}

/** Applies a vcs-repo patch: null removes, an object modifies only its keys. */
export function mergeVcsRepo(current: VcsRepo | null, patch: Partial<VcsRepo> | null | undefined): VcsRepo | null | Failure {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const merged: VcsRepo = {
    identifier: "",
    "oauth-token-id": null,
    "vcs-app-installation-id": null,
    branch: "",
    "ingress-submodules": false,
    "tags-regex": null,
    ...(current ?? {}),
    ...patch,
  };
  // Switching credentials: giving one of the two ids replaces the other.
  if (patch["oauth-token-id"]) merged["vcs-app-installation-id"] = null;
  if (patch["vcs-app-installation-id"]) merged["oauth-token-id"] = null;
  if (!merged.identifier) {
    return fail("invalid_attribute", "vcs-repo identifier is required when adding a VCS repository", `${A}/vcs-repo/identifier`);
  }
  if (!merged["oauth-token-id"] && !merged["vcs-app-installation-id"]) {
    return fail("invalid_attribute", "vcs-repo oauth-token-id is required when adding a VCS repository", `${A}/vcs-repo/oauth-token-id`);
  }
  return merged;
}

export interface Defaults {
  executionMode: ExecutionMode;
  agentPoolId: string | null;
}

/** Effective execution mode and agent pool: the workspace's own, else the project's or organisation's. */
export function effectiveExecution(s: WorkspaceSettings, d: Defaults): { mode: ExecutionMode; agentPoolId: string | null } {
  if (s["execution-mode"] === null) return { mode: d.executionMode, agentPoolId: d.executionMode === "agent" ? d.agentPoolId : null };
  return { mode: s["execution-mode"], agentPoolId: s["execution-mode"] === "agent" ? s["agent-pool-id"] : null };
}

/** Cross-field rules on the merged settings. */
export function checkSettings(s: WorkspaceSettings): Failure | null {
  const mode = s["execution-mode"];
  if (mode === "agent" && !s["agent-pool-id"]) {
    return fail("invalid_attribute", "Agent pool must be specified when using 'agent' execution mode", `${A}/agent-pool-id`);
  }
  if (mode !== "agent" && mode !== null && s["agent-pool-id"]) {
    return fail("invalid_attribute", "Agent pool must not be specified unless using 'agent' execution mode", `${A}/agent-pool-id`);
  }
  if (s["trigger-patterns"].length > 0 && s["trigger-prefixes"].length > 0) {
    return fail("invalid_attribute", "trigger-patterns and trigger-prefixes cannot both be set", `${A}/trigger-patterns`);
  }
  const tags = s["vcs-repo"]?.["tags-regex"];
  if (tags && (s["trigger-patterns"].length > 0 || s["trigger-prefixes"].length > 0)) {
    return fail("invalid_attribute", "vcs-repo tags-regex cannot be set with trigger-patterns or trigger-prefixes", `${A}/vcs-repo/tags-regex`);
  }
  if (s["global-remote-state"] && s["project-remote-state"]) {
    return fail("invalid_attribute", "Project remote state cannot be enabled when global remote state sharing is enabled", `${A}/project-remote-state`);
  }
  return null;
}

/** Applies normalised attributes to settings (create: onto defaults; update: onto current). */
export function applySettings(current: WorkspaceSettings, n: NormalisedAttributes): WorkspaceSettings | Failure {
  const next: WorkspaceSettings = { ...current, ...n.settings };
  // Literal execution-mode / agent-pool-id set the overwrite; overwrites false clear back to inherit.
  if (n.overwrites?.["execution-mode"] === false && n.settings["execution-mode"] === undefined) {
    next["execution-mode"] = null;
    next["agent-pool-id"] = null;
  }
  if (n.overwrites?.["agent-pool"] === false && n.settings["agent-pool-id"] === undefined && next["execution-mode"] === null) {
    next["agent-pool-id"] = null;
  }
  if (n.settings["execution-mode"] !== undefined && n.settings["execution-mode"] !== "agent" && n.settings["agent-pool-id"] === undefined) {
    next["agent-pool-id"] = null; // leaving agent mode drops the pool
  }
  // Enabling one remote-state sharing mode on update turns the other off only if it was not sent.
  if (n.settings["global-remote-state"] === true && n.settings["project-remote-state"] === undefined) next["project-remote-state"] = false;
  if (n.settings["project-remote-state"] === true && n.settings["global-remote-state"] === undefined && current["global-remote-state"]) {
    return fail("invalid_attribute", "Project remote state cannot be enabled when global remote state sharing is enabled", `${A}/project-remote-state`);
  }
  // Patterns and prefixes are two ways of one filter: setting one (and not the other) replaces the other, as go-tfe's
  // update test expects; both in one request is refused by checkSettings.
  if (n.settings["trigger-patterns"]?.length && n.settings["trigger-prefixes"] === undefined) next["trigger-prefixes"] = [];
  if (n.settings["trigger-prefixes"]?.length && n.settings["trigger-patterns"] === undefined) next["trigger-patterns"] = [];
  const vcs = mergeVcsRepo(current["vcs-repo"], n.vcsRepo);
  if (vcs && "ok" in vcs) return vcs;
  next["vcs-repo"] = vcs as VcsRepo | null;
  return checkSettings(next) ?? next;
}

export function isFailure(x: unknown): x is Failure {
  return typeof x === "object" && x !== null && (x as { ok?: unknown }).ok === false;
}
