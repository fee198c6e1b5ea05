/** @jsxImportSource hono/jsx */
/**
 * A pool's agents: each one's name, status (as the API shows it), last ping and the jobs it runs now, linked to their
 * run pages. An organisation's pool at `/app/:organization/agent-pools/:pool_id` (who may read the organisation, as
 * `GET /agent-pools/:id/agents`); the operator's default pool, which serves every organisation and belongs to none,
 * at `/app/admin/agents` (the site admin, as `GET /admin/agents`).
 */
import { Hono } from "hono";
import type { Principal } from "../auth/principal";
import type { PoolAgents } from "../agents/agents.service";
import { poolAgentsPage } from "../agents/agents.service";
import { shownStatus } from "../agents/agents.rules";
import type { AppEnv } from "../env";
import { callerOf, type Ctx, orgPath } from "./ui.context";
import { Layout } from "./ui.layout";
import { Table } from "./ui.parts";
import { page } from "./ui.requirements";
import { runPath } from "./ui.run-page";

export const agentsUi = new Hono<AppEnv>();

const when = (iso: string) => <time datetime={iso}>{iso.slice(0, 19).replace("T", " ")}</time>;

function AgentsPage(props: { principal: Principal; data: PoolAgents; org: string | null }) {
  const { pool, agents, jobs } = props.data;
  const now = Date.now();
  return (
    <Layout title={`${pool.name}: agents`} principal={props.principal} refreshSeconds={15}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> /{" "}
        {props.org ? (
          <>
            <a href={orgPath(props.org, "workspaces")}>{props.org}</a> / Agent pools /{" "}
          </>
        ) : (
          "Site administration / "
        )}
        {pool.name}
      </nav>
      <h1>{pool.name}</h1>
      <p class="muted">
        {pool.id === null
          ? "The operator's agents: they run the remote runs of every organisation's workspaces in remote execution mode."
          : `Agents of the pool ${pool.id}: they run the workspaces in agent execution mode that use it.`}{" "}
        An agent silent for a day is no longer listed.
      </p>
      {agents.length === 0 ? (
        <p id="no-agents">No agent is connected to this pool.</p>
      ) : (
        <Table id="agents" columns={["Name", "Status", "Last ping", "Current jobs"]} optional={["Version", "Address"]}>
          {agents.map((a) => {
            const held = jobs.filter((j) => j.agentId === a.id);
            return (
              <tr id={a.id}>
                <td>{a.name}</td>
                <td>{shownStatus(a.status, a.lastPingAt, now)}</td>
                <td>{when(a.lastPingAt)}</td>
                <td>
                  {held.length === 0 ? (
                    <span class="muted">none</span>
                  ) : (
                    held.map((j) => (
                      <div>
                        {j.organizationName && j.workspaceName ? (
                          <a href={runPath(j.organizationName, j.workspaceName, j.runId)}>{`${j.runId} (${j.phase})`}</a>
                        ) : (
                          `${j.runId} (${j.phase})`
                        )}{" "}
                        <span class="muted">since {when(j.claimedAt)}</span>
                      </div>
                    ))
                  )}
                </td>
                <td class="opt">{a.version ?? ""}</td>
                <td class="opt">{a.ipAddress ?? ""}</td>
              </tr>
            );
          })}
        </Table>
      )}
    </Layout>
  );
}

async function show(c: Ctx, poolId: string | null, org: string | null) {
  const data = await poolAgentsPage(callerOf(c), poolId);
  return c.html(<AgentsPage principal={c.get("principal")} data={data} org={org} />);
}

page(agentsUi, "get", "/admin/agents", "site-admin", (c) => show(c, null, null));
page(agentsUi, "get", "/:organization/agent-pools/:pool_id", "organization.read", (c) => show(c, c.req.param("pool_id"), c.req.param("organization")));
