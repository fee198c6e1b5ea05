/**
 * Writes a snapshot into the target organisation through the API, matching by name, so that a second run copies
 * nothing twice and an interrupted one finishes where it stopped. Only documented endpoints: a state version is
 * created as Terraform creates one, under the workspace's lock held by the caller (the importer's token), which is
 * then released, or kept with the source's reason where the source's workspace is locked.
 */
import { type ApiClient, ApiError, type Json, type Resource } from "./api.client.ts";
import type { Progress, Report } from "./report.ts";
import type { Kind, Snapshot, StateReader, StateVersionMeta, TeamAccess, Variable, VariableSet, Workspace } from "./snapshot.types.ts";
import { pool, stateIdentity } from "./source.read.ts";

export interface WriteOptions {
  dryRun: boolean;
  progress: Progress;
  report: Report;
  concurrency?: number;
}

/** The most a state (base64) is sent inline; a larger one goes to the version's upload URL. */
const INLINE_MAX = 1_000_000;
/** Workspaces or projects per request when applying a variable set. */
const REFS_PER_REQUEST = 50;

/** The target's answers to its first requests, as messages; nothing is written before they pass. */
export async function checkTarget(client: ApiClient, organization: string): Promise<{ userId: string; exists: boolean }> {
  let me: Json | null;
  try {
    me = await client.request("GET", "/account/details");
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 0) throw new Error(`the target ${client.origin} is unreachable: ${e.message}`);
    if (e.status === 401) throw new Error(`the target ${client.origin} refused the token (401): check --to-token`);
    throw new Error(`the target answered ${e.status} to GET /account/details: ${e.message}`);
  }
  const exists = (await client.find(`/organizations/${encodeURIComponent(organization)}`)) !== null;
  if (!exists && me?.data?.attributes?.["is-site-admin"] !== true) {
    throw new Error(`the target has no organisation "${organization}" and the --to-token is not a site admin's, who could create it`);
  }
  return { userId: me?.data?.id ?? "", exists };
}

const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
const same = (a: unknown, b: unknown) => stable(a ?? null) === stable(b ?? null);
/** The keys of `want` whose value differs from `have`'s. */
const changed = (want: Record<string, unknown>, have: Record<string, unknown> | undefined) => Object.keys(want).filter((k) => !same(want[k], have?.[k]));
const only = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
const ref = (type: string, id: string) => ({ type, id });
const describe = (e: unknown) => (e instanceof Error ? e.message : String(e));

class Writer {
  private readonly projects = new Map<string, string>();
  private readonly teams = new Map<string, string>();
  private readonly pools = new Map<string, string>();
  private readonly workspaces = new Map<string, Resource>();
  private readonly org: string;
  private readonly client: ApiClient;
  private readonly snap: Snapshot;
  private readonly reader: StateReader;
  private readonly o: WriteOptions;
  private readonly userId: string;
  private exists: boolean;
  private createdOrganization = false;

  constructor(client: ApiClient, snap: Snapshot, reader: StateReader, o: WriteOptions, userId: string, exists: boolean) {
    this.client = client;
    this.snap = snap;
    this.reader = reader;
    this.o = o;
    this.userId = userId;
    this.exists = exists;
    this.org = encodeURIComponent(snap.organization.name);
  }

  private get report(): Report {
    return this.o.report;
  }

  /** A write, or in a dry run the line saying what it would write. */
  private async write(method: string, path: string, body: unknown, what: string): Promise<Json | null> {
    if (this.o.dryRun) {
      this.report.planned.push(what);
      return null;
    }
    return this.client.request(method, path, body);
  }

  /**
   * A create or update that drops, one at a time, each setting the target refuses with a pointer to it (a setting
   * of the other edition, a feature it does not offer), saying so, and writes the rest.
   */
  private async tolerant(kind: Kind, name: string, attrs: Record<string, unknown>, send: (a: Record<string, unknown>) => Promise<Json | null>) {
    const a = { ...attrs };
    for (;;) {
      try {
        return await send(a);
      } catch (e) {
        const key = e instanceof ApiError && e.status === 422 ? /^\/data\/attributes\/([^/]+)/.exec(e.pointer ?? "")?.[1] : undefined;
        if (!key || !(key in a)) throw e;
        this.report.notices.push(`${kind} ${name}: setting ${key} = ${JSON.stringify(a[key])} refused by the target (${(e as Error).message}); not copied`);
        delete a[key];
      }
    }
  }

  private list(path: string, query?: Record<string, string>): Promise<Resource[]> {
    return this.exists ? this.client.list(path, query) : Promise.resolve([]);
  }

  /** What a new organisation starts with, for a dry run into one that is not there yet. */
  private born(kind: "projects" | "teams"): Resource[] {
    if (this.exists) return [];
    const name = kind === "projects" ? "Default Project" : "owners";
    return [{ id: `(new ${name})`, type: kind, attributes: { name } }];
  }

  async run(): Promise<void> {
    await this.organization();
    await this.agentPools();
    await this.organizationSettings();
    await this.projectsAndTeams();
    await this.allWorkspaces();
    await this.consumers();
    await this.variableSets();
    await this.projectAccess();
    await this.poolScopes();
    this.report.notices.push("runs and configuration versions (history), OAuth clients and SSH keys (the source does not reveal their secrets) are not copied");
  }

  private async organization(): Promise<void> {
    const o = this.snap.organization;
    if (this.exists) return;
    await this.write(
      "POST",
      "/organizations",
      { data: { type: "organizations", attributes: { name: o.name, email: o.settings.email ?? "admin@localhost" } } },
      `create organization ${o.name}`,
    );
    if (!this.o.dryRun) this.exists = true;
    this.createdOrganization = true;
  }

  private async organizationSettings(): Promise<void> {
    const o = this.snap.organization;
    const have = this.exists ? ((await this.client.request("GET", `/organizations/${this.org}`))?.data as Resource) : undefined;
    const want: Record<string, unknown> = { ...o.settings };
    const havePool = have?.relationships?.["default-agent-pool"]?.data?.id ?? null;
    const keys = changed(want, have?.attributes);
    const poolId = o.defaultAgentPool ? (this.pools.get(o.defaultAgentPool) ?? null) : null;
    const patch = only(want, keys);
    if (poolId !== havePool && (poolId || havePool)) patch["default-agent-pool-id"] = poolId;
    if (!Object.keys(patch).length) return this.createdOrganization ? this.report.copied("organization") : this.report.skipped("organization");
    await this.tolerant("organization", o.name, patch, (a) =>
      this.write(
        "PATCH",
        `/organizations/${this.org}`,
        { data: { type: "organizations", attributes: a } },
        `update organization settings: ${Object.keys(a).join(", ")}`,
      ),
    );
    this.report.copied("organization");
  }

  private async agentPools(): Promise<void> {
    const have = new Map((await this.list(`/organizations/${this.org}/agent-pools`)).map((p) => [p.attributes?.name as string, p.id]));
    this.o.progress.start("agent-pools", this.snap.agentPools.length);
    for (const p of this.snap.agentPools) {
      this.report.notices.push(`agent pool ${p.name}: its agent tokens are not copied; create one for each agent`);
      const id = have.get(p.name);
      if (id) {
        this.pools.set(p.name, id);
        this.report.skipped("agent-pools");
      } else {
        try {
          const doc = await this.write(
            "POST",
            `/organizations/${this.org}/agent-pools`,
            { data: { type: "agent-pools", attributes: { name: p.name, "organization-scoped": p.organizationScoped } } },
            `create agent pool ${p.name}`,
          );
          this.pools.set(p.name, doc?.data?.id ?? `(new ${p.name})`);
          this.report.copied("agent-pools");
        } catch (e) {
          this.report.failed("agent-pools", p.name, describe(e));
        }
      }
      this.o.progress.tick("agent-pools");
    }
  }

  private async projectsAndTeams(): Promise<void> {
    const haveProjects = new Map(
      [...this.born("projects"), ...(await this.list(`/organizations/${this.org}/projects`))].map((p) => [p.attributes?.name as string, p]),
    );
    this.o.progress.start("projects", this.snap.projects.length);
    for (const p of this.snap.projects) {
      try {
        const attrs: Record<string, unknown> = { ...p.settings };
        if ("default-execution-mode" in attrs) {
          attrs["setting-overwrites"] = { "default-execution-mode": true, "default-agent-pool": true };
          attrs["default-agent-pool-id"] = p.defaultAgentPool ? (this.pools.get(p.defaultAgentPool) ?? null) : null;
        }
        const have = haveProjects.get(p.name);
        let id = have?.id;
        if (!have) {
          const doc = await this.tolerant("projects", p.name, attrs, (a) =>
            this.write(
              "POST",
              `/organizations/${this.org}/projects`,
              { data: { type: "projects", attributes: { name: p.name, ...a } } },
              `create project ${p.name}`,
            ),
          );
          id = doc?.data?.id ?? `(new ${p.name})`;
          this.report.copied("projects");
        } else {
          const haveAttrs = { ...have.attributes, "default-agent-pool-id": have.relationships?.["default-agent-pool"]?.data?.id ?? null };
          const keys = changed(attrs, haveAttrs).filter((k) => k !== "setting-overwrites" || changed(attrs, haveAttrs).length > 1);
          if (keys.length) {
            await this.tolerant("projects", p.name, only(attrs, keys), (a) =>
              this.write(
                "PATCH",
                `/projects/${have.id}`,
                { data: { type: "projects", attributes: a } },
                `update project ${p.name}: ${Object.keys(a).join(", ")}`,
              ),
            );
            this.report.copied("projects");
          } else this.report.skipped("projects");
        }
        this.projects.set(p.name, id!);
        await this.tagBindings(`/projects/${id}/tag-bindings`, !!have, p.tagBindings, `project ${p.name}`);
      } catch (e) {
        this.report.failed("projects", p.name, describe(e));
      }
      this.o.progress.tick("projects");
    }

    const haveTeams = new Map([...this.born("teams"), ...(await this.list(`/organizations/${this.org}/teams`))].map((t) => [t.attributes?.name as string, t]));
    this.o.progress.start("teams", this.snap.teams.length);
    for (const t of this.snap.teams) {
      try {
        const have = haveTeams.get(t.name);
        if (!have) {
          const doc = await this.tolerant("teams", t.name, t.settings, (a) =>
            this.write("POST", `/organizations/${this.org}/teams`, { data: { type: "teams", attributes: { name: t.name, ...a } } }, `create team ${t.name}`),
          );
          this.teams.set(t.name, doc?.data?.id ?? `(new ${t.name})`);
          this.report.copied("teams");
        } else {
          this.teams.set(t.name, have.id);
          // The owners team's access is fixed.
          const keys = t.name === "owners" ? [] : changed(t.settings, have.attributes);
          if (keys.length) {
            await this.tolerant("teams", t.name, only(t.settings, keys), (a) =>
              this.write("PATCH", `/teams/${have.id}`, { data: { type: "teams", attributes: a } }, `update team ${t.name}: ${Object.keys(a).join(", ")}`),
            );
            this.report.copied("teams");
          } else this.report.skipped("teams");
        }
      } catch (e) {
        this.report.failed("teams", t.name, describe(e));
      }
      this.o.progress.tick("teams");
    }
    if (this.snap.teams.length) this.report.notices.push("teams' members are not copied: invite the people to each team");
  }

  private async tagBindings(path: string, existing: boolean, want: { key: string; value: string | null }[], what: string): Promise<void> {
    if (!want.length) return;
    const have = existing && this.exists ? await this.client.list(path) : [];
    const now = new Map(have.map((b) => [b.attributes?.key as string, b.attributes?.value ?? null]));
    const missing = want.filter((b) => !now.has(b.key) || now.get(b.key) !== (b.value ?? null));
    this.report.skipped("tags", want.length - missing.length);
    if (!missing.length) return;
    await this.write(
      "PATCH",
      path,
      { data: missing.map((b) => ({ type: "tag-bindings", attributes: { key: b.key, value: b.value ?? "" } })) },
      `set tag bindings of ${what}: ${missing.map((b) => b.key).join(", ")}`,
    );
    this.report.copied("tags", missing.length);
  }

  private async allWorkspaces(): Promise<void> {
    for (const w of await this.list(`/organizations/${this.org}/workspaces`)) this.workspaces.set(w.attributes?.name, w);
    this.o.progress.start("workspaces", this.snap.workspaces.length);
    this.o.progress.start(
      "state-versions",
      this.snap.workspaces.reduce((n, w) => n + w.stateVersions.length, 0),
    );
    await pool(this.snap.workspaces, this.o.concurrency ?? 8, async (ws) => {
      try {
        await this.workspace(ws);
      } catch (e) {
        this.report.failed("workspaces", ws.name, `${describe(e)} (run again to finish)`);
      }
      this.o.progress.tick("workspaces");
    });
  }

  private async workspace(ws: Workspace): Promise<void> {
    const have = this.workspaces.get(ws.name);
    const attrs: Record<string, unknown> = { ...ws.settings };
    if (ws.executionMode) attrs["execution-mode"] = ws.executionMode;
    if (ws.agentPool) attrs["agent-pool-id"] = this.pools.get(ws.agentPool) ?? null;
    const projectId = this.projects.get(ws.project);
    if (ws.vcsRepo)
      this.report.notices.push(`workspace ${ws.name}: connected to ${ws.vcsRepo} in the source; connect it again (the OAuth token is the source's)`);
    let id: string;
    let created = false;
    if (!have) {
      const doc = await this.tolerant("workspaces", ws.name, attrs, (a) =>
        this.write(
          "POST",
          `/organizations/${this.org}/workspaces`,
          {
            data: {
              type: "workspaces",
              attributes: { name: ws.name, ...a },
              ...(projectId ? { relationships: { project: { data: ref("projects", projectId) } } } : {}),
            },
          },
          `create workspace ${ws.name}`,
        ),
      );
      id = doc?.data?.id ?? `(new ${ws.name})`;
      created = true;
      this.workspaces.set(ws.name, (doc?.data as Resource) ?? { id, type: "workspaces", attributes: { name: ws.name } });
      this.report.copied("workspaces");
    } else {
      id = have.id;
      const haveAttrs = { ...have.attributes, "agent-pool-id": have.relationships?.["agent-pool"]?.data?.id ?? null };
      const keys = changed(attrs, haveAttrs);
      const moveProject = projectId && have.relationships?.project?.data?.id !== projectId;
      if (keys.length || moveProject) {
        await this.tolerant("workspaces", ws.name, only(attrs, keys), (a) =>
          this.write(
            "PATCH",
            `/workspaces/${id}`,
            { data: { type: "workspaces", attributes: a, ...(moveProject ? { relationships: { project: { data: ref("projects", projectId) } } } : {}) } },
            `update workspace ${ws.name}: ${[...Object.keys(a), ...(moveProject ? ["project"] : [])].join(", ")}`,
          ),
        );
        this.report.copied("workspaces");
      } else this.report.skipped("workspaces");
    }
    // A workspace created just now has nothing yet to compare with (a dry run's is not even there).
    const fresh = created;

    // Flat tags.
    const tagsNow = new Set<string>(fresh ? [] : ((have?.attributes?.["tag-names"] as string[]) ?? []));
    const newTags = ws.tags.filter((t) => !tagsNow.has(t));
    this.report.skipped("tags", ws.tags.length - newTags.length);
    if (newTags.length) {
      await this.write(
        "POST",
        `/workspaces/${id}/relationships/tags`,
        { data: newTags.map((name) => ({ type: "tags", attributes: { name } })) },
        `tag workspace ${ws.name}: ${newTags.join(", ")}`,
      );
      this.report.copied("tags", newTags.length);
    }
    await this.tagBindings(`/workspaces/${id}/tag-bindings`, !fresh, ws.tagBindings, `workspace ${ws.name}`);

    await this.variables(`/workspaces/${id}/vars`, !fresh, ws.variables, { workspace: ws.name });
    await this.stateAndLock(ws, id, fresh);
    await this.teamAccess("team-workspaces", "workspace", id, !fresh, ws.teamAccess, ws.name);
  }

  private async variables(path: string, existing: boolean, vars: Variable[], owner: { workspace?: string; varset?: string }): Promise<void> {
    const have = new Map((existing && this.exists ? await this.client.list(path) : []).map((v) => [`${v.attributes?.category}/${v.attributes?.key}`, v]));
    const label = owner.workspace ? `workspace ${owner.workspace}` : `variable set ${owner.varset}`;
    for (const v of vars) {
      if (v.sensitive) this.report.sensitive.push({ ...owner, key: v.key, category: v.category });
      const current = have.get(`${v.category}/${v.key}`);
      const want: Record<string, unknown> = {
        key: v.key,
        value: v.sensitive ? "" : (v.value ?? ""),
        description: v.description ?? "",
        category: v.category,
        hcl: v.hcl,
        sensitive: v.sensitive,
      };
      try {
        if (!current) {
          await this.write("POST", path, { data: { type: "vars", attributes: want } }, `create variable ${v.key} (${v.category}) of ${label}`);
          this.report.copied("variables");
          continue;
        }
        // A sensitive value in the target may have been entered since: never overwritten.
        const a = current.attributes ?? {};
        const keys = (["description", "hcl", "sensitive", ...(v.sensitive || a.sensitive ? [] : ["value"])] as const).filter(
          (k) => !same(want[k], k === "description" ? (a[k] ?? "") : a[k]),
        );
        if (!keys.length) {
          this.report.skipped("variables");
          continue;
        }
        await this.write(
          "PATCH",
          `${path}/${current.id}`,
          { data: { type: "vars", id: current.id, attributes: only(want, [...keys]) } },
          `update variable ${v.key} (${v.category}) of ${label}: ${keys.join(", ")}`,
        );
        this.report.copied("variables");
      } catch (e) {
        this.report.failed("variables", `${label}: ${v.key}`, describe(e));
      }
    }
  }

  /** The state history oldest first, the current one last, then the lock as the source has it. */
  private async stateAndLock(ws: Workspace, id: string, fresh: boolean): Promise<void> {
    const listed =
      fresh || !this.exists
        ? []
        : await this.client.list("/state-versions", { "filter[organization][name]": this.snap.organization.name, "filter[workspace][name]": ws.name });
    const have = listed.filter((v) => v.attributes?.status === "finalized").reverse();
    const matches = (s: StateVersionMeta, t: Resource) =>
      s.serial === t.attributes?.serial &&
      (s.lineage === null || t.attributes?.lineage == null || s.lineage === t.attributes.lineage) &&
      (s.size === null || typeof t.attributes?.size !== "number" || s.size === t.attributes.size);
    const prefix = have.length <= ws.stateVersions.length && have.every((t, i) => matches(ws.stateVersions[i], t));
    if (!prefix) {
      this.report.failed("state-versions", ws.name, "the target workspace has state versions the source does not have; its state was not copied");
      this.o.progress.tick("state-versions", ws.stateVersions.length);
      return;
    }
    const missing = ws.stateVersions.slice(have.length);
    this.report.skipped("state-versions", have.length);
    this.o.progress.tick("state-versions", have.length);

    const current = fresh ? null : ((await this.client.find(`/workspaces/${id}`))?.data as Resource | undefined);
    const holder = current?.relationships?.["locked-by"]?.data;
    const locked = current?.attributes?.locked === true;
    const mine = locked && holder?.type === "users" && holder.id === this.userId;
    const src = ws.lock;
    if (src.locked) {
      const by = src.holder ? ` by ${src.holder}` : "";
      this.report.notices.push(`workspace ${ws.name}: locked in the source${by} (${src.reason || "no reason"}); locked here by the importer's user`);
    }

    if (missing.length) {
      if (locked && !mine) {
        this.report.failed("state-versions", ws.name, `locked in the target by ${holder?.type}/${holder?.id}; unlock it and run again`);
        this.o.progress.tick("state-versions", missing.length);
        return;
      }
      const reason = src.locked ? src.reason || "" : "importing state versions";
      if (!locked) await this.write("POST", `/workspaces/${id}/actions/lock`, { reason }, `lock workspace ${ws.name}`);
      try {
        for (const sv of missing) {
          try {
            await this.stateVersion(ws, id, sv);
            this.report.copied("state-versions");
          } catch (e) {
            this.report.failed("state-versions", `${ws.name} serial ${sv.serial}`, `${describe(e)} (run again to finish)`);
            // Later versions must not overtake a missing one: the order is the history.
            this.o.progress.tick("state-versions", missing.length - missing.indexOf(sv));
            return;
          } finally {
            this.o.progress.tick("state-versions");
          }
        }
      } finally {
        if (!src.locked) await this.write("POST", `/workspaces/${id}/actions/unlock`, {}, `unlock workspace ${ws.name}`);
      }
      if (src.locked) this.report.copied("locks");
      return;
    }
    // Nothing to write: the lock alone, as the source has it.
    if (src.locked && !locked) {
      await this.write("POST", `/workspaces/${id}/actions/lock`, { reason: src.reason || "" }, `lock workspace ${ws.name}`);
      this.report.copied("locks");
    } else if (src.locked) this.report.skipped("locks");
    else if (mine && current?.attributes?.["locked-reason"] === "importing state versions") {
      // An interrupted run's own lock.
      await this.write("POST", `/workspaces/${id}/actions/unlock`, {}, `unlock workspace ${ws.name}`);
    }
  }

  private async stateVersion(ws: Workspace, id: string, sv: StateVersionMeta): Promise<void> {
    if (this.o.dryRun) {
      this.report.planned.push(`create state version serial ${sv.serial} of workspace ${ws.name}`);
      return;
    }
    const bytes = await this.reader.read(ws.name, sv);
    const idn = stateIdentity(bytes.state);
    const state = bytes.state.toString("base64");
    const json = bytes.json?.toString("base64") ?? null;
    const inline = state.length <= INLINE_MAX && (json === null || json.length <= INLINE_MAX);
    const attributes: Record<string, unknown> = { serial: sv.serial, md5: idn.md5 };
    const lineage = idn.lineage ?? sv.lineage;
    if (lineage) attributes.lineage = lineage;
    if (inline) {
      attributes.state = state;
      if (json) attributes["json-state"] = json;
    }
    const doc = await this.client.request("POST", `/workspaces/${id}/state-versions`, { data: { type: "state-versions", attributes } });
    if (inline) return;
    const a = doc?.data?.attributes ?? {};
    if (bytes.json && a["hosted-json-state-upload-url"]) await this.client.upload(a["hosted-json-state-upload-url"], bytes.json);
    if (!a["hosted-state-upload-url"]) throw new Error("the target gave no upload URL for a large state");
    await this.client.upload(a["hosted-state-upload-url"], bytes.state);
  }

  private async teamAccess(
    type: "team-workspaces" | "team-projects",
    on: "workspace" | "project",
    id: string,
    existing: boolean,
    want: TeamAccess[],
    name: string,
  ) {
    if (!want.length) return;
    const have = new Map(
      (existing && this.exists ? await this.client.list(`/${type}`, { [`filter[${on}][id]`]: id }) : []).map((a) => [
        a.relationships?.team?.data?.id as string,
        a,
      ]),
    );
    for (const access of want) {
      const teamId = this.teams.get(access.team);
      const label = `${access.team} on ${on} ${name}`;
      if (!teamId) {
        this.report.failed("team-access", label, "the team is not in the target");
        continue;
      }
      // Only custom access carries the detailed permissions.
      const attrs = access.attributes.access === "custom" ? access.attributes : { access: access.attributes.access };
      const current = have.get(teamId);
      try {
        if (!current) {
          await this.write(
            "POST",
            `/${type}`,
            { data: { type, attributes: attrs, relationships: { team: { data: ref("teams", teamId) }, [on]: { data: ref(`${on}s`, id) } } } },
            `give team ${label} ${attrs.access} access`,
          );
          this.report.copied("team-access");
        } else if (changed(attrs, current.attributes).length) {
          await this.write("PATCH", `/${type}/${current.id}`, { data: { type, id: current.id, attributes: attrs } }, `update team access ${label}`);
          this.report.copied("team-access");
        } else this.report.skipped("team-access");
      } catch (e) {
        this.report.failed("team-access", label, describe(e));
      }
    }
  }

  private async consumers(): Promise<void> {
    const withConsumers = this.snap.workspaces.filter((w) => w.remoteStateConsumers.length);
    await pool(withConsumers, this.o.concurrency ?? 8, async (ws) => {
      const id = this.workspaces.get(ws.name)?.id;
      if (!id) return;
      const fresh = id.startsWith("(new");
      const have = new Set(fresh ? [] : (await this.client.list(`/workspaces/${id}/relationships/remote-state-consumers`)).map((w) => w.id));
      const refs: { type: string; id: string }[] = [];
      for (const name of ws.remoteStateConsumers) {
        const consumer = this.workspaces.get(name)?.id;
        if (!consumer) this.report.failed("remote-state-consumers", `${ws.name} → ${name}`, "the consumer workspace is not in the target");
        else if (have.has(consumer)) this.report.skipped("remote-state-consumers");
        else refs.push(ref("workspaces", consumer));
      }
      if (!refs.length) return;
      try {
        await this.write(
          "POST",
          `/workspaces/${id}/relationships/remote-state-consumers`,
          { data: refs },
          `let ${refs.length} workspaces read the state of ${ws.name}`,
        );
        this.report.copied("remote-state-consumers", refs.length);
      } catch (e) {
        this.report.failed("remote-state-consumers", ws.name, describe(e));
      }
    });
  }

  private async variableSets(): Promise<void> {
    const have = new Map((await this.list(`/organizations/${this.org}/varsets`)).map((v) => [v.attributes?.name as string, v]));
    this.o.progress.start("variable-sets", this.snap.variableSets.length);
    for (const vs of this.snap.variableSets) {
      try {
        await this.variableSet(vs, have.get(vs.name));
      } catch (e) {
        this.report.failed("variable-sets", vs.name, describe(e));
      }
      this.o.progress.tick("variable-sets");
    }
  }

  private async variableSet(vs: VariableSet, current: Resource | undefined): Promise<void> {
    const attrs = { description: vs.description ?? "", global: vs.global, priority: vs.priority };
    let id: string;
    if (!current) {
      const parent = vs.parentProject ? this.projects.get(vs.parentProject) : undefined;
      const doc = await this.write(
        "POST",
        `/organizations/${this.org}/varsets`,
        {
          data: {
            type: "varsets",
            attributes: { name: vs.name, ...attrs },
            ...(parent ? { relationships: { parent: { data: ref("projects", parent) } } } : {}),
          },
        },
        `create variable set ${vs.name}`,
      );
      id = doc?.data?.id ?? `(new ${vs.name})`;
      this.report.copied("variable-sets");
    } else {
      id = current.id;
      const keys = changed(attrs, { ...current.attributes, description: current.attributes?.description ?? "" });
      if (keys.length) {
        await this.write("PATCH", `/varsets/${id}`, { data: { type: "varsets", attributes: only(attrs, keys) } }, `update variable set ${vs.name}`);
        this.report.copied("variable-sets");
      } else this.report.skipped("variable-sets");
    }
    const fresh = !current && this.o.dryRun;
    await this.variables(`/varsets/${id}/relationships/vars`, !fresh, vs.variables, { varset: vs.name });
    if (vs.global) return;
    const applied = async (kind: "workspaces" | "projects", names: string[], ids: (n: string) => string | undefined) => {
      const now = new Set(((current?.relationships?.[kind]?.data ?? []) as Resource[]).map((r) => r.id));
      const refs = names.flatMap((n) => {
        const target = ids(n);
        return target && !now.has(target) ? [ref(kind, target)] : [];
      });
      for (let i = 0; i < refs.length; i += REFS_PER_REQUEST) {
        const chunk = refs.slice(i, i + REFS_PER_REQUEST);
        await this.write("POST", `/varsets/${id}/relationships/${kind}`, { data: chunk }, `apply variable set ${vs.name} to ${chunk.length} ${kind}`);
      }
    };
    await applied("workspaces", vs.workspaces, (n) => this.workspaces.get(n)?.id);
    await applied("projects", vs.projects, (n) => this.projects.get(n));
  }

  private async projectAccess(): Promise<void> {
    for (const p of this.snap.projects) {
      const id = this.projects.get(p.name);
      if (!id) continue;
      await this.teamAccess("team-projects", "project", id, !id.startsWith("(new"), p.teamAccess, p.name);
    }
  }

  private async poolScopes(): Promise<void> {
    const current = new Map((await this.list(`/organizations/${this.org}/agent-pools`)).map((p) => [p.attributes?.name as string, p]));
    for (const p of this.snap.agentPools) {
      const id = this.pools.get(p.name);
      if (!id || (!p.allowedWorkspaces.length && !p.allowedProjects.length)) continue;
      const ws = p.allowedWorkspaces.map((n) => this.workspaces.get(n)?.id).filter((x): x is string => !!x);
      const prj = p.allowedProjects.map((n) => this.projects.get(n)).filter((x): x is string => !!x);
      const have = current.get(p.name);
      const haveWs = ((have?.relationships?.["allowed-workspaces"]?.data ?? []) as Resource[]).map((r) => r.id).sort();
      const havePrj = ((have?.relationships?.["allowed-projects"]?.data ?? []) as Resource[]).map((r) => r.id).sort();
      if (same([...ws].sort(), haveWs) && same([...prj].sort(), havePrj)) continue;
      try {
        await this.write(
          "PATCH",
          `/agent-pools/${id}`,
          {
            data: {
              type: "agent-pools",
              relationships: {
                "allowed-workspaces": { data: ws.map((w) => ref("workspaces", w)) },
                "allowed-projects": { data: prj.map((x) => ref("projects", x)) },
              },
            },
          },
          `scope agent pool ${p.name}`,
        );
      } catch (e) {
        this.report.failed("agent-pools", p.name, describe(e));
      }
    }
  }
}

export async function writeTarget(client: ApiClient, snapshot: Snapshot, reader: StateReader, o: WriteOptions, target: { userId: string; exists: boolean }) {
  await new Writer(client, snapshot, reader, o, target.userId, target.exists).run();
}
