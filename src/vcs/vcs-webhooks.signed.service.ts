/**
 * A VCS host's delivery to one of our hooks: its signature checked on the raw bytes before anything is parsed, its
 * delivery id recorded once (a redelivery or replay does nothing), then handed to the object of every workspace
 * connected to the hook's repository, which does the work from its alarm. The answer never waits on a run or on the
 * host: GitHub counts a delivery not answered within 10 s as failed.
 */
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import { openValue } from "../variables/variables.crypto";
import { workspaceObject } from "../workspaces/workspace.stub";
import { connectionOf, parseDelivery, verifyDelivery } from "./vcs.connection";
import { connectedWorkspaceIds, findHook, recordDelivery, setDeliveryOutcome } from "./vcs.d1";

export type DeliveryAnswer = { status: 200 | 202; outcome: string };

export async function receiveDelivery(env: Bindings, hookId: string, headers: Headers, body: Uint8Array, origin: string): Promise<DeliveryAnswer> {
  const db = env.DB.withSession("first-primary");
  const hook = await findHook(db, hookId);
  // A hook removed here (its last workspace disconnected) refuses what the host still sends.
  if (!hook) throw ApiError.of("not_found");
  const connected = await connectionOf(env, hook.oauthTokenId);
  if (!connected) throw ApiError.of("not_found");
  const secret = await openValue(env, hook.id, hook.secretSealed);
  if (!(await verifyDelivery(connected.connection.kind, headers, body, secret))) {
    throw ApiError.of("unauthorized", { detail: "The delivery is not signed with this hook's secret" });
  }
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw ApiError.of("malformed_body");
  }
  const parsed = await parseDelivery(connected.connection.kind, headers, payload, body);
  const event = parsed.event && parsed.event.repo.toLowerCase() === hook.repo ? parsed.event : null;
  const ignored = parsed.event && !event ? "a repository this hook does not serve" : parsed.ignored;
  const fresh = await recordDelivery(db, {
    hookId: hook.id,
    deliveryId: parsed.deliveryId,
    organizationId: hook.organizationId,
    event: parsed.eventName,
    action: event?.action ?? null,
    repo: event?.repo ?? null,
    sha: event?.sha ?? null,
    receivedAt: nowIso(),
    workspaces: 0,
    outcome: event ? "received" : `ignored: ${ignored ?? "nothing to do"}`,
  });
  if (!fresh) return { status: 200, outcome: "duplicate delivery" };
  if (!event) return { status: 200, outcome: `ignored: ${ignored ?? "nothing to do"}` };
  const ids = await connectedWorkspaceIds(db, hook.oauthTokenId, hook.repo);
  const handed = await Promise.allSettled(
    ids.map((id) => workspaceObject(env, id).vcsDelivery({ deliveryId: parsed.deliveryId, event, origin, receivedAt: nowIso() })),
  );
  const taken = handed.filter((h) => h.status === "fulfilled" && h.value.ok).length;
  const outcome = ids.length === 0 ? "no workspace is connected" : `handed to ${taken} of ${ids.length} workspaces`;
  await setDeliveryOutcome(db, hook.id, parsed.deliveryId, taken, outcome);
  return { status: 202, outcome };
}
