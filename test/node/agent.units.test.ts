// The agent's pure pieces: counts from a JSON plan and from apply output, HCL quoting, the log stream's ordering
// and chunking, and the archive and working-directory checks (the redactor's are in agent.redact.test.ts).
import { describe, expect, it } from "vitest";
import { AgentClient, ApiError, JobLostError } from "../../agent/client.ts";
import { LogStream } from "../../agent/log-stream.ts";
import { applyCounts, planCounts } from "../../agent/summary.ts";
import { unsafeEntry } from "../../agent/unpack.ts";
import { hclString, workingDirectory } from "../../agent/workdir.ts";

describe("planCounts", () => {
  it("has no changes when every change is a no-op", () => {
    expect(planCounts({ resource_changes: [{ change: { actions: ["no-op"] } }], output_changes: { o: { actions: ["no-op"] } } })).toEqual({
      hasChanges: false,
      resourceAdditions: 0,
      resourceChanges: 0,
      resourceDestructions: 0,
      resourceImports: 0,
    });
  });

  it("has changes when only an output changes, or a resource only moves", () => {
    expect(planCounts({ output_changes: { o: { actions: ["create"] } } }).hasChanges).toBe(true);
    expect(planCounts({ resource_changes: [{ change: { actions: ["no-op"] }, previous_address: "a.old" }] }).hasChanges).toBe(true);
  });

  it("counts a create-before-destroy replacement as one added and one destroyed", () => {
    expect(planCounts({ resource_changes: [{ change: { actions: ["create", "delete"] } }] })).toMatchObject({
      resourceAdditions: 1,
      resourceDestructions: 1,
      resourceChanges: 0,
    });
  });

  it("counts drift as a change only for a refresh-only plan", () => {
    const plan = { resource_drift: [{ change: { actions: ["update"] } }] };
    expect(planCounts(plan).hasChanges).toBe(false);
    expect(planCounts(plan, { refreshOnly: true }).hasChanges).toBe(true);
  });
});

describe("applyCounts", () => {
  it("reads the apply summary through colour codes", () => {
    expect(applyCounts("\u001b[0m\u001b[1m\u001b[32mApply complete! Resources: 3 added, 0 changed, 1 destroyed.\u001b[0m")).toEqual({
      resourceAdditions: 3,
      resourceChanges: 0,
      resourceDestructions: 1,
      resourceImports: 0,
    });
  });

  it("reads a destroy summary, and answers null without one", () => {
    expect(applyCounts("Destroy complete! Resources: 4 destroyed.")).toMatchObject({ resourceDestructions: 4, resourceAdditions: 0 });
    expect(applyCounts("Error: boom")).toBeNull();
  });
});

describe("hclString", () => {
  it("escapes quotes, backslashes, control characters and template sequences", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${` that must stay literal in the var file
    expect(hclString('a "b" \\ c\n\t${x} %{y} $z \u0001')).toBe('"a \\"b\\" \\\\ c\\n\\t$${x} %%{y} $z \\u0001"');
  });
});

describe("workingDirectory", () => {
  it("normalises a relative path and refuses one that leaves the configuration", () => {
    expect(workingDirectory("")).toBe("");
    expect(workingDirectory("./envs//prod/")).toBe("envs/prod");
    expect(workingDirectory("envs/../../x")).toBeNull();
    expect(workingDirectory("/etc")).toBeNull();
  });
});

describe("unsafeEntry", () => {
  it("allows paths and links inside the directory", () => {
    expect(unsafeEntry("a/b.tf", "File", undefined)).toBeNull();
    expect(unsafeEntry("a/link.tf", "SymbolicLink", "../b.tf")).toBeNull();
    expect(unsafeEntry("a/hard.tf", "Link", "b.tf")).toBeNull();
  });

  it("refuses absolute and parent paths, and links that leave", () => {
    expect(unsafeEntry("/etc/passwd", "File", undefined)).toMatch(/outside/);
    expect(unsafeEntry("a/../../b", "File", undefined)).toMatch(/outside/);
    expect(unsafeEntry("C:\\x", "File", undefined)).toMatch(/outside/);
    expect(unsafeEntry("l", "SymbolicLink", "/etc/passwd")).toMatch(/links to/);
    expect(unsafeEntry("a/l", "SymbolicLink", "../../x")).toMatch(/links to/);
    expect(unsafeEntry("h", "Link", "../x")).toMatch(/links to/);
  });
});

describe("LogStream", () => {
  it("sends every byte in order at consecutive offsets, flushing once a chunk's worth is pending", async () => {
    const got: { offset: number; bytes: string }[] = [];
    let release: () => void = () => {};
    const stream = new LogStream({
      chunkBytes: 4,
      flushMs: 60_000,
      append: async (offset, bytes) => {
        got.push({ offset, bytes: Buffer.from(bytes).toString() });
        // The first request stays out while more is written.
        if (got.length === 1) await new Promise<void>((r) => (release = r));
        return { size: offset + bytes.length, signal: null };
      },
    });
    stream.write("abcd");
    stream.write("ef");
    stream.write("gh");
    release();
    await stream.close();
    expect(got).toEqual([
      { offset: 0, bytes: "abcd" },
      { offset: 4, bytes: "efgh" },
    ]);
    expect(stream.offset).toBe(8);
  });

  it("reports the signal each append answers, and stops after a failure", async () => {
    const signals: unknown[] = [];
    const errors: unknown[] = [];
    let calls = 0;
    const stream = new LogStream({
      flushMs: 60_000,
      append: async (offset, bytes) => {
        calls++;
        if (calls === 2) throw new Error("gone");
        return { size: offset + bytes.length, signal: "cancel" };
      },
      onSignal: (s) => signals.push(s),
      onError: (e) => errors.push(e),
    });
    stream.write("one");
    await stream.flush();
    stream.write("two");
    await stream.flush();
    stream.write("three");
    await stream.close();
    expect(signals).toEqual(["cancel"]);
    expect(errors).toHaveLength(1);
    expect(calls).toBe(2);
  });
});

describe("AgentClient", () => {
  function fake(statuses: number[]) {
    const seen: string[] = [];
    const fetchFn = (async (url: string, init: RequestInit) => {
      seen.push(`${init.method} ${new URL(url).pathname}`);
      const status = statuses.shift() ?? 200;
      return new Response(
        status === 204 ? null : JSON.stringify(status < 300 ? { signal: null, size: 3 } : { errors: [{ status: String(status), title: "nope" }] }),
        { status },
      );
    }) as unknown as typeof fetch;
    return { seen, client: new AgentClient({ url: "http://svc/", token: "t", fetch: fetchFn, retryDelayMs: 0 }) };
  }
  const j = { run: "run-1", phase: "plan" as const, token: "rt" };

  it("retries an idempotent call after a 5xx", async () => {
    const { seen, client } = fake([503, 502, 200]);
    await expect(client.job(j).heartbeat()).resolves.toEqual({ signal: null, size: 3 });
    expect(seen).toEqual(Array(3).fill("POST /api/agent/jobs/run-1/plan/heartbeat"));
  });

  it("never retries jobs/next, which may have claimed a job", async () => {
    const { seen, client } = fake([503, 200]);
    await expect(client.nextJob("agent-1")).rejects.toBeInstanceOf(ApiError);
    expect(seen).toHaveLength(1);
  });

  it("turns a 409 about a job into JobLostError at once", async () => {
    const { seen, client } = fake([409]);
    await expect(client.job(j).appendLog(0, new Uint8Array([1]))).rejects.toBeInstanceOf(JobLostError);
    expect(seen).toHaveLength(1);
  });

  it("sends an artifact larger than a part in parts of one upload, each retried on its own, the last one final", async () => {
    const sent: { query: string; length: number }[] = [];
    const statuses = [204, 503, 204, 204];
    const fetchFn = (async (url: string, init: RequestInit) => {
      const u = new URL(url);
      sent.push({ query: u.search, length: (init.body as Uint8Array).byteLength });
      return new Response(null, { status: statuses.shift() ?? 204 });
    }) as unknown as typeof fetch;
    const client = new AgentClient({ url: "http://svc/", token: "t", fetch: fetchFn, retryDelayMs: 0 });
    await client.job(j).putArtifact("plan-json", new Uint8Array(25), 10);
    const upload = new URLSearchParams(sent[0].query).get("upload");
    expect(upload).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent).toEqual([
      { query: `?upload=${upload}&offset=0&final=0`, length: 10 },
      { query: `?upload=${upload}&offset=10&final=0`, length: 10 },
      { query: `?upload=${upload}&offset=10&final=0`, length: 10 },
      { query: `?upload=${upload}&offset=20&final=1`, length: 5 },
    ]);
    // One that fits a part goes whole, as before.
    sent.length = 0;
    await client.job(j).putArtifact("plan-json", new Uint8Array(10), 10);
    expect(sent).toEqual([{ query: "", length: 10 }]);
  });

  it("does not retry other 4xx answers", async () => {
    const { seen, client } = fake([422, 200]);
    await expect(
      client.job(j).finish({ status: "finished", hasChanges: false, resourceAdditions: 0, resourceChanges: 0, resourceDestructions: 0, resourceImports: 0 }),
    ).rejects.toThrow("422 nope");
    expect(seen).toHaveLength(1);
  });
});
