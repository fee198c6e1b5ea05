/**
 * The registry's own API under /api/registry, behind the same authentication as /api/v2: the module and provider
 * registry protocols Terraform speaks (discovered as `modules.v1` and `providers.v1`), and the private registry's
 * GPG keys (HCP Terraform API docs: GPG Keys, at /api/registry/private/v2/gpg-keys).
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { defineRoutes, REGISTRY_PREFIX } from "../jsonapi/define-route";
import { jsonapi, noContent } from "../jsonapi/document";
import { registryPage } from "./registry.document";
import { listDocument, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";

const defineRoute = defineRoutes({ tags: ["Registry protocols"] });
import { addKey, listKeys, removeKey, showKey, updateKey } from "./gpg-keys.service";
import { moduleDownloadLocation, moduleVersionDetails, moduleVersionList, providerDownload, providerVersionList } from "./registry-protocol.service";
import { gpgKeyCreateBody, gpgKeyParams, gpgKeyResource, gpgKeyUpdateBody, gpgListQuery, gpgRegistryParam } from "./registry-providers.schemas";
import { serializeGpgKey } from "./registry-providers.serialize";
import { segment } from "./registry.schemas";

export const registryApi = router();
const prefix = REGISTRY_PREFIX;
const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;
/** A plain JSON response of a registry protocol (Terraform's documents, not JSON:API). */
const json = (description: string, schema: z.ZodType) => ({ 200: { description, content: { "application/json": { schema } } } });

const part = z.object({
  path: z.string(),
  name: z.string(),
  readme: z.string(),
  empty: z.boolean(),
  inputs: z.array(
    z.strictObject({ name: z.string(), type: z.string(), description: z.string(), default: z.string(), required: z.boolean(), sensitive: z.boolean() }),
  ),
  outputs: z.array(z.strictObject({ name: z.string(), description: z.string() })),
  dependencies: z.array(z.strictObject({ name: z.string(), source: z.string(), version: z.string() })),
  provider_dependencies: z.array(z.strictObject({ name: z.string(), namespace: z.string(), source: z.string(), version: z.string() })),
  resources: z.array(z.strictObject({ name: z.string(), type: z.string() })),
});
const moduleVersionsSchema = z
  .strictObject({ modules: z.array(z.strictObject({ source: z.string(), versions: z.array(z.strictObject({ version: z.string() })) })) })
  .openapi("ModuleRegistryVersions");
const moduleDetailsSchema = z
  .strictObject({
    id: z.string(),
    owner: z.string(),
    namespace: z.string(),
    name: z.string(),
    version: z.string(),
    provider: z.string(),
    provider_logo_url: z.string(),
    description: z.string(),
    source: z.string(),
    tag: z.string(),
    published_at: z.string(),
    downloads: z.number().int(),
    verified: z.boolean(),
    root: part,
    submodules: z.array(part),
    examples: z.array(part),
    providers: z.array(z.string()),
    versions: z.array(z.string()),
  })
  .openapi("ModuleRegistryModule");
const providerVersionsSchema = z
  .strictObject({
    versions: z.array(
      z.strictObject({ version: z.string(), protocols: z.array(z.string()), platforms: z.array(z.strictObject({ os: z.string(), arch: z.string() })) }),
    ),
  })
  .openapi("ProviderRegistryVersions");
const providerPackageSchema = z
  .strictObject({
    protocols: z.array(z.string()),
    os: z.string(),
    arch: z.string(),
    filename: z.string(),
    download_url: z.string(),
    shasums_url: z.string(),
    shasums_signature_url: z.string(),
    shasum: z.string(),
    signing_keys: z.strictObject({
      gpg_public_keys: z.array(
        z.strictObject({ key_id: z.string(), ascii_armor: z.string(), trust_signature: z.string(), source: z.string(), source_url: z.string().nullable() }),
      ),
    }),
  })
  .openapi("ProviderRegistryPackage");

// ---- the module registry protocol ----

const moduleParams = z.object({ namespace: segment, name: segment, provider: segment });

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/v1/modules/{namespace}/{name}/{provider}/versions",
    action: "organization.read",
    summary: "Module registry protocol: a private module's published versions (namespace: the organisation)",
    request: { params: moduleParams },
    responses: json("The published versions", moduleVersionsSchema),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return c.json(await moduleVersionList(callerOf(c), p.namespace, p.name, p.provider));
  },
);

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/v1/modules/{namespace}/{name}/{provider}/{version}/download",
    action: "organization.read",
    summary: "Module registry protocol: where to download a version (X-Terraform-Get: a signed URL valid for 10 minutes)",
    request: { params: moduleParams.extend({ version: segment }) },
    responses: { 204: { description: "The location in X-Terraform-Get" } },
  }),
  async (c) => {
    const p = c.req.valid("param");
    const location = await moduleDownloadLocation(callerOf(c), origin(c), p.namespace, p.name, p.provider, p.version);
    c.header("X-Terraform-Get", location);
    return c.body(null, 204);
  },
);

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/v1/modules/{namespace}/{name}/{provider}/{version}",
    action: "organization.read",
    summary: "Module registry: a version's details (root module's inputs and outputs, submodules, examples)",
    request: { params: moduleParams.extend({ version: segment }) },
    responses: json("The module version", moduleDetailsSchema),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return c.json(await moduleVersionDetails(callerOf(c), p.namespace, p.name, p.provider, p.version));
  },
);

// ---- the provider registry protocol ----

const providerParams = z.object({ namespace: segment, type: segment });

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/v1/providers/{namespace}/{type}/versions",
    action: "organization.read",
    summary: "Provider registry protocol: a private provider's versions, with their protocols and platforms",
    request: { params: providerParams },
    responses: json("The complete versions", providerVersionsSchema),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return c.json(await providerVersionList(callerOf(c), p.namespace, p.type));
  },
);

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/v1/providers/{namespace}/{type}/{version}/download/{os}/{arch}",
    action: "organization.read",
    summary: "Provider registry protocol: one platform's package, checksums, signature and signing key",
    request: { params: providerParams.extend({ version: segment, os: segment, arch: segment }) },
    responses: json("The package: download_url, shasums_url, shasums_signature_url, shasum, signing_keys", providerPackageSchema),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return c.json(await providerDownload(callerOf(c), origin(c), p.namespace, p.type, p.version, p.os, p.arch));
  },
);

// ---- GPG keys ----

const gpgTags = ["GPG keys"];

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/{registry_name}/v2/gpg-keys",
    action: "organization.read",
    tags: gpgTags,
    summary: "List the GPG keys of a namespace (filter[namespace]: an organisation)",
    request: { params: gpgRegistryParam, query: gpgListQuery },
    responses: ok("A page of keys", listDocument(gpgKeyResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const namespaces = (c.req.queries("filter[namespace]") ?? []).flatMap((v) => v.split(",")).filter(Boolean);
    const list = await listKeys(callerOf(c), namespaces, page);
    return jsonapi(c, registryPage(c, list.items.map(serializeGpgKey), page, list.total));
  },
);

registryApi.openapi(
  defineRoute({
    method: "post",
    prefix,
    path: "/{registry_name}/v2/gpg-keys",
    action: "registry-providers.manage",
    tags: gpgTags,
    summary: "Add a GPG public key to a namespace",
    request: { params: gpgRegistryParam, body: jsonBody(gpgKeyCreateBody) },
    responses: ok("The key", resourceDocument(gpgKeyResource), 201),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes;
    return jsonapi(c, { data: serializeGpgKey(await addKey(callerOf(c), { namespace: a.namespace, asciiArmor: a["ascii-armor"] })) }, 201);
  },
);

registryApi.openapi(
  defineRoute({
    method: "get",
    prefix,
    path: "/{registry_name}/v2/gpg-keys/{namespace}/{key_id}",
    action: "organization.read",
    tags: gpgTags,
    summary: "Show a GPG key",
    request: { params: gpgKeyParams },
    responses: ok("The key", resourceDocument(gpgKeyResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return jsonapi(c, { data: serializeGpgKey(await showKey(callerOf(c), p.namespace, p.key_id)) });
  },
);

registryApi.openapi(
  defineRoute({
    method: "patch",
    prefix,
    path: "/{registry_name}/v2/gpg-keys/{namespace}/{key_id}",
    action: "registry-providers.manage",
    tags: gpgTags,
    summary: "Move a GPG key to another namespace (the caller manages providers in both)",
    request: { params: gpgKeyParams, body: jsonBody(gpgKeyUpdateBody) },
    responses: { ...ok("The key", resourceDocument(gpgKeyResource)), 403: { description: "namespace not authorized" } },
  }),
  async (c) => {
    const p = c.req.valid("param");
    return jsonapi(c, { data: serializeGpgKey(await updateKey(callerOf(c), p.namespace, p.key_id, c.req.valid("json").data.attributes)) });
  },
);

registryApi.openapi(
  defineRoute({
    method: "delete",
    prefix,
    path: "/{registry_name}/v2/gpg-keys/{namespace}/{key_id}",
    action: "registry-providers.manage",
    tags: gpgTags,
    summary: "Delete a GPG key",
    request: { params: gpgKeyParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await removeKey(callerOf(c), p.namespace, p.key_id);
    return noContent(c);
  },
);
