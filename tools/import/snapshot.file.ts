/**
 * The export file: one organisation's snapshot with every state version's bytes, for a backup or a move between
 * servers. Version 2 is JSON lines (a header, then one record per line, each workspace's states after it) so an
 * export streams; version 1 was one JSON document without tag bindings or agent-pool scopes, and still restores.
 * A sensitive variable's value is never in the file: it is `null` with `"withheld": true`.
 */
import { once } from "node:events";
import { createReadStream, createWriteStream, renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Snapshot, StateBytes, StateReader, StateVersionMeta, Variable, Workspace } from "./snapshot.types.ts";

export const FORMAT = "workspace-service-export";
export const VERSION = 2;

type Header = { format: string; version: number; "exported-at": string; source: { url: string; organization: string } };
type Line =
  | { kind: "organization"; organization: Snapshot["organization"] }
  | { kind: "agent-pool"; pool: Snapshot["agentPools"][number] }
  | { kind: "project"; project: Snapshot["projects"][number] }
  | { kind: "team"; team: Snapshot["teams"][number] }
  | { kind: "workspace"; workspace: Workspace }
  | { kind: "state"; workspace: string; index: number; state: string; json: string | null }
  | { kind: "variable-set"; set: Snapshot["variableSets"][number] };

/** A variable as the file holds it: a withheld value marked, never an empty string that looks copied. */
const fileVariable = (v: Variable) => (v.sensitive ? { ...v, value: null, withheld: true } : v);
const withoutUrls = (sv: StateVersionMeta): StateVersionMeta => ({ sourceId: sv.sourceId, serial: sv.serial, lineage: sv.lineage, md5: sv.md5, size: sv.size });

/** Writes the export: to `<file>.partial` first, renamed once complete, so an interrupted export leaves no torn file. */
export class ExportWriter {
  private readonly file: string;
  private readonly partial: string;
  private readonly out: ReturnType<typeof createWriteStream>;

  constructor(file: string, header: { url: string; organization: string }) {
    this.file = file;
    this.partial = `${file}.partial`;
    this.out = createWriteStream(this.partial, { mode: 0o600 });
    const h: Header = { format: FORMAT, version: VERSION, "exported-at": new Date().toISOString(), source: header };
    this.out.write(`${JSON.stringify(h)}\n`);
  }

  async line(l: Line): Promise<void> {
    if (!this.out.write(`${JSON.stringify(l)}\n`)) await once(this.out, "drain");
  }

  async workspace(ws: Workspace, states: StateBytes[]): Promise<void> {
    const clean: Workspace = { ...ws, variables: ws.variables.map(fileVariable) as Variable[], stateVersions: ws.stateVersions.map(withoutUrls) };
    let block = `${JSON.stringify({ kind: "workspace", workspace: clean })}\n`;
    states.forEach((s, index) => {
      block += `${JSON.stringify({ kind: "state", workspace: ws.name, index, state: s.state.toString("base64"), json: s.json?.toString("base64") ?? null })}\n`;
    });
    if (!this.out.write(block)) await once(this.out, "drain");
  }

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, "finish");
    renameSync(this.partial, this.file);
  }

  abort(): void {
    this.out.destroy();
    rmSync(this.partial, { force: true });
  }
}

/** An older file's snapshot brought to the current shape. */
function upgradeWorkspace(w: Partial<Workspace> & { name: string }): Workspace {
  return {
    project: "Default Project",
    settings: {},
    executionMode: null,
    agentPool: null,
    vcsRepo: null,
    tags: [],
    tagBindings: [],
    variables: [],
    remoteStateConsumers: [],
    teamAccess: [],
    lock: { locked: false, reason: null, holder: null },
    stateVersions: [],
    ...w,
  };
}

interface V1State {
  serial: number;
  lineage: string | null;
  md5: string;
  state: string;
  json?: string | null;
}

/** Reads an export file of any version: its snapshot and the reader of its states. */
export async function readExport(file: string): Promise<{ snapshot: Snapshot; reader: StateReader; header: Header }> {
  const first = await firstLine(file);
  let header: Header | null = null;
  try {
    header = JSON.parse(first) as Header;
  } catch {}
  if (header?.format === FORMAT && header.version === 2) return readV2(file);
  // Version 1: one document.
  const { readFile } = await import("node:fs/promises");
  let doc: any;
  try {
    doc = JSON.parse(await readFile(file, "utf8"));
  } catch {
    throw new Error(`${file} is not an export file (neither JSON lines nor one JSON document)`);
  }
  if (doc?.format !== FORMAT) throw new Error(`${file} is not an export file of this tool (format ${JSON.stringify(doc?.format)})`);
  if (doc.version !== 1) throw new Error(`${file} is an export of version ${doc.version}; this tool reads versions 1 and 2`);
  const states = new Map<string, StateBytes>();
  const workspaces = (doc.workspaces as Array<Omit<Partial<Workspace>, "stateVersions"> & { name: string; stateVersions: V1State[] }>).map((w) => {
    const metas = (w.stateVersions as unknown as V1State[]).map((s, i) => {
      states.set(`${w.name}\0${i}`, { state: Buffer.from(s.state, "base64"), json: s.json ? Buffer.from(s.json, "base64") : null });
      return { sourceId: `v1-${i}`, serial: s.serial, lineage: s.lineage, md5: s.md5, size: Buffer.from(s.state, "base64").byteLength };
    });
    return upgradeWorkspace({ ...w, stateVersions: metas });
  });
  const snapshot: Snapshot = {
    organization: { defaultAgentPool: null, settings: {}, ...doc.organization },
    projects: (doc.projects ?? []).map((p: any) => ({ settings: {}, defaultAgentPool: null, tagBindings: [], teamAccess: [], ...p })),
    teams: doc.teams ?? [],
    agentPools: (doc.agentPools ?? []).map((p: any) => ({ organizationScoped: true, allowedWorkspaces: [], allowedProjects: [], ...p })),
    workspaces,
    variableSets: (doc.variableSets ?? []).map((v: any) => ({ parentProject: null, workspaces: [], projects: [], variables: [], ...v })),
  };
  return {
    snapshot,
    reader: memoryReader(states, snapshot),
    header: {
      format: FORMAT,
      version: 1,
      "exported-at": doc["exported-at"] ?? "",
      source: doc.source ?? { url: "", organization: snapshot.organization.name },
    },
  };
}

async function firstLine(file: string): Promise<string> {
  const h = await open(file, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await h.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString("utf8").split("\n")[0];
  } finally {
    await h.close();
  }
}

async function readV2(file: string) {
  const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Number.POSITIVE_INFINITY });
  let header: Header | null = null;
  const snapshot: Snapshot = {
    organization: { name: "", settings: {}, defaultAgentPool: null },
    projects: [],
    teams: [],
    agentPools: [],
    workspaces: [],
    variableSets: [],
  };
  const states = new Map<string, StateBytes>();
  let n = 0;
  for await (const text of lines) {
    n++;
    if (!text.trim()) continue;
    let l: any;
    try {
      l = JSON.parse(text);
    } catch {
      throw new Error(`${file}:${n}: not JSON (a torn file? export again)`);
    }
    if (!header) {
      header = l as Header;
      continue;
    }
    switch ((l as Line).kind) {
      case "organization":
        snapshot.organization = l.organization;
        break;
      case "agent-pool":
        snapshot.agentPools.push(l.pool);
        break;
      case "project":
        snapshot.projects.push(l.project);
        break;
      case "team":
        snapshot.teams.push(l.team);
        break;
      case "workspace":
        snapshot.workspaces.push(upgradeWorkspace(l.workspace));
        break;
      case "state":
        states.set(`${l.workspace}\0${l.index}`, { state: Buffer.from(l.state, "base64"), json: l.json ? Buffer.from(l.json, "base64") : null });
        break;
      case "variable-set":
        snapshot.variableSets.push(l.set);
        break;
      default:
        throw new Error(`${file}:${n}: unknown record kind ${JSON.stringify(l.kind)}`);
    }
  }
  if (!header || !snapshot.organization.name) throw new Error(`${file} is incomplete: no organisation record`);
  return { snapshot, reader: memoryReader(states, snapshot), header };
}

function memoryReader(states: Map<string, StateBytes>, snapshot: Snapshot): StateReader {
  const index = new Map<StateVersionMeta, number>();
  for (const w of snapshot.workspaces)
    w.stateVersions.forEach((sv, i) => {
      index.set(sv, i);
    });
  return {
    async read(workspace: string, sv: StateVersionMeta): Promise<StateBytes> {
      const bytes = states.get(`${workspace}\0${index.get(sv)}`);
      if (!bytes) throw new Error(`the file has no state for serial ${sv.serial} of workspace ${workspace}`);
      return bytes;
    },
  };
}
