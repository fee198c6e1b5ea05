// Early answers to large bodies, over real sockets against `npm start` (workerd serving the built Worker): the client
// must receive the whole answer, and the connection must then serve the next request or close with a FIN, never a
// reset. workerd closes a connection whose request body is left unread, so without the Worker reading the rest the
// client's upload meets a reset (EPIPE/ECONNRESET) and, in a race, loses the answer too; go-tfe then reports a
// network error instead of the 413. Each case repeats so that race shows.
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService } from "../../scripts/lib/service.mjs";

const RUNS = 10;
const MiB = 1024 * 1024;

type Service = { base: string; port: number; token: string; stop: () => Promise<void> };
let svc: Service;
let logDir: string;
let workspaceId: string;

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), "oversize-body-"));
  svc = await startService({ root: join(import.meta.dirname, "..", ".."), logFile: join(logDir, "service.log") });
  const headers = { Authorization: `Bearer ${svc.token}`, "Content-Type": "application/vnd.api+json" };
  const org = await fetch(`${svc.base}/api/v2/organizations`, {
    method: "POST",
    headers,
    body: JSON.stringify({ data: { type: "organizations", attributes: { name: "bodies", email: "bodies@example.com" } } }),
  });
  expect(org.status).toBe(201);
  const ws = await fetch(`${svc.base}/api/v2/organizations/bodies/workspaces`, {
    method: "POST",
    headers,
    body: JSON.stringify({ data: { type: "workspaces", attributes: { name: "big-bodies" } } }),
  });
  expect(ws.status).toBe(201);
  workspaceId = ((await ws.json()) as { data: { id: string } }).data.id;
}, 180_000);

afterAll(async () => {
  await svc?.stop();
  if (logDir) rmSync(logDir, { recursive: true, force: true });
}, 30_000);

type Response = { status: number; headers: Record<string, string>; body: string };
type Outcome = {
  first: Response | null;
  /** The answer to GET /api/v2/ping sent on the same connection, or "fin" when the server closed it cleanly first. */
  next: Response | "fin" | null;
  error: string | null;
};

/** Parses every complete HTTP/1.1 response (Content-Length framed) at the start of `buf`. */
function parseResponses(buf: Buffer): { responses: Response[]; rest: Buffer } {
  const responses: Response[] = [];
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) break;
    const [statusLine, ...lines] = buf.subarray(0, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(":");
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers["content-length"] ?? "0");
    if (buf.length < end + 4 + length) break;
    responses.push({ status: Number(statusLine.split(" ")[1]), headers, body: buf.subarray(end + 4, end + 4 + length).toString("utf8") });
    buf = buf.subarray(end + 4 + length);
  }
  return { responses, rest: buf };
}

/**
 * Sends `method path` (PATCH unless given) with a body of `size` bytes (Content-Length, or chunked), writing as fast
 * as the socket takes it; once the body is written and the answer read, sends GET /api/v2/ping on the same
 * connection. A FIN from the server while the body is still going out does not stop the upload: a server that closed
 * without reading resets the rest, one that only half-closed reads it.
 */
function exchange(opts: { method?: string; path: string; size: number; chunked: boolean; token: string | null; type?: string }): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { first: null, next: null, error: null };
    const socket = connect({ port: svc.port, host: "127.0.0.1", allowHalfOpen: true });
    let received: Buffer = Buffer.alloc(0);
    let bodyWritten = false;
    let fin = false;
    let pingSent = false;
    const maybePing = () => {
      if (pingSent || !bodyWritten || !out.first || out.next) return;
      pingSent = true;
      socket.write(`GET /api/v2/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${svc.token}\r\n\r\n`);
    };
    socket.on("data", (d) => {
      const parsed = parseResponses(Buffer.concat([received, d]));
      received = parsed.rest;
      for (const r of parsed.responses) {
        if (!out.first) out.first = r;
        else if (!out.next) out.next = r;
      }
      if (out.next) socket.destroy();
      else maybePing();
    });
    socket.on("end", () => {
      fin = true;
      if (!out.next) out.next = "fin";
      if (bodyWritten) socket.end();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      out.error ??= e.code ?? e.message;
    });
    socket.on("close", () => resolve(out));
    socket.on("connect", () => {
      const auth = opts.token ? `Authorization: Bearer ${opts.token}\r\n` : "";
      const framing = opts.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${opts.size}`;
      const type = opts.type ?? "application/vnd.api+json";
      socket.write(`${opts.method ?? "PATCH"} ${opts.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: ${type}\r\n${framing}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < opts.size) {
          if (socket.destroyed) return;
          const n = Math.min(piece.length, opts.size - sent);
          sent += n;
          const bytes = opts.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from("\r\n")]) : piece.subarray(0, n);
          if (!socket.write(bytes)) return void socket.once("drain", pump);
        }
        if (opts.chunked) socket.write("0\r\n\r\n");
        bodyWritten = true;
        if (fin) socket.end();
        else maybePing();
      };
      pump();
    });
  });
}

function expectError(outcome: Outcome, status: number, title: string) {
  // No reset or broken pipe, on the upload or after it.
  expect(outcome.error).toBeNull();
  expect(outcome.first?.status).toBe(status);
  expect(outcome.first?.headers["content-type"]).toBe("application/vnd.api+json");
  const doc = JSON.parse(outcome.first?.body ?? "");
  expect(doc.errors[0]).toMatchObject({ status: String(status), title });
  // The connection serves the next request, or was closed cleanly.
  if (outcome.next !== "fin") expect(outcome.next?.status).toBe(204);
}

describe("a body the service answers before reading it", () => {
  for (const chunked of [false, true]) {
    it(`10 MiB PATCH /workspaces/:id (${chunked ? "chunked" : "Content-Length"}) gets the JSON:API 413 on a usable connection`, async () => {
      for (let i = 0; i < RUNS; i++) {
        const outcome = await exchange({ path: `/api/v2/workspaces/${workspaceId}`, size: 10 * MiB, chunked, token: svc.token });
        expectError(outcome, 413, "payload too large");
        expect(JSON.parse(outcome.first?.body ?? "").errors[0].detail).toContain(`limited to ${MiB} bytes`);
      }
      // The workspace is unchanged and still served.
      const ws = await fetch(`${svc.base}/api/v2/workspaces/${workspaceId}`, { headers: { Authorization: `Bearer ${svc.token}` } });
      expect(ws.status).toBe(200);
      expect(((await ws.json()) as { data: { attributes: { name: string } } }).data.attributes.name).toBe("big-bodies");
    }, 60_000);
  }

  for (const chunked of [false, true]) {
    it(`a state upload past 128 MiB through the signed URL (${chunked ? "chunked" : "Content-Length"}) gets the 413`, async () => {
      const headers = { Authorization: `Bearer ${svc.token}`, "Content-Type": "application/vnd.api+json" };
      const ws = await fetch(`${svc.base}/api/v2/organizations/bodies/workspaces`, {
        method: "POST",
        headers,
        body: JSON.stringify({ data: { type: "workspaces", attributes: { name: `big-state-${chunked ? "chunked" : "length"}` } } }),
      });
      const id = ((await ws.json()) as { data: { id: string } }).data.id;
      expect((await fetch(`${svc.base}/api/v2/workspaces/${id}/actions/lock`, { method: "POST", headers })).status).toBe(200);
      const sv = await fetch(`${svc.base}/api/v2/workspaces/${id}/state-versions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ data: { type: "state-versions", attributes: { serial: 1, lineage: "big", md5: "d41d8cd98f00b204e9800998ecf8427e" } } }),
      });
      expect(sv.status).toBe(201);
      const url = new URL(((await sv.json()) as { data: { attributes: Record<string, string> } }).data.attributes["hosted-state-upload-url"]);
      // Fewer runs chunked: each stages 128 MiB in the workspace's object before the overflow shows.
      for (let i = 0; i < (chunked ? 1 : 3); i++) {
        const path = url.pathname + url.search;
        const outcome = await exchange({ method: "PUT", path, size: 129 * MiB, chunked, token: null, type: "application/octet-stream" });
        expectError(outcome, 413, "payload too large");
        expect(JSON.parse(outcome.first?.body ?? "").errors[0].detail).toContain(`limited to ${128 * MiB} bytes`);
      }
    }, 180_000);
  }

  it("a 512 KiB PATCH without a token gets the 401 on a usable connection", async () => {
    for (let i = 0; i < RUNS; i++) {
      expectError(await exchange({ path: `/api/v2/workspaces/${workspaceId}`, size: 512 * 1024, chunked: false, token: null }), 401, "unauthorized");
    }
  }, 60_000);
});
