// Memory and CPU of a server's processes, from /proc (Linux only; elsewhere every reading is null).
// A server is one or more process groups with their descendants (OTF: otfd, and PostgreSQL's postmaster with its
// backends).
import { readFileSync } from "node:fs";
import { CLK_TCK, processesOf } from "../../scripts/lib/harness.mjs";

export { CLK_TCK };

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
