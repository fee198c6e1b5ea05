/** The organisation's daily work in the UI, one router mounted by src/ui/ui.routes.tsx: variable sets, teams, members, settings. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { membersUi } from "./members/members.routes";
import { orgSettingsUi } from "./organizations/organizations.routes";
import { teamsUi } from "./teams/teams.routes";
import { varsetsUi } from "./varsets/varsets.routes";

export const organizationUi = new Hono<AppEnv>();
organizationUi.route("/", varsetsUi);
organizationUi.route("/", teamsUi);
organizationUi.route("/", membersUi);
organizationUi.route("/", orgSettingsUi);
