/**
 * The web UI's routes against the requirement table's actions (src/auth/requirements.ts), as
 * ROUTE_REQUIREMENTS does for the API. `null`: served without a session (sign-in, the stylesheet).
 * The UI router answers 500 rather than a page when a route's declared action was never authorised,
 * and test/ui.test.ts checks every served /app route has a row.
 */
import type { Action } from "../auth/requirements";

export const UI_ROUTE_REQUIREMENTS: Record<string, Action | null> = {
  "GET /app/ui.css": null,
  "GET /app/session/new": null,
  "POST /app/session": null,
  "POST /app/session/delete": null,
  "GET /app": "authenticated",
  "GET /app/:organization/workspaces": "organization.read",
  "GET /app/:organization/projects": "organization.read",
  "GET /app/:organization/workspaces/:name": "workspace.read",
  "POST /app/:organization/workspaces/:name/settings": "workspace.update",
  "POST /app/:organization/workspaces/:name/lock": "workspace.lock",
  "POST /app/:organization/workspaces/:name/unlock": "workspace.lock",
  "POST /app/:organization/workspaces/:name/force-unlock": "workspace.force-unlock",
  "POST /app/:organization/workspaces/:name/safe-delete": "workspace.delete",
  // As POST and DELETE /workspaces/:id/relationships/remote-state-consumers.
  "POST /app/:organization/workspaces/:name/consumers": "workspace.update",
  "POST /app/:organization/workspaces/:name/consumers/delete": "workspace.update",
  // As POST, PATCH and DELETE /team-workspaces.
  "POST /app/:organization/workspaces/:name/team-access": "workspace.update",
  "POST /app/:organization/workspaces/:name/team-access/:id": "workspace.update",
  "POST /app/:organization/workspaces/:name/team-access/:id/delete": "workspace.update",
};
