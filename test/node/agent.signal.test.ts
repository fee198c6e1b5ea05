// The job's supervision delivering a cancel to a sandboxed Terraform: bwrap reports its child's pid before that child
// has made its own session (`--new-session`), so a SIGINT sent in between finds no process group. The stand-in for
// bwrap below reports the pid at once; the command makes its session half a second later and ends by itself after
// 20 s, saying so, unless a SIGINT reaches it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JobControl } from "../../agent/terraform.ts";

const BWRAP_STANDIN = [
  "-c",
  [
    // Its pid is the group to signal only once `setsid` has run in it (exec keeps the pid).
    // Perl (in every Debian) takes SIGINT first, then makes its session: a shell's background job would ignore it.
    `( exec 3>&-; exec perl -MPOSIX -e '$| = 1; $SIG{INT} = sub { print "interrupted\\n"; exit 0 }; select(undef, undef, undef, 0.5); POSIX::setsid(); sleep 20; print "ran-out\\n"' ) &`,
    'echo "{\\"child-pid\\": $!}" >&3',
    "exec 3>&-",
    "wait",
  ].join("\n"),
  "bwrap-standin",
];

describe("a cancel to a sandboxed command", () => {
  it("lands once the sandbox's session exists, though the first SIGINT found no process group", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "agent-signal-"));
    const control = new JobControl({ heartbeat: async () => ({ signal: "cancel" }), heartbeatMs: 50 });
    let out = "";
    try {
      const running = control.run({
        bin: "true",
        args: [],
        cwd,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        output: (chunk) => (out += chunk.toString("utf8")),
        sandbox: { bwrap: "/bin/sh", args: BWRAP_STANDIN },
      });
      control.startHeartbeat();
      const result = await running;
      expect(out).toContain("interrupted");
      expect(out).not.toContain("ran-out");
      expect(result.code).toBe(0);
    } finally {
      control.stop();
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 40_000);
});
