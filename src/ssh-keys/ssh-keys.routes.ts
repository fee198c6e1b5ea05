/** SSH keys (HCP Terraform API docs: SSH Keys). The key value is write-only: nothing of it is stored or returned. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginatedList } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeSshKey } from "./ssh-keys.serialize";
import { createSshKey, listOrgSshKeys, removeSshKey, showSshKey, updateSshKey } from "./ssh-keys.service";
import { defineRoutes } from "../jsonapi/define-route";
import { sshKeyResource } from "./ssh-keys.schemas";

const defineRoute = defineRoutes({ tags: ["SSH keys"] });
export const sshKeys = router();

const keyParam = z.object({ ssh_key_id: z.string().regex(/^sshkey-[A-Za-z0-9]{1,64}$/) });
const createBody = z
  .object({ data: z.object({ type: z.literal("ssh-keys"), attributes: z.object({ name: z.string().min(1).max(255), value: z.string().min(1).max(16_384) }) }) })
  .openapi("SshKeyCreate");
const updateBody = z
  .object({
    data: z.object({
      type: z.literal("ssh-keys"),
      attributes: z.object({ name: z.string().min(1).max(255).optional(), value: z.string().max(16_384).optional() }),
    }),
  })
  .openapi("SshKeyUpdate");

sshKeys.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/ssh-keys",
    action: "ssh-keys.create",
    summary: "Create an SSH key (not with an organisation token)",
    request: { params: orgParam, body: jsonBody(createBody) },
    responses: ok("The key", resourceDocument(sshKeyResource), 201),
  }),
  async (c) => {
    const key = await createSshKey(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data.attributes.name);
    return jsonapi(c, { data: serializeSshKey(key) }, 201);
  },
);

sshKeys.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/ssh-keys",
    action: "organization.read",
    summary: "List SSH keys",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of keys", listDocument(sshKeyResource)),
  }),
  async (c) => {
    const keys = await listOrgSshKeys(callerOf(c), c.req.valid("param").organization_name);
    const page = pageOf(c.req.valid("query"));
    return jsonapi(c, paginatedList(c, keys, page, serializeSshKey));
  },
);

sshKeys.openapi(
  defineRoute({
    method: "get",
    path: "/ssh-keys/{ssh_key_id}",
    action: "organization.read",
    summary: "Show an SSH key",
    request: { params: keyParam },
    responses: ok("The key", resourceDocument(sshKeyResource)),
  }),
  async (c) => jsonapi(c, { data: serializeSshKey(await showSshKey(callerOf(c), c.req.valid("param").ssh_key_id)) }),
);

sshKeys.openapi(
  defineRoute({
    method: "patch",
    path: "/ssh-keys/{ssh_key_id}",
    action: "vcs.manage",
    summary: "Rename an SSH key",
    request: { params: keyParam, body: jsonBody(updateBody) },
    responses: ok("The key", resourceDocument(sshKeyResource)),
  }),
  async (c) => {
    const key = await updateSshKey(callerOf(c), c.req.valid("param").ssh_key_id, c.req.valid("json").data.attributes.name);
    return jsonapi(c, { data: serializeSshKey(key) });
  },
);

sshKeys.openapi(
  defineRoute({
    method: "delete",
    path: "/ssh-keys/{ssh_key_id}",
    action: "vcs.manage",
    summary: "Delete an SSH key (workspaces using it show no key from then on)",
    request: { params: keyParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeSshKey(callerOf(c), c.req.valid("param").ssh_key_id);
    return noContent(c);
  },
);
