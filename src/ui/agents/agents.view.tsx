/** @jsxImportSource hono/jsx */
/**
 * The page of a pool's agents: each one's name, status (as the API shows it), last ping and the jobs it runs now, linked to their
 * run pages. An organisation's pool at `/app/:organization/agent-pools/:pool_id` (who may read the organisation, as
 * `GET /agent-pools/:id/agents`); the operator's default pool, which serves every organisation and belongs to none,
 * at `/app/admin/agents` (the site admin, as `GET /admin/agents`).
 */
import type { PoolAgents } from "../../agents/agents.service";
import { shownStatus } from "../../agents/agents.rules";
import type { Principal } from "../../auth/principal";
import { orgPath } from "../context";
import { Layout } from "../layout";
import { Table } from "../parts";
import { runPath } from "../runs/runs.view";

const when = (iso: string) => <time datetime={iso}>{iso.slice(0, 19).replace("T", " ")}</time>;

export function AgentsPage(props: { principal: Principal; data: PoolAgents; org: string | null }) {
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
