/** @jsxImportSource hono/jsx */
/**
 * A pool's agents: each one's name, status (as the API shows it), last ping and the jobs it runs now, linked to their
 * run pages. An organisation's pool at `/app/:organization/agent-pools/:pool_id` (who may read the organisation, as
 * `GET /agent-pools/:id/agents`); the operator's default pool, which serves every organisation and belongs to none,
 * at `/app/admin/agents` (the site admin, as `GET /admin/agents`).
 */
import { Hono } from "hono";
import { poolAgentsPage } from "../../agents/agents.service";
import type { AppEnv } from "../../env";
import { callerOf, type Ctx } from "../context";
import { definePage } from "../define-page";
import { AgentsPage } from "./agents.view";

export const agentsUi = new Hono<AppEnv>();

async function show(c: Ctx, poolId: string | null, org: string | null) {
  const data = await poolAgentsPage(callerOf(c), poolId);
  return c.html(<AgentsPage principal={c.get("principal")} data={data} org={org} />);
}

definePage(agentsUi, "get", "/admin/agents", "site-admin", (c) => show(c, null, null));
definePage(agentsUi, "get", "/:organization/agent-pools/:pool_id", "organization.read", (c) => show(c, c.req.param("pool_id"), c.req.param("organization")));
