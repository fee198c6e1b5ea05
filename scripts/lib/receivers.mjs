// Receivers for the harnesses (scripts/go-tfe.mjs): an HTTP endpoint that answers 200 to every request, as a
// notification destination verified by the service answers, and an SMTP sink that accepts every message, as the relay
// e-mail notifications go through. Both listen on 127.0.0.1 at a free port and never keep the process alive.
import { createServer } from "node:http";
import { SMTPServer } from "smtp-server";
import { listen } from "./harness.mjs";

/**
 * `server` listening on a free loopback port, keeping no process alive: its port and close().
 * @param {import("node:net").Server} server
 */
async function serve(server) {
  const port = await listen(server);
  server.unref();
  return { port, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

/** Resolves with `{ url, requests, close }`; `requests` counts what it answered. */
export async function startWebhookReceiver() {
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      state.requests++;
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  const { port, close } = await serve(server);
  return { url: `http://127.0.0.1:${port}/`, state, close };
}

/** Resolves with `{ url, messages, close }`: an SMTP relay without authentication or TLS that keeps nothing but a count. */
export async function startSmtpSink() {
  const state = { messages: 0 };
  const smtp = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream, _session, callback) {
      stream.resume();
      stream.on("end", () => {
        state.messages++;
        callback();
      });
    },
  });
  const { port } = await serve(smtp.server);
  return { url: `smtp://127.0.0.1:${port}`, state, close: () => new Promise((r) => smtp.close(() => r(undefined))) };
}

/**
 * Resolves with `{ url, state, close }`: a run task integration (HCP Terraform API docs: Run Tasks Integration). It
 * answers every request 200, as a real integration does (the verification sent on create included); for a run's
 * request it then calls back with `state.verdict` ({ status, message }), authenticated with the request's access token.
 */
export async function startRunTaskReceiver() {
  const state = { requests: [], verdict: { status: "passed", message: "all good" } };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      let payload = null;
      try {
        payload = JSON.parse(body);
      } catch {
        return;
      }
      state.requests.push({ payload, signature: req.headers["x-tfc-task-signature"] ?? null });
      if (payload.stage === "test" || !payload.task_result_callback_url) return;
      const { status, message } = state.verdict;
      setTimeout(() => {
        fetch(payload.task_result_callback_url, {
          method: "PATCH",
          headers: { Authorization: `Bearer ${payload.access_token}`, "Content-Type": "application/vnd.api+json" },
          body: JSON.stringify({ data: { type: "task-results", attributes: { status, message } } }),
        }).then(
          (r) => state.requests.push({ callback: r.status }),
          (e) => state.requests.push({ callback: String(e) }),
        );
      }, 500);
    });
  });
  const { port, close } = await serve(server);
  return { url: `http://127.0.0.1:${port}/`, state, close };
}
