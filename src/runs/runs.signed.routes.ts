/**
 * The signed URLs of run logs and plan artifacts (outside /api/v2: no token, raw bodies; ./runs.urls.ts signs them).
 * go-tfe's log reader asks for `offset`/`limit` and advances by the bytes it got, so a read answers exactly the bytes
 * from `offset`, and an empty 200 while there are none yet (a 404 would end the client's stream).
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { signedArtifact, signedLogRead } from "./runs.service";
import { LIMITS } from "../limits";
import { type SignedArtifact, verifyArtifactUrl, verifyLogUrl } from "./runs.urls";
import type { Phase } from "./runs.types";

export const runLogs = new Hono<AppEnv>();

const WS = /^ws-[A-Za-z0-9]{1,64}$/;
const RUN = /^run-[A-Za-z0-9]{1,64}$/;
const SIGNED_KINDS: ReadonlySet<string> = new Set<SignedArtifact>(["plan-json", "plan-json-redacted", "errored-state"]);
const badSignature = () => ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });

/** A query integer: absent → `fallback`; anything but digits is a 400 naming the parameter. */
function intQuery(c: Context<AppEnv>, name: string, fallback: number): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,15}$/.test(raw)) throw ApiError.of("bad_request", { detail: `${name} must be a non-negative integer`, parameter: name });
  return Number(raw);
}

runLogs.get("/_logs/:ws/:run/:phase/:token", async (c) => {
  const { ws, run, phase, token } = c.req.param();
  if (!WS.test(ws) || !RUN.test(run) || (phase !== "plan" && phase !== "apply")) throw ApiError.of("not_found");
  if (!(await verifyLogUrl(c.env, ws, run, phase as Phase, token))) throw badSignature();
  const offset = intQuery(c, "offset", 0);
  const limit = Math.min(Math.max(intQuery(c, "limit", LIMITS.runLogReadMax), 1), LIMITS.runLogReadMax);
  const bytes = await signedLogRead(c.env, ws, run, phase as Phase, offset, limit);
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
});

runLogs.get("/_artifacts/:ws/:run/:kind/:token", async (c) => {
  const { ws, run, kind, token } = c.req.param();
  if (!WS.test(ws) || !RUN.test(run) || !SIGNED_KINDS.has(kind)) throw ApiError.of("not_found");
  if (!(await verifyArtifactUrl(c.env, ws, run, kind as SignedArtifact, token))) throw badSignature();
  // Streamed a few MiB per call from the workspace's object: a JSON plan may be hundreds of MiB.
  const res = await signedArtifact(c.env, ws, run, kind as SignedArtifact);
  res.headers.set("Cache-Control", "no-store");
  return res;
});
