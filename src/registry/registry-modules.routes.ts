/**
 * Registry modules (HCP Terraform API docs: Registry Modules), without VCS: create a module, create its versions and
 * upload each one's archive to `links.upload`, list, show and delete; and the deprecated `/registry-modules/…` paths
 * go-tfe still calls (create a version, delete).
 */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { defineRoutes } from "../jsonapi/define-route";
import { jsonapi, noContent } from "../jsonapi/document";
import { registryPage } from "./registry.document";
import { listDocument, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router, includesOf } from "../jsonapi/validation";
import { tagBindingResource } from "../tags/tags.schemas";
import {
  legacyModuleParams,
  moduleCreateBody,
  moduleIdParam,
  moduleListQuery,
  moduleParams,
  moduleUpdateBody,
  moduleVersionCreateBody,
  moduleVersionParams,
  moduleVersionQuery,
  registryModuleResource,
  registryModuleVersionResource,
} from "./registry-modules.schemas";
import { registryEntryParams } from "./registry.schemas";
import { serializeModule, serializeModuleVersion, serializeRegistryTagBinding } from "./registry-modules.serialize";
import {
  createModule,
  createModuleVersion,
  deleteModuleByName,
  deleteModuleProvider,
  deleteModulesNamed,
  deleteModuleVersionOf,
  listOrgModules,
  type ModuleRef,
  moduleTagBindings,
  showModule,
  showModuleById,
  showModuleVersion,
  updateModule,
  type VersionView,
} from "./registry-modules.service";
import { signedObjectUrl } from "./registry-urls";

const defineRoute = defineRoutes({ tags: ["Registry modules"] });
export const registryModules = router();
const moduleResponse = ok("The module", resourceDocument(registryModuleResource));

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;
const ref = (p: { organization_name: string; registry_name: "private" | "public"; namespace: string; name: string; provider: string }): ModuleRef => ({
  organization: p.organization_name,
  registryName: p.registry_name,
  namespace: p.namespace,
  name: p.name,
  provider: p.provider,
});
/** The deprecated paths name a private module by its organisation (its namespace). */
const legacyRef = (p: { organization_name: string; name: string; provider: string }): ModuleRef => ({
  organization: p.organization_name,
  registryName: "private",
  namespace: p.organization_name,
  name: p.name,
  provider: p.provider,
});

/** A version resource with its upload link for callers who may upload (signed, 25 hours). */
async function versionDocument(c: Context<AppEnv>, view: VersionView) {
  const upload = view.canManage ? await signedObjectUrl(c.env, origin(c), "PUT", "module", view.version.id) : null;
  return { data: serializeModuleVersion(view.version, upload) };
}

// The deprecated delete paths first: `/registry-modules/actions/delete/{org}/{name}` has the shape of the
// deprecated version create below, and the first declared route wins.
const deleteActions = [
  {
    path: "/registry-modules/actions/delete/{organization_name}/{name}",
    params: legacyModuleParams.omit({ provider: true }),
    summary: "Delete every module of a name, private and public (deprecated path)",
  },
  {
    path: "/registry-modules/actions/delete/{organization_name}/{name}/{provider}",
    params: legacyModuleParams,
    summary: "Delete a private module's provider (deprecated path)",
  },
  {
    path: "/registry-modules/actions/delete/{organization_name}/{name}/{provider}/{version}",
    params: legacyModuleParams.extend({ version: moduleVersionParams.shape.version }),
    summary: "Delete a private module version (deprecated path)",
  },
] as const;
for (const { path, params, summary } of deleteActions) {
  registryModules.openapi(
    defineRoute({
      method: "post",
      path,
      action: "registry-modules.manage",
      summary,
      request: { params },
      responses: noContentResponse,
    }),
    async (c) => {
      const p = c.req.valid("param") as { organization_name: string; name: string; provider?: string; version?: string };
      const caller = callerOf(c);
      if (p.version !== undefined && p.provider !== undefined) await deleteModuleVersionOf(caller, legacyRef({ ...p, provider: p.provider }), p.version);
      else if (p.provider !== undefined) await deleteModuleProvider(caller, legacyRef({ ...p, provider: p.provider }));
      else await deleteModulesNamed(caller, p.organization_name, p.name);
      return noContent(c);
    },
  );
}

registryModules.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/registry-modules",
    action: "organization.read",
    summary: "List the organisation's registry modules (q searches names, namespaces and providers)",
    request: { params: registryEntryParams.pick({ organization_name: true }), query: moduleListQuery },
    responses: ok("A page of modules", listDocument(registryModuleResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    // There are no no-code modules to include (no-code provisioning is not offered): the include is answered as asked.
    includesOf(q.include, ["no-code-modules"]);
    const page = pageOf(q);
    const list = await listOrgModules(
      callerOf(c),
      c.req.valid("param").organization_name,
      { q: q.q, provider: q["filter[provider]"], registryName: q["filter[registry_name]"], organizationName: q["filter[organization_name]"] },
      page,
    );
    return jsonapi(
      c,
      registryPage(
        c,
        list.items.map((m) => serializeModule(m, list.canManage)),
        page,
        list.total,
      ),
    );
  },
);

registryModules.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/registry-modules",
    action: "registry-modules.manage",
    summary: "Create a module without a VCS connection (private: versions are uploaded; public: a curated reference)",
    request: { params: registryEntryParams.pick({ organization_name: true }), body: jsonBody(moduleCreateBody) },
    responses: ok("The module", resourceDocument(registryModuleResource), 201),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes;
    const view = await createModule(callerOf(c), c.req.valid("param").organization_name, {
      name: a.name,
      provider: a.provider,
      registryName: a["registry-name"],
      namespace: a.namespace,
      noCode: a["no-code"],
    });
    return jsonapi(c, { data: serializeModule(view.module, view.canManage) }, 201);
  },
);

registryModules.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}",
    action: "organization.read",
    summary: "Show a module",
    request: { params: moduleParams },
    responses: moduleResponse,
  }),
  async (c) => {
    const view = await showModule(callerOf(c), ref(c.req.valid("param")));
    return jsonapi(c, { data: serializeModule(view.module, view.canManage) });
  },
);

registryModules.openapi(
  defineRoute({
    method: "patch",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}",
    action: "registry-modules.manage",
    summary: "Update a module: its tag bindings (no-code, tests and VCS settings are refused)",
    request: { params: moduleParams, body: jsonBody(moduleUpdateBody) },
    responses: moduleResponse,
  }),
  async (c) => {
    const d = c.req.valid("json").data;
    const view = await updateModule(callerOf(c), ref(c.req.valid("param")), {
      noCode: d.attributes?.["no-code"],
      testConfig: d.attributes?.["test-config"],
      vcsRepo: d.attributes?.["vcs-repo"],
      tagBindings: d.relationships?.["tag-bindings"]?.data.map((b) => b.attributes),
    });
    return jsonapi(c, { data: serializeModule(view.module, view.canManage) });
  },
);

registryModules.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}",
    action: "registry-modules.manage",
    summary: "Delete a module's provider with all its versions",
    request: { params: moduleParams },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteModuleProvider(callerOf(c), ref(c.req.valid("param")));
    return noContent(c);
  },
);

registryModules.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}",
    action: "registry-modules.manage",
    summary: "Delete a module: every provider and version of the name",
    request: { params: registryEntryParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await deleteModuleByName(callerOf(c), { organization: p.organization_name, registryName: p.registry_name, namespace: p.namespace, name: p.name });
    return noContent(c);
  },
);

registryModules.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}/{version}",
    action: "registry-modules.manage",
    summary: "Delete a module version (the provider goes with its last version)",
    request: { params: moduleVersionParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await deleteModuleVersionOf(callerOf(c), ref(p), p.version);
    return noContent(c);
  },
);

for (const [path, legacy] of [
  ["/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}/versions", false],
  ["/registry-modules/{organization_name}/{name}/{provider}/versions", true],
] as const) {
  registryModules.openapi(
    defineRoute({
      method: "post",
      path,
      action: "registry-modules.manage",
      summary: `Create a private module version; upload its tar.gz to links.upload${legacy ? " (deprecated path)" : ""}`,
      request: { params: legacy ? legacyModuleParams : moduleParams, body: jsonBody(moduleVersionCreateBody) },
      responses: ok("The version, with its upload link", resourceDocument(registryModuleVersionResource), 201),
    }),
    async (c) => {
      const p = c.req.valid("param") as Parameters<typeof ref>[0];
      const a = c.req.valid("json").data.attributes;
      const view = await createModuleVersion(callerOf(c), legacy ? legacyRef(p) : ref(p), { version: a.version, commitSha: a["commit-sha"] });
      return jsonapi(c, await versionDocument(c, view), 201);
    },
  );
}

registryModules.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/registry-modules/{registry_name}/{namespace}/{name}/{provider}/version",
    action: "organization.read",
    summary: "Show a module version (module_version names it)",
    request: { params: moduleParams, query: moduleVersionQuery },
    responses: ok("The version", resourceDocument(registryModuleVersionResource)),
  }),
  async (c) => {
    const view = await showModuleVersion(callerOf(c), ref(c.req.valid("param")), c.req.valid("query").module_version);
    return jsonapi(c, await versionDocument(c, view));
  },
);

registryModules.openapi(
  defineRoute({
    method: "get",
    path: "/registry-modules/{module_id}",
    action: "organization.read",
    summary: "Show a module by id",
    request: { params: moduleIdParam },
    responses: moduleResponse,
  }),
  async (c) => {
    const view = await showModuleById(callerOf(c), c.req.valid("param").module_id);
    return jsonapi(c, { data: serializeModule(view.module, view.canManage) });
  },
);

registryModules.openapi(
  defineRoute({
    method: "get",
    path: "/registry-modules/{module_id}/tag-bindings",
    action: "organization.read",
    summary: "List a module's tag bindings",
    request: { params: moduleIdParam },
    responses: ok("The bindings", listDocument(tagBindingResource)),
  }),
  async (c) => jsonapi(c, { data: (await moduleTagBindings(callerOf(c), c.req.valid("param").module_id)).map(serializeRegistryTagBinding) }),
);
