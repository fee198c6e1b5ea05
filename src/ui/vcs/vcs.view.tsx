/** @jsxImportSource hono/jsx */
/**
 * A workspace's version control: the repository it runs from, the hook delivering its events and the latest
 * deliveries, and the form that connects, changes or disconnects it. Plain data in, HTML out (vcs.routes.tsx).
 */
import type { Principal } from "../../auth/principal";
import type { VcsRepo } from "../../workspaces/workspace.fields";
import type { Delivery } from "../../vcs/vcs.d1";
import { wsPath } from "../context";
import { Check, Input, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Submit, Table, type WorkspaceName } from "../parts";

export interface TokenChoice {
  id: string;
  label: string;
}

export interface VcsSettings {
  repo: VcsRepo | null;
  workingDirectory: string | null;
  fileTriggersEnabled: boolean;
  triggerPatterns: string[];
  triggerPrefixes: string[];
  speculativeEnabled: boolean;
  queueAllRuns: boolean;
}

export const vcsPath = (ws: WorkspaceName) => `${wsPath(ws.organization, ws.name)}/version-control`;

export function VcsPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  settings: VcsSettings;
  hook: { registeredAt: string } | null;
  deliveries: Delivery[];
  tokens: TokenChoice[];
  canWrite: boolean;
  refusal?: Refusal;
}) {
  const { ws, settings: s } = props;
  const sent = sentOf(props.refusal, "connect");
  const v = (k: string, current: string) => sent?.[k] ?? current;
  return (
    <Layout title={`Version control · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Version control" />
      <h1>Version control of {ws.name}</h1>
      {s.repo ? (
        <section aria-labelledby="connection-h">
          <h2 id="connection-h">Connection</h2>
          <dl id="connection">
            <dt>Repository</dt>
            <dd>
              <code>{s.repo.identifier}</code>
            </dd>
            <dt>Branch</dt>
            <dd>{s.repo.branch || <span class="muted">the default branch</span>}</dd>
            <dt>Runs on</dt>
            <dd>{s.repo["tags-regex"] ? `tags matching ${s.repo["tags-regex"]}` : "pushes to the branch"}</dd>
            <dt>Webhook</dt>
            <dd id="hook-state">{props.hook ? `registered ${props.hook.registeredAt}` : "not registered yet: the service keeps trying (its log says why)"}</dd>
          </dl>
          {props.canWrite ? (
            <form method="post" action={`${vcsPath(ws)}/disconnect`}>
              <Submit text="Disconnect the repository" />
            </form>
          ) : null}
        </section>
      ) : (
        <p class="muted">This workspace is not connected to a repository: runs start from the CLI or the API.</p>
      )}
      {s.repo ? (
        <section aria-labelledby="deliveries-h">
          <h2 id="deliveries-h">Recent deliveries</h2>
          {props.deliveries.length ? (
            <Table id="deliveries" columns={["Received", "Event", "Commit", "Outcome"]}>
              {props.deliveries.map((d) => (
                <tr data-delivery={d.deliveryId}>
                  <td>{d.receivedAt}</td>
                  <td>
                    {d.event}
                    {d.action ? ` (${d.action})` : ""}
                  </td>
                  <td>{d.sha ? <code>{d.sha.slice(0, 8)}</code> : ""}</td>
                  <td>{d.outcome}</td>
                </tr>
              ))}
            </Table>
          ) : (
            <p class="muted">No delivery yet.</p>
          )}
        </section>
      ) : null}
      {props.canWrite ? (
        <section aria-labelledby="connect-h">
          <h2 id="connect-h">{s.repo ? "Change the connection" : "Connect to a repository"}</h2>
          <Refused refusal={props.refusal} form="connect" what="The connection was not saved:" />
          {props.tokens.length ? (
            <form class="settings" method="post" action={vcsPath(ws)}>
              <div>
                <label for="vcs-token">VCS connection</label>
                <select id="vcs-token" name="oauth-token-id">
                  {props.tokens.map((t) => (
                    <option value={t.id} selected={v("oauth-token-id", s.repo?.["oauth-token-id"] ?? "") === t.id}>
                      {t.label}
                    </option>
                  ))}
                </select>
              </div>
              <Input id="vcs-identifier" name="identifier" label="Repository (owner/name)" value={v("identifier", s.repo?.identifier ?? "")} />
              <Input id="vcs-branch" name="branch" label="Branch (empty: the default branch)" value={v("branch", s.repo?.branch ?? "")} />
              <Input id="vcs-wd" name="working-directory" label="Working directory" value={v("working-directory", s.workingDirectory ?? "")} />
              <Input
                id="vcs-patterns"
                name="trigger-patterns"
                label="Trigger patterns (one glob per line or comma)"
                value={v("trigger-patterns", s.triggerPatterns.join(", "))}
                wide
              />
              <Input
                id="vcs-prefixes"
                name="trigger-prefixes"
                label="Trigger prefixes (comma separated)"
                value={v("trigger-prefixes", s.triggerPrefixes.join(", "))}
                wide
              />
              <Input
                id="vcs-tags"
                name="tags-regex"
                label="Run on tags matching (a regular expression; empty: pushes to the branch)"
                value={v("tags-regex", s.repo?.["tags-regex"] ?? "")}
                wide
              />
              <input type="hidden" name="options" value="1" />
              <Check
                id="vcs-file-triggers"
                name="file-triggers-enabled"
                label="Run only when watched files change"
                checked={(sent?.["file-triggers-enabled"] ?? String(s.fileTriggersEnabled)) === "true"}
              />
              <Check
                id="vcs-speculative"
                name="speculative-enabled"
                label="Plan pull requests"
                checked={(sent?.["speculative-enabled"] ?? String(s.speculativeEnabled)) === "true"}
              />
              <Check
                id="vcs-queue-all"
                name="queue-all-runs"
                label="Run pushes before a first run is queued"
                checked={(sent?.["queue-all-runs"] ?? String(s.queueAllRuns)) === "true"}
              />
              <Submit text={s.repo ? "Save the connection" : "Connect"} />
            </form>
          ) : (
            <p class="muted">The organisation has no VCS connection yet: an owner adds one (an OAuth client with its token) first.</p>
          )}
        </section>
      ) : null}
    </Layout>
  );
}
