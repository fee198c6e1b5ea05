/** The organisation's daily work in the UI, one router mounted by src/ui/ui.routes.tsx: variable sets, teams, members, settings. */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { membersUi } from "./ui.members";
import { orgSettingsUi } from "./ui.org-settings";
import { teamsUi } from "./ui.teams";
import { varsetsUi } from "./ui.varsets";

export const organizationUi = new Hono<AppEnv>();
organizationUi.route("/", varsetsUi);
organizationUi.route("/", teamsUi);
organizationUi.route("/", membersUi);
organizationUi.route("/", orgSettingsUi);
