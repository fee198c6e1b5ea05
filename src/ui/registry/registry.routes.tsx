/** @jsxImportSource hono/jsx */
/** The private registry in the UI: the organisation's modules and providers, calling the services the API calls. */
import { Hono } from "hono";
import { requireOrgAccess } from "../../auth/access";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { findModuleVersion } from "../../registry/registry-modules.d1";
import { listOrgModules, moduleVersions } from "../../registry/registry-modules.service";
import { listOrgProviders, providerOverview } from "../../registry/registry-providers.service";
import { callerOf } from "../context";
import { definePage } from "../define-page";
import { ModulePage, ProviderPage, RegistryPage } from "./registry.view";

export const registryUi = new Hono<AppEnv>();

const registryName = (s: string) => {
  if (s !== "private" && s !== "public") throw ApiError.of("not_found");
  return s;
};

definePage(registryUi, "get", "/:organization/registry", "organization.read", async (c) => {
  const caller = callerOf(c);
  const organization = c.req.param("organization");
  const access = await requireOrgAccess(caller, { name: organization });
  const first = { number: 1, size: 100 };
  const modules = await listOrgModules(caller, organization, {}, first);
  const providers = await listOrgProviders(caller, organization, { withVersions: false }, first);
  return c.html(
    <RegistryPage access={access} modules={modules.items} providers={providers.items} moduleTotal={modules.total} providerTotal={providers.total} />,
  );
});

definePage(registryUi, "get", "/:organization/registry/modules/:registry/:namespace/:name/:provider", "organization.read", async (c) => {
  const caller = callerOf(c);
  const p = c.req.param();
  const view = await moduleVersions(caller, {
    organization: p.organization,
    registryName: registryName(p.registry),
    namespace: p.namespace,
    name: p.name,
    provider: p.provider,
  });
  const access = await requireOrgAccess(caller, { name: p.organization });
  const asked = c.req.query("version");
  // The version asked for, else the newest whose archive was accepted.
  const selected = asked ? await findModuleVersion(caller.db, view.module.id, asked) : (view.versions.find((v) => v.status === "ok") ?? null);
  if (asked && !selected) throw ApiError.of("not_found", { detail: `No version ${asked}` });
  return c.html(<ModulePage access={access} module={view.module} versions={view.versions} selected={selected} host={new URL(c.req.url).host} />);
});

definePage(registryUi, "get", "/:organization/registry/providers/:registry/:namespace/:name", "organization.read", async (c) => {
  const p = c.req.param();
  const view = await providerOverview(callerOf(c), {
    organization: p.organization,
    registryName: registryName(p.registry),
    namespace: p.namespace,
    name: p.name,
  });
  return c.html(
    <ProviderPage access={view.access} provider={view.provider} versions={view.versions} platforms={view.platforms} host={new URL(c.req.url).host} />,
  );
});
