/**
 * Registry providers, their versions and platforms (HCP Terraform API docs: Registry Providers, Private Provider
 * Versions and Platforms). A version's links carry the signed upload URLs of its SHA256SUMS and signature, a
 * platform's the one of its binary; once uploaded, their download links too.
 */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { defineRoutes } from "../jsonapi/define-route";
import { Included, jsonapi, noContent, pageSlice } from "../jsonapi/document";
import { registryPage } from "./registry.document";
import { listDocument, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { tagBindingResource } from "../tags/tags.schemas";
import type { ProviderPlatform, ProviderVersion, RegistryProvider } from "./registry-providers.d1";
import { serializeRegistryTagBinding } from "./registry-modules.serialize";
import {
  platformCreateBody,
  platformParams,
  providerCreateBody,
  providerIdParam,
  providerListQuery,
  providerParams,
  providerReadQuery,
  providerUpdateBody,
  providerVersionCreateBody,
  providerVersionParams,
  registryProviderPlatformResource,
  registryProviderResource,
  registryProviderVersionResource,
} from "./registry-providers.schemas";
import { serializePlatform, serializeProvider, serializeProviderVersion } from "./registry-providers.serialize";
import {
  createPlatform,
  createProvider,
  createProviderVersion,
  listOrgProviders,
  type ProviderRef,
  providerTagBindings,
  providerVersions,
  removePlatform,
  removeProvider,
  removeProviderVersion,
  showPlatform,
  showProvider,
  showProviderById,
  showProviderVersion,
  updateProvider,
  versionPlatforms,
} from "./registry-providers.service";
import { signedObjectUrl } from "./registry-urls";

const defineRoute = defineRoutes({ tags: ["Registry providers"] });
export const registryProviders = router();
const providerResponse = ok("The provider", resourceDocument(registryProviderResource));

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;
const ref = (p: { organization_name: string; registry_name: "private" | "public"; namespace: string; name: string }): ProviderRef => ({
  organization: p.organization_name,
  registryName: p.registry_name,
  namespace: p.namespace,
  name: p.name,
});

/** `include=registry-provider-versions` or nothing (400 for anything else). */
function wantsVersions(include: string | undefined): boolean {
  const names = (include ?? "").split(",").filter(Boolean);
  for (const n of names)
    if (n !== "registry-provider-versions") throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${n}`, parameter: "include" });
  return names.length > 0;
}

async function versionLinks(c: Context<AppEnv>, v: ProviderVersion, canManage: boolean): Promise<Record<string, string>> {
  const links: Record<string, string> = {};
  const o = origin(c);
  if (canManage) {
    links["shasums-upload"] = await signedObjectUrl(c.env, o, "PUT", "shasums", v.id);
    links["shasums-sig-upload"] = await signedObjectUrl(c.env, o, "PUT", "shasums-sig", v.id);
  }
  if (v.shasumsKey) links["shasums-download"] = await signedObjectUrl(c.env, o, "GET", "shasums", v.id);
  if (v.shasumsSigKey) links["shasums-sig-download"] = await signedObjectUrl(c.env, o, "GET", "shasums-sig", v.id);
  return links;
}

async function platformLinks(c: Context<AppEnv>, pl: ProviderPlatform, canManage: boolean): Promise<Record<string, string>> {
  const links: Record<string, string> = {};
  if (canManage) links["provider-binary-upload"] = await signedObjectUrl(c.env, origin(c), "PUT", "binary", pl.id);
  if (pl.binaryKey) links["provider-binary-download"] = await signedObjectUrl(c.env, origin(c), "GET", "binary", pl.id);
  return links;
}

async function providerDocument(c: Context<AppEnv>, view: { provider: RegistryProvider; canManage: boolean; versions: ProviderVersion[] }) {
  const included = new Included();
  for (const v of view.versions) included.add(serializeProviderVersion(v, view.provider, view.canManage, await versionLinks(c, v, view.canManage)));
  return { data: serializeProvider(view.provider, view.canManage), ...(included.items.length ? { included: included.items } : {}) };
}

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/registry-providers",
    action: "organization.read",
    summary: "List the organisation's registry providers (q searches names)",
    request: { params: providerParams.pick({ organization_name: true }), query: providerListQuery },
    responses: ok("A page of providers", listDocument(registryProviderResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const withVersions = wantsVersions(q.include);
    const page = pageOf(q);
    const list = await listOrgProviders(
      callerOf(c),
      c.req.valid("param").organization_name,
      { q: q.q, registryName: q["filter[registry_name]"], organizationName: q["filter[organization_name]"], withVersions },
      page,
    );
    const included = new Included();
    const byId = new Map(list.items.map((p) => [p.id, p]));
    for (const v of list.versions) included.add(serializeProviderVersion(v, byId.get(v.providerId)!, list.canManage, await versionLinks(c, v, list.canManage)));
    const data = list.items.map((p) => serializeProvider(p, list.canManage));
    return jsonapi(c, registryPage(c, data, page, list.total, { included: included.items }));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/registry-providers",
    action: "registry-providers.manage",
    summary: "Create a provider (private: its namespace is the organisation; public: a curated reference)",
    request: { params: providerParams.pick({ organization_name: true }), body: jsonBody(providerCreateBody) },
    responses: ok("The provider", resourceDocument(registryProviderResource), 201),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes;
    const view = await createProvider(callerOf(c), c.req.valid("param").organization_name, {
      name: a.name,
      namespace: a.namespace,
      registryName: a["registry-name"],
    });
    return jsonapi(c, { data: serializeProvider(view.provider, view.canManage) }, 201);
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/registry-providers/{registry_name}/{namespace}/{name}",
    action: "organization.read",
    summary: "Show a provider",
    request: { params: providerParams, query: providerReadQuery },
    responses: providerResponse,
  }),
  async (c) => {
    const withVersions = wantsVersions(c.req.valid("query").include);
    return jsonapi(c, await providerDocument(c, await showProvider(callerOf(c), ref(c.req.valid("param")), withVersions)));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "patch",
    path: "/organizations/{organization_name}/registry-providers/{registry_name}/{namespace}/{name}",
    action: "registry-providers.manage",
    summary: "Update a provider's tag bindings",
    request: { params: providerParams, body: jsonBody(providerUpdateBody) },
    responses: providerResponse,
  }),
  async (c) => {
    const bindings = c.req.valid("json").data.relationships?.["tag-bindings"]?.data.map((b) => b.attributes);
    return jsonapi(c, await providerDocument(c, await updateProvider(callerOf(c), ref(c.req.valid("param")), bindings)));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/registry-providers/{registry_name}/{namespace}/{name}",
    action: "registry-providers.manage",
    summary: "Delete a provider with its versions and platforms",
    request: { params: providerParams },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeProvider(callerOf(c), ref(c.req.valid("param")));
    return noContent(c);
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: "/registry-providers/{provider_id}",
    action: "organization.read",
    summary: "Show a provider by id",
    request: { params: providerIdParam, query: providerReadQuery },
    responses: providerResponse,
  }),
  async (c) => {
    const withVersions = wantsVersions(c.req.valid("query").include);
    return jsonapi(c, await providerDocument(c, await showProviderById(callerOf(c), c.req.valid("param").provider_id, withVersions)));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: "/registry-providers/{provider_id}/tag-bindings",
    action: "organization.read",
    summary: "List a provider's tag bindings",
    request: { params: providerIdParam },
    responses: ok("The bindings", listDocument(tagBindingResource)),
  }),
  async (c) => jsonapi(c, { data: (await providerTagBindings(callerOf(c), c.req.valid("param").provider_id)).map(serializeRegistryTagBinding) }),
);

// ---- versions ----

const versionsPath = "/organizations/{organization_name}/registry-providers/{registry_name}/{namespace}/{name}/versions";

registryProviders.openapi(
  defineRoute({
    method: "post",
    path: versionsPath,
    action: "registry-providers.manage",
    summary: "Create a private provider version (its key id and protocols); upload SHA256SUMS and its signature to its links",
    request: { params: providerParams, body: jsonBody(providerVersionCreateBody) },
    responses: ok("The version, with its upload links", resourceDocument(registryProviderVersionResource), 201),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes;
    const view = await createProviderVersion(callerOf(c), ref(c.req.valid("param")), { version: a.version, keyId: a["key-id"], protocols: a.protocols });
    return jsonapi(c, { data: serializeProviderVersion(view.version, view.provider, true, await versionLinks(c, view.version, true)) }, 201);
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: versionsPath,
    action: "organization.read",
    summary: "List a private provider's versions, newest first",
    request: { params: providerParams, query: providerListQuery.pick({ "page[number]": true, "page[size]": true }) },
    responses: ok("A page of versions", listDocument(registryProviderVersionResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const view = await providerVersions(callerOf(c), ref(c.req.valid("param")));
    const slice = pageSlice(view.versions, page);
    const data = [];
    for (const v of slice) data.push(serializeProviderVersion(v, view.provider, view.canManage, await versionLinks(c, v, view.canManage)));
    return jsonapi(c, registryPage(c, data, page, view.versions.length));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: `${versionsPath}/{version}`,
    action: "organization.read",
    summary: "Show a private provider version",
    request: { params: providerVersionParams },
    responses: ok("The version", resourceDocument(registryProviderVersionResource)),
  }),
  async (c) => {
    const view = await showProviderVersion(callerOf(c), ref(c.req.valid("param")), c.req.valid("param").version);
    return jsonapi(c, { data: serializeProviderVersion(view.version, view.provider, view.canManage, await versionLinks(c, view.version, view.canManage)) });
  },
);

registryProviders.openapi(
  defineRoute({
    method: "delete",
    path: `${versionsPath}/{version}`,
    action: "registry-providers.manage",
    summary: "Delete a private provider version with its platforms",
    request: { params: providerVersionParams },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeProviderVersion(callerOf(c), ref(c.req.valid("param")), c.req.valid("param").version);
    return noContent(c);
  },
);

// ---- platforms ----

const platformsPath = `${versionsPath}/{version}/platforms`;

registryProviders.openapi(
  defineRoute({
    method: "post",
    path: platformsPath,
    action: "registry-providers.manage",
    summary: "Create a platform of a version (os, arch, shasum, filename); upload its binary to links.provider-binary-upload",
    request: { params: providerVersionParams, body: jsonBody(platformCreateBody) },
    responses: ok("The platform, with its upload link", resourceDocument(registryProviderPlatformResource), 201),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const view = await createPlatform(callerOf(c), ref(p), p.version, c.req.valid("json").data.attributes);
    return jsonapi(c, { data: serializePlatform(view.platform, true, await platformLinks(c, view.platform, true)) }, 201);
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: platformsPath,
    action: "organization.read",
    summary: "List a version's platforms",
    request: { params: providerVersionParams, query: providerListQuery.pick({ "page[number]": true, "page[size]": true }) },
    responses: ok("A page of platforms", listDocument(registryProviderPlatformResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const page = pageOf(c.req.valid("query"));
    const view = await versionPlatforms(callerOf(c), ref(p), p.version);
    const data = [];
    for (const pl of pageSlice(view.platforms, page)) {
      data.push(serializePlatform(pl, view.canManage, await platformLinks(c, pl, view.canManage)));
    }
    return jsonapi(c, registryPage(c, data, page, view.platforms.length));
  },
);

registryProviders.openapi(
  defineRoute({
    method: "get",
    path: `${platformsPath}/{os}/{arch}`,
    action: "organization.read",
    summary: "Show a platform",
    request: { params: platformParams },
    responses: ok("The platform", resourceDocument(registryProviderPlatformResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const view = await showPlatform(callerOf(c), ref(p), p.version, p.os, p.arch);
    return jsonapi(c, { data: serializePlatform(view.platform, view.canManage, await platformLinks(c, view.platform, view.canManage)) });
  },
);

registryProviders.openapi(
  defineRoute({
    method: "delete",
    path: `${platformsPath}/{os}/{arch}`,
    action: "registry-providers.manage",
    summary: "Delete a platform with its binary",
    request: { params: platformParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await removePlatform(callerOf(c), ref(p), p.version, p.os, p.arch);
    return noContent(c);
  },
);
