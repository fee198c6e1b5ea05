/** SSH keys (tfe-api-notes §2.6). The key value is write-only: nothing of it is stored or returned. */
import { createRoute, z } from "@hono/zod-openapi";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { loadOwned, requireManage } from "./registry.common";

const tags = ["SSH keys"];
export const sshKeys = router();

interface SshKeyRow {
  id: string;
  organization_name: string;
  name: string;
  created_at: string;
}

const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const keyParam = z.object({ ssh_key_id: z.string().regex(/^sshkey-[A-Za-z0-9]{1,64}$/) });
const createBody = z.object({ data: z.object({ type: z.literal("ssh-keys"), attributes: z.object({ name: z.string().min(1).max(255), value: z.string().min(1).max(16_384) }) }) }).openapi("SshKeyCreate");
const updateBody = z.object({ data: z.object({ type: z.literal("ssh-keys"), attributes: z.object({ name: z.string().min(1).max(255).optional(), value: z.string().max(16_384).optional() }) }) }).openapi("SshKeyUpdate");

const serialize = (k: SshKeyRow): Resource => ({ id: k.id, type: "ssh-keys", attributes: { name: k.name }, links: { self: `/api/v2/ssh-keys/${k.id}` } });

sshKeys.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/ssh-keys", tags, summary: "Create an SSH key (not with an organisation token)", request: { params: orgParam, body: jsonBody(createBody) }, responses: { ...ok("The key", 201), ...errorResponses } }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    // The real service refuses organisation tokens here.
    if (access.isOrgToken) throw ApiError.of("not_found");
    requireManage(access, "manage-vcs-settings");
    const a = c.req.valid("json").data.attributes;
    const row: SshKeyRow = { id: newId("sshkey"), organization_name: access.organization.name, name: a.name, created_at: nowIso() };
    await primary(c).prepare("INSERT INTO ssh_keys (id, organization_name, name, created_at) VALUES (?, ?, ?, ?)").bind(row.id, row.organization_name, row.name, row.created_at).run();
    return jsonapi(c, { data: serialize(row) }, 201);
  },
);

sshKeys.openapi(
  createRoute({ method: "get", path: "/organizations/{organization_name}/ssh-keys", tags, summary: "List SSH keys", request: { params: orgParam }, responses: { ...ok("A page of keys"), ...errorResponses } }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const rows = await primary(c).prepare("SELECT * FROM ssh_keys WHERE organization_name = ? ORDER BY created_at, id").bind(access.organization.name).all<SshKeyRow>();
    return jsonapi(c, paginated(c, rows.results.slice((page.number - 1) * page.size, page.number * page.size).map(serialize), page, rows.results.length));
  },
);

sshKeys.openapi(
  createRoute({ method: "get", path: "/ssh-keys/{ssh_key_id}", tags, summary: "Show an SSH key", request: { params: keyParam }, responses: { ...ok("The key"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: serialize((await loadOwned<SshKeyRow>(c, "ssh_keys", c.req.valid("param").ssh_key_id)).row) }),
);

sshKeys.openapi(
  createRoute({ method: "patch", path: "/ssh-keys/{ssh_key_id}", tags, summary: "Rename an SSH key", request: { params: keyParam, body: jsonBody(updateBody) }, responses: { ...ok("The key"), ...errorResponses } }),
  async (c) => {
    const { row, access } = await loadOwned<SshKeyRow>(c, "ssh_keys", c.req.valid("param").ssh_key_id);
    requireManage(access, "manage-vcs-settings");
    const name = c.req.valid("json").data.attributes.name ?? row.name;
    await primary(c).prepare("UPDATE ssh_keys SET name = ? WHERE id = ?").bind(name, row.id).run();
    return jsonapi(c, { data: serialize({ ...row, name }) });
  },
);

sshKeys.openapi(
  createRoute({ method: "delete", path: "/ssh-keys/{ssh_key_id}", tags, summary: "Delete an SSH key (workspaces using it show no key from then on)", request: { params: keyParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const { row, access } = await loadOwned<SshKeyRow>(c, "ssh_keys", c.req.valid("param").ssh_key_id);
    requireManage(access, "manage-vcs-settings");
    // No fan-out: workspaces still naming this key resolve it as unassigned when read.
    await primary(c).prepare("DELETE FROM ssh_keys WHERE id = ?").bind(row.id).run();
    return noContent(c);
  },
);
