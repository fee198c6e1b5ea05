/**
 * What a run tells its user: a progress bar per kind on a terminal (plain lines otherwise) on stderr, and the summary
 * on stdout: per kind what was copied, skipped (already there) and failed with the reason, the sensitive values to
 * enter again, and what the source withholds or the importer does not copy.
 */
import { KINDS, type Kind } from "./snapshot.types.ts";

export class Progress {
  private readonly totals = new Map<string, { done: number; total: number; lastLine: number }>();
  private readonly tty: boolean;
  private readonly out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  private readonly quiet: boolean;

  constructor(out: NodeJS.WritableStream & { isTTY?: boolean }, quiet = false) {
    this.out = out;
    this.tty = out.isTTY === true;
    this.quiet = quiet;
  }

  start(kind: string, total: number): void {
    this.totals.set(kind, { done: 0, total, lastLine: -1 });
    this.show(kind);
  }

  tick(kind: string, n = 1): void {
    const t = this.totals.get(kind);
    if (!t) return;
    t.done += n;
    this.show(kind);
  }

  note(line: string): void {
    if (this.quiet) return;
    this.out.write(this.tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }

  private show(kind: string): void {
    if (this.quiet) return;
    const t = this.totals.get(kind)!;
    if (this.tty) {
      const width = 30;
      const filled = t.total ? Math.round((t.done / t.total) * width) : width;
      const bar = `${"█".repeat(filled)}${"░".repeat(width - filled)}`;
      this.out.write(`\r\x1b[2K${kind.padEnd(26)} ${bar} ${t.done}/${t.total}${t.done >= t.total ? "\n" : ""}`);
      return;
    }
    // Plain lines: the start, every tenth, the end.
    const tenth = t.total ? Math.floor((t.done / t.total) * 10) : 10;
    if (tenth === t.lastLine && t.done < t.total) return;
    if (t.done >= t.total && t.lastLine === 10) return;
    t.lastLine = tenth;
    this.out.write(`${kind}: ${t.done}/${t.total}\n`);
  }
}

export interface Failure {
  kind: Kind;
  name: string;
  reason: string;
}

export interface SensitiveValue {
  workspace?: string;
  varset?: string;
  key: string;
  category: string;
}

export type Counts = Record<Kind, { copied: number; skipped: number; failed: number }>;

export class Report {
  readonly counts: Counts = Object.fromEntries(KINDS.map((k) => [k, { copied: 0, skipped: 0, failed: 0 }])) as Counts;
  readonly failures: Failure[] = [];
  readonly sensitive: SensitiveValue[] = [];
  /** What the source withholds or the importer leaves out, one sentence each (VCS connections, agent tokens, locks held). */
  readonly notices: string[] = [];
  /** A dry run's planned writes, one line each. */
  readonly planned: string[] = [];

  copied(kind: Kind, n = 1): void {
    this.counts[kind].copied += n;
  }
  skipped(kind: Kind, n = 1): void {
    this.counts[kind].skipped += n;
  }
  failed(kind: Kind, name: string, reason: string): void {
    this.counts[kind].failed++;
    this.failures.push({ kind, name, reason });
  }

  json(extra: Record<string, unknown>): Record<string, unknown> {
    return {
      ...extra,
      counts: this.counts,
      "sensitive-variables": this.sensitive.map((s) =>
        s.workspace ? { workspace: s.workspace, key: s.key, category: s.category } : { varset: s.varset, key: s.key, category: s.category },
      ),
      failures: this.failures,
      notices: this.notices,
      ...(this.planned.length ? { planned: this.planned } : {}),
    };
  }

  text(header: string): string {
    const lines = [header, "", `${"kind".padEnd(24)}${"copied".padStart(8)}${"skipped".padStart(9)}${"failed".padStart(8)}`];
    for (const k of KINDS) {
      const c = this.counts[k];
      lines.push(`${k.padEnd(24)}${String(c.copied).padStart(8)}${String(c.skipped).padStart(9)}${String(c.failed).padStart(8)}`);
    }
    if (this.failures.length) {
      lines.push("", "Failed:");
      for (const f of this.failures) lines.push(`  ${f.kind} ${f.name}: ${f.reason}`);
    }
    if (this.sensitive.length) {
      lines.push("", "Sensitive values the source does not reveal (created empty; enter each again):");
      for (const s of this.sensitive) lines.push(`  ${s.workspace ? `workspace ${s.workspace}` : `variable set ${s.varset}`}: ${s.key} (${s.category})`);
    }
    if (this.notices.length) {
      lines.push("", "Not copied:");
      for (const n of this.notices) lines.push(`  ${n}`);
    }
    return lines.join("\n");
  }
}
