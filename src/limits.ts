/** The one table of limits. Every check in the service reads it; docs/behaviour.md mirrors it. */
export const LIMITS = {
  /** API request bodies (JSON:API documents). Larger bodies get 413 before parsing. */
  apiBodyBytes: 1024 * 1024,
  /** Raw and JSON state uploads through the signed URLs (streamed into the workspace's object in pieces): a 100 MB state fits. */
  stateBodyBytes: 128 * 1024 * 1024,
  /** Configuration archives (tar.gz) through their signed upload URLs: the request body limit of Cloudflare's plans. */
  configurationBodyBytes: 100 * 1024 * 1024,
  /**
   * A body answered before it was read (413, 401, 415…) is read and discarded up to this many bytes, so the client
   * receives the answer instead of a connection reset (src/platform/body.ts); past it the connection is closed.
   */
  drainBodyBytes: 256 * 1024 * 1024,
  pageSizeDefault: 20,
  pageSizeMax: 100,
  /** Bytes of each phase's log the web UI's run page shows (the rest through the log's own URL). */
  uiRunLogBytes: 256 * 1024,
  /** Resource changes the web UI's run page lists from the JSON plan. */
  /** Changed resources per page of a run's plan in the web UI (each with its attribute diff). */
  uiResourceChangesPage: 50,
  workspaceNameMax: 90,
  descriptionMax: 10_000,
  organizationNameMax: 40,
  projectNameMin: 3,
  projectNameMax: 40,
  projectDescriptionMax: 256,
  teamNameMax: 255,
  flatTagNameMax: 255,
  tagBindingsPerResource: 10,
  tagKeyMax: 128,
  tagValueMax: 256,
  /** Entries in one flat-tag or tag-binding request body. */
  tagRefsPerRequest: 1000,
  /** Workspaces in one POST /tags/:id/relationships/workspaces (one DO call each). */
  tagWorkspacesPerRequest: 100,
  genericStringMax: 1_000,
  triggerListMax: 100,
  consumersPerRequest: 100,
  includeValuesMax: 20,
  /** search[tags] + search[exclude-tags] + filter[tagged] conditions in one list request (each is checked on every workspace the list reads). */
  listTagFiltersMax: 20,
  /** API tokens created without `expired-at` expire after this many years (as the real service; go-tfe checks it). */
  tokenDefaultLifetimeYears: 2,
  /**
   * An organisation token TTL policy's default maximum (two average Gregorian years, as the real service answers;
   * go-tfe's `ttl2YearsDefaultInMs`), and the largest maximum a policy may set (100 such years).
   */
  tokenTtlPolicyDefaultMs: 63_113_904_000,
  tokenTtlPolicyMaxMs: 3_155_695_200_000,
  /** Workspace and variable-set variables. */
  variableKeyMax: 128,
  variableValueMax: 256 * 1024,
  variableDescriptionMax: 512,
  variablesPerWorkspace: 500,
  variablesPerVarset: 500,
  varsetNameMax: 128,
  varsetDescriptionMax: 512,
  /** Workspaces or projects in one apply/remove request of a variable set. */
  varsetTargetsPerRequest: 100,
  /** Projects in one attach/detach request of an OAuth client, or in its create or update. */
  oauthClientProjectsPerRequest: 100,
  /** Runs a filtered run list looks at (newest first); older runs are left out of a filtered list. */
  runListScanMax: 2_000,
  /** Saved plans one apply discards (they wait for confirmation; more than this is not a workspace's normal life). */
  savedPlansDiscardMax: 1_000,
  /** A run artifact read whole (the web UI's list of a plan's changes); a larger JSON plan is not listed there. */
  runArtifactReadBytes: 16 * 1024 * 1024,
  /** Bytes of a run log one read answers at most (the client's `limit` may ask for less). */
  runLogReadMax: 1024 * 1024,
  // ---- the private registry (src/registry/): uploads stream into R2 through their signed URLs, outside the API's body limit ----
  /** A module version's archive (tar.gz) as uploaded. */
  registryModuleBytes: 100 * 1024 * 1024,
  /** What a module archive unpacks to, and its entries (a module beyond these is refused, not unpacked). */
  registryModuleUnpackedBytes: 512 * 1024 * 1024,
  registryModuleEntries: 10_000,
  /** Of a module's Terraform files and READMEs, the bytes read for what the registry shows (inputs, outputs, readme). */
  registryModuleKeptFileBytes: 256 * 1024,
  registryModuleKeptBytes: 4 * 1024 * 1024,
  /** A provider version's SHA256SUMS file and its signature. */
  registryShasumsBytes: 64 * 1024,
  /** One platform's provider binary (a zip; real providers ship 30–80 MB). */
  registryProviderBinaryBytes: 512 * 1024 * 1024,
  // ---- the private agent protocol (docs/runs.md) ----
  /** JSON bodies of the agent protocol (register, status, finish). */
  agentJsonBodyBytes: 64 * 1024,
  /** One log append. */
  agentLogChunkBytes: 1024 * 1024,
  /**
   * One artifact (a plan, its JSON, the lock file, an apply's errored state). Uploads stream into the workspace's
   * object in pieces and downloads stream out, so no request or call holds it whole; the bound leaves room for the
   * JSON plan of a 100 MB state, which holds the state about four times (prior state, planned values, each change's
   * before and after).
   */
  agentArtifactBytes: 512 * 1024 * 1024,
  /** Bytes of the agent's output one phase's log keeps; past it the log ends with a "Log truncated" line. */
  runLogPhaseBytes: 32 * 1024 * 1024,
  /** How long `jobs/next` waits for a job before answering 204, and how often it looks meanwhile. */
  agentNextJobWaitMs: 10_000,
  agentNextJobPollMs: 250,
  /** Queued jobs one look tries to claim. */
  agentNextJobCandidates: 20,
  /** Agents one pool (the default pool too) may have registered; an exited one makes room, one gone for a day is removed. */
  agentsPerPool: 100,
  // ---- run triggers and notifications (src/run-triggers/, src/notifications/) ----
  /** Source workspaces one workspace may have (HCP Terraform API docs: Run Triggers, "up to 20 source workspaces"). */
  runTriggerSourcesMax: 20,
  /** Notification configurations of one workspace (the API docs: "up to 20"). */
  notificationConfigsPerWorkspace: 20,
  /** Delivery responses a configuration keeps, the newest first. */
  notificationResponsesKept: 10,
  /** Attempts at one delivery (the first and its retries, 2 s × 4ⁿ apart, at most 10 min) before it is given up. */
  notificationAttempts: 5,
  // ---- run tasks (src/run-tasks/) ----
  /** How long a run waits for a task's callback once its request was accepted (HCP Terraform: 10 minutes). */
  runTaskTimeoutMs: 10 * 60_000,
  /** Attempts at one task request (the first and its retries, 2 s × 4ⁿ apart) before its result is errored. */
  runTaskAttempts: 3,
  /** Run tasks one workspace may attach. */
  runTasksPerWorkspace: 10,
} as const;
