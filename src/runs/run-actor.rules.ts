/** Who a request acts as on a workspace's runs, and whether it may apply them (auto-apply needs the creator to). */
import type { Principal } from "../auth/principal";
import { allows } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Readable } from "../workspaces/workspaces.service";
import type { Actor, RunActor } from "./runs.types";

/** The user a request acts as (a team or organisation token acts as its service user; a run's own token as nobody). */
export function actorOf(p: Principal): Actor | null {
  if (p.kind === "run") return null;
  return { type: "users", id: p.kind === "user" ? p.userId : p.serviceUserId };
}

/** The caller as the creator or confirmer of a run on the workspace it was authorised on. */
export function runActor(caller: Caller, r: Readable): RunActor {
  return { actor: actorOf(caller.principal), canApply: allows(caller.principal, "runs.apply", { access: r.scope.access, caps: r.caps }) };
}
