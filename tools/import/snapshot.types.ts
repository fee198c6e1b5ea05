/**
 * What the importer copies, independent of where it was read (a server's API or an export file). Everything is
 * named, never identified: ids differ between servers, so the writer matches by name (workspaces, projects, teams,
 * pools, variable sets) or by key (variables, tags).
 */

export interface Variable {
  key: string;
  /** null: a sensitive value the source withholds; the writer creates the variable with an empty value. */
  value: string | null;
  description: string | null;
  category: "terraform" | "env";
  hcl: boolean;
  sensitive: boolean;
}

export interface TagBinding {
  key: string;
  value: string | null;
}

/** A workspace's team access or a project's: the team's name and the access attributes as the API shows them. */
export interface TeamAccess {
  team: string;
  attributes: Record<string, unknown>;
}

/** One state version, oldest first in its workspace's list. */
export interface StateVersionMeta {
  /** The source's id (for reading the bytes; never written). */
  sourceId: string;
  serial: number;
  /** Null until the bytes were read when the source does not show it (HCP's API does not). */
  lineage: string | null;
  /** md5 of the raw state, hex; null until the bytes were read. */
  md5: string | null;
  size: number | null;
  /** The source's download URLs (an API source), absent in a file. */
  downloadUrl?: string | null;
  jsonDownloadUrl?: string | null;
}

export interface Lock {
  locked: boolean;
  reason: string | null;
  /** `users/user-…`, `teams/team-…` or `runs/run-…` of the source; reported, never copied (the target's holder is the importer). */
  holder: string | null;
}

export interface Workspace {
  name: string;
  project: string;
  /** The settings the API lets a client write, as the source shows them (attribute name → value). */
  settings: Record<string, unknown>;
  /** The workspace's own execution mode, null when it inherits its project's or organisation's default. */
  executionMode: string | null;
  /** The agent pool's name when the workspace sets one of its own. */
  agentPool: string | null;
  /** A connected repository (its identifier): not copied, the OAuth token behind it is the source's. */
  vcsRepo: string | null;
  tags: string[];
  tagBindings: TagBinding[];
  variables: Variable[];
  /** Names of the workspaces that may read this one's state. */
  remoteStateConsumers: string[];
  teamAccess: TeamAccess[];
  lock: Lock;
  stateVersions: StateVersionMeta[];
}

export interface Project {
  name: string;
  settings: Record<string, unknown>;
  defaultAgentPool: string | null;
  tagBindings: TagBinding[];
  teamAccess: TeamAccess[];
}

export interface Team {
  name: string;
  settings: Record<string, unknown>;
}

export interface AgentPool {
  name: string;
  organizationScoped: boolean;
  allowedWorkspaces: string[];
  allowedProjects: string[];
}

export interface VariableSet {
  name: string;
  description: string | null;
  global: boolean;
  priority: boolean;
  /** The project that owns the set (a project-owned set), else null. */
  parentProject: string | null;
  workspaces: string[];
  projects: string[];
  variables: Variable[];
}

export interface Organization {
  name: string;
  settings: Record<string, unknown>;
  defaultAgentPool: string | null;
}

export interface Snapshot {
  organization: Organization;
  projects: Project[];
  teams: Team[];
  agentPools: AgentPool[];
  workspaces: Workspace[];
  variableSets: VariableSet[];
}

/** The bytes of one state version: the raw state and, when the source has it, Terraform's JSON state. */
export interface StateBytes {
  state: Buffer;
  json: Buffer | null;
}

/** Where the writer gets a state version's bytes: on demand, so a second run reads only what the target lacks. */
export interface StateReader {
  read(workspace: string, sv: StateVersionMeta): Promise<StateBytes>;
}

/** The kinds the summary counts, in the order they are written. */
export const KINDS = [
  "organization",
  "agent-pools",
  "projects",
  "teams",
  "workspaces",
  "tags",
  "variables",
  "state-versions",
  "locks",
  "remote-state-consumers",
  "variable-sets",
  "team-access",
] as const;
export type Kind = (typeof KINDS)[number];
