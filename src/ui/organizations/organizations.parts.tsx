/** @jsxImportSource hono/jsx */
/**
 * What the organisation's pages share (workspaces, projects, variable sets, teams, members, settings): their
 * navigation and frame, and the caller's standing (to offer only the forms it may use; every service authorises again).
 */
import type { Child } from "hono/jsx";
import { type OrgAccess, requireOrgAccess } from "../../auth/access";
import { allows } from "../../auth/requirements";
import { callerOf, type Ctx } from "../context";
import { Layout } from "../layout";

export type OrgPage = "workspaces" | "projects" | "varsets" | "registry" | "teams" | "members" | "settings";

export const orgPage = (org: string, page: OrgPage, ...rest: string[]) =>
  ["", "app", org, page, ...rest].map((s, i) => (i < 2 ? s : encodeURIComponent(s))).join("/");

/** The caller's standing in the organisation (404 without one), as the services load it. */
export const standingIn = (c: Ctx, organization: string): Promise<OrgAccess> => requireOrgAccess(callerOf(c), { name: organization });

const TABS: Array<[OrgPage, string]> = [
  ["workspaces", "Workspaces"],
  ["projects", "Projects"],
  ["varsets", "Variable sets"],
  ["registry", "Registry"],
  ["teams", "Teams"],
  ["members", "Members"],
  ["settings", "Settings"],
];

/** Which of the organisation's pages the caller may open (every member: workspaces, projects, teams, members). */
function visible(page: OrgPage, access: OrgAccess | undefined): boolean {
  if (page === "varsets") return !!access && allows(access.principal, "varsets.read", { access });
  if (page === "settings") return !!access && allows(access.principal, "organization.manage", { access });
  return true;
}

/** The organisation's pages the caller may open, the current one marked. Without `access`, those every member may. */
export function OrgNav(props: { organization: string; current: OrgPage; access?: OrgAccess }) {
  return (
    <nav class="orgnav" aria-label="Organisation">
      {TABS.filter(([p]) => visible(p, props.access)).map(([p, label]) => (
        <a href={orgPage(props.organization, p)} aria-current={props.current === p ? "page" : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/** An organisation page's frame: breadcrumb, navigation, heading. */
export function OrgFrame(props: { access: OrgAccess; current: OrgPage; title: string; crumbs?: Child; children: Child }) {
  const org = props.access.organization.name;
  return (
    <Layout title={`${props.title} · ${org}`} principal={props.access.principal}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / <a href={orgPage(org, "workspaces")}>{org}</a>
        {props.crumbs ? <> / {props.crumbs}</> : null}
      </nav>
      <OrgNav organization={org} current={props.current} access={props.access} />
      <h1>{props.title}</h1>
      {props.children}
    </Layout>
  );
}
