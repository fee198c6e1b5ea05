/** @jsxImportSource hono/jsx */
/** The organisation's audit trail for its owners: newest first, one compact block per event (readable at 390 px). */
import type { OrgAccess } from "../../auth/access";
import type { AuditEvent } from "../../audit/audit.rules";
import { OrgFrame, orgPage } from "../organizations/organizations.parts";
import { Pager } from "../parts";

/** An event's meta as `key: value` pairs (names, keys, categories and ids only: events never hold a value or secret). */
const metaText = (meta: AuditEvent["resource"]["meta"]) =>
  meta
    ? Object.entries(meta)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(", ")
    : "";

export function AuditTrailPage(props: {
  access: OrgAccess;
  events: AuditEvent[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
}) {
  const org = props.access.organization.name;
  return (
    <OrgFrame access={props.access} current="settings" title="Audit trail" crumbs={<a href={orgPage(org, "settings")}>Settings</a>}>
      <p>
        Every change to the organisation's workspaces, locks, variables, variable sets, teams, team access, tokens, runs and state versions, and every sign-in
        of its members, newest first. The organisation's data retention policy prunes older events. Integrations read it from{" "}
        <code>GET /api/v2/organization/audit-trail</code> with the organisation's audit-trails token.
      </p>
      {props.events.length === 0 ? (
        <p>No events recorded.</p>
      ) : (
        <ol class="audit-events">
          {props.events.map((e) => (
            <li>
              <div>
                <strong>
                  {e.resource.type} {e.resource.action}
                </strong>{" "}
                <code>{e.resource.id}</code>
              </div>
              <div>
                by {e.auth.description} <time datetime={e.timestamp}>{e.timestamp.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time>
              </div>
              {e.resource.meta ? <div class="muted">{metaText(e.resource.meta)}</div> : null}
            </li>
          ))}
        </ol>
      )}
      <Pager page={props.page} total={props.total} query={props.query} />
    </OrgFrame>
  );
}
