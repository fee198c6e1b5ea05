// Reading a phase's log through its signed URL, as go-tfe's log reader does: no token, the query replaced by
// offset/limit, an empty 200 before any output, exact bytes from the offset, ETX last once the phase is terminal.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { claim, finish, setup } from "../do/runs.helpers";

async function newRun(workspaceId: string): Promise<string> {
  const res = await api("POST", "/runs", {
    body: { data: { type: "runs", relationships: { workspace: { data: { type: "workspaces", id: workspaceId } } } } },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** A read as go-tfe makes it: the log URL with its query replaced, no Authorization header. */
async function readAt(logUrl: string, offset: number, limit?: number) {
  const url = new URL(logUrl);
  url.search = limit === undefined ? `offset=${offset}` : `limit=${limit}&offset=${offset}`;
  const res = await exports.default.fetch(new Request(url.toString()));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("run logs", () => {
  it("reads a plan log by offset: empty before output, then the framed bytes, ETX last once finished", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    const logUrl = (await api("GET", `/runs/${runId}/plan`)).body.data.attributes["log-read-url"] as string;

    const before = await readAt(logUrl, 0, 1024);
    expect(before).toEqual({ status: 200, bytes: new Uint8Array() });

    const job = await claim(stub, runId, "plan");
    const line1 = new TextEncoder().encode("Terraform will perform the following actions:\n");
    const line2 = new TextEncoder().encode("Plan: 1 to add, 0 to change, 0 to destroy.\n");
    const a = await stub.appendLog({ runId, phase: "plan", claimId: job.claimId, offset: 0, bytes: line1, now: new Date().toISOString() });
    expect(a.ok).toBe(true);
    const b = await stub.appendLog({ runId, phase: "plan", claimId: job.claimId, offset: line1.length, bytes: line2, now: new Date().toISOString() });
    expect(b.ok).toBe(true);

    const first = await readAt(logUrl, 0, 1024);
    expect(first.status).toBe(200);
    expect(first.bytes[0]).toBe(0x02);
    expect(text(first.bytes.subarray(1))).toBe(`${text(line1)}${text(line2)}`);
    // The client advances by what it consumed; a small buffer reads in pieces.
    const piece = await readAt(logUrl, 1, 10);
    expect(text(piece.bytes)).toBe(text(line1).slice(0, 10));
    const rest = await readAt(logUrl, first.bytes.length, 1024);
    expect(rest.bytes.length).toBe(0);

    await finish(stub, job, "finished", { hasChanges: true, resourceAdditions: 1 });
    const tail = await readAt(logUrl, first.bytes.length);
    expect(tail.status).toBe(200);
    expect(tail.bytes[tail.bytes.length - 1]).toBe(0x03);
    expect((await api("GET", `/runs/${runId}/plan`)).body.data.attributes.status).toBe("finished");
    const whole = await readAt(logUrl, 0);
    expect(text(whole.bytes)).toContain("1 to add, 0 to change, 0 to destroy");
  });

  it("starts an apply log with the preamble Terraform skips", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    const planJob = await claim(stub, runId, "plan");
    await finish(stub, planJob, "finished", { hasChanges: true, resourceAdditions: 1 });
    expect((await api("POST", `/runs/${runId}/actions/apply`, { body: {} })).status).toBe(202);
    await claim(stub, runId, "apply");
    const logUrl = (await api("GET", `/runs/${runId}/apply`)).body.data.attributes["log-read-url"] as string;
    const got = await readAt(logUrl, 0);
    expect(got.bytes[0]).toBe(0x02);
    expect(text(got.bytes.subarray(1)).split("\n").length).toBeGreaterThanOrEqual(3);
  });

  it("refuses a URL whose signature does not match, or another phase's, and a bad offset", async () => {
    const { id } = await setup();
    const runId = await newRun(id);
    const logUrl = (await api("GET", `/runs/${runId}/plan`)).body.data.attributes["log-read-url"] as string;
    expect((await readAt(logUrl.replace("/plan/", "/apply/"), 0)).status).toBe(403);
    expect(
      (
        await readAt(
          logUrl.replace(/.$/, (ch) => (ch === "0" ? "1" : "0")),
          0,
        )
      ).status,
    ).toBe(403);
    const expired = logUrl.replace(/\/(\d+)\./, "/1000.");
    expect((await readAt(expired, 0)).status).toBe(403);
    const bad = await exports.default.fetch(new Request(`${logUrl}?offset=-1`));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: Array<{ source: unknown }> }).errors[0].source).toEqual({ parameter: "offset" });
  });
});
