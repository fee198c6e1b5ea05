// Memory and CPU of a server's processes, from /proc (Linux only; elsewhere every reading is null).
// A server is one or more process groups with their descendants (OTF: otfd, and PostgreSQL's postmaster with its
// backends).
import { existsSync, readdirSync, readFileSync } from "node:fs";

export const CLK_TCK = 100; // Linux USER_HZ

/**
 * Processes of the process groups `pgids` and all their descendants (PostgreSQL's postmaster puts each child in a
 * session of its own): [{ pid, pgid (the group it descends from), comm, rssKb, cpuTicks }].
 */
export function processesOf(pgids) {
  if (!existsSync("/proc")) return [];
  const all = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const f = stat.slice(close + 2).split(" "); // f[0] is field 3 (state)
      // field 4: parent, field 5: process group; utime+stime; rss pages
      all.push({ pid: Number(d), ppid: Number(f[1]), ownPgid: Number(f[2]), comm, cpuTicks: Number(f[11]) + Number(f[12]), rssKb: Number(f[21]) * 4 });
    } catch {}
  }
  const groupOf = new Map(); // pid -> the wanted group it belongs to
  const want = new Set(pgids);
  for (const p of all) if (want.has(p.ownPgid)) groupOf.set(p.pid, p.ownPgid);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!groupOf.has(p.pid) && groupOf.has(p.ppid)) {
        groupOf.set(p.pid, groupOf.get(p.ppid));
        grew = true;
      }
    }
  }
  return all.filter((p) => groupOf.has(p.pid)).map(({ pid, comm, cpuTicks, rssKb }) => ({ pid, pgid: groupOf.get(pid), comm, cpuTicks, rssKb }));
}

/** Proportional set size (kB) of one process: shared pages (PostgreSQL's shared buffers) divided among their users. */
function pssKb(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Memory of a server, by part: `parts` is [{ name, pgid }]. Returns { rssMb, pssMb, parts: [{ name, procs, rssMb,
 * pssMb }] } (null when /proc shows none of its processes).
 */
export function memoryOf(parts, withPss = false) {
  const procs = processesOf(parts.map((p) => p.pgid));
  if (!procs.length) return null;
  const byPart = parts.map((p) => {
    const mine = procs.filter((x) => x.pgid === p.pgid);
    const pss = withPss ? mine.map((x) => pssKb(x.pid)) : [];
    return {
      name: p.name,
      procs: mine.length,
      rssMb: mine.reduce((s, x) => s + x.rssKb, 0) / 1024,
      pssMb: withPss && pss.every((v) => v !== null) ? pss.reduce((s, v) => s + v, 0) / 1024 : null,
    };
  });
  const pssKnown = byPart.every((p) => p.pssMb !== null);
  return {
    rssMb: byPart.reduce((s, p) => s + p.rssMb, 0),
    pssMb: withPss && pssKnown ? byPart.reduce((s, p) => s + p.pssMb, 0) : null,
    parts: byPart,
  };
}

/** CPU ticks (user + system) used so far by all processes of the server (children that already exited are not counted). */
export function cpuTicksOf(parts) {
  const procs = processesOf(parts.map((p) => p.pgid));
  return procs.length ? procs.reduce((s, x) => s + x.cpuTicks, 0) : null;
}
