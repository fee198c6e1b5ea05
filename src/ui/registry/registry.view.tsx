/** @jsxImportSource hono/jsx */
/**
 * The organisation's private registry pages: plain data in, HTML out (./registry.routes.tsx calls the services).
 * Modules show their versions, the inputs and outputs read from their files, submodules and examples, and a usage
 * snippet; providers their versions and platforms.
 */
import type { OrgAccess } from "../../auth/access";
import type { ModulePart } from "../../registry/module-config.parse";
import type { ModuleVersion, RegistryModule } from "../../registry/registry-modules.d1";
import type { ProviderPlatform, ProviderVersion, RegistryProvider } from "../../registry/registry-providers.d1";
import { moduleStatus } from "../../registry/registry.rules";
import { OrgFrame, orgPage } from "../organizations/organizations.parts";
import { Table } from "../parts";

const modulePage = (m: RegistryModule) => orgPage(m.organizationName, "registry", "modules", m.registryName, m.namespace, m.name, m.provider);
const providerPage = (p: RegistryProvider) => orgPage(p.organizationName, "registry", "providers", p.registryName, p.namespace, p.name);

export function RegistryPage(props: {
  access: OrgAccess;
  modules: RegistryModule[];
  providers: RegistryProvider[];
  moduleTotal: number;
  providerTotal: number;
}) {
  return (
    <OrgFrame access={props.access} current="registry" title="Registry">
      <h2 id="modules-h">Modules</h2>
      {props.modules.length === 0 ? (
        <p class="muted">No modules yet: publish one through the API (POST /organizations/:name/registry-modules).</p>
      ) : (
        <Table id="modules" columns={["Module", "Provider", "Latest version"]} optional={["Status", "Registry"]}>
          {props.modules.map((m) => (
            <tr data-module={`${m.name}/${m.provider}`}>
              <td>
                <a href={modulePage(m)}>{m.name}</a>
              </td>
              <td>{m.provider}</td>
              <td>{m.versions.find((v) => v.status === "ok")?.version ?? <span class="muted">none</span>}</td>
              <td class="opt">{m.registryName === "public" ? "curated" : moduleStatus(m.versions)}</td>
              <td class="opt">{m.registryName === "public" ? `public (${m.namespace})` : "private"}</td>
            </tr>
          ))}
        </Table>
      )}
      {props.moduleTotal > props.modules.length ? (
        <p class="muted">
          The first {props.modules.length} of {props.moduleTotal} modules.
        </p>
      ) : null}
      <h2 id="providers-h">Providers</h2>
      {props.providers.length === 0 ? (
        <p class="muted">No providers yet.</p>
      ) : (
        <Table id="providers" columns={["Provider", "Versions"]} optional={["Registry"]}>
          {props.providers.map((p) => (
            <tr data-provider={p.name}>
              <td>{p.registryName === "private" ? <a href={providerPage(p)}>{p.name}</a> : `${p.namespace}/${p.name}`}</td>
              <td>{p.versionIds.length}</td>
              <td class="opt">{p.registryName}</td>
            </tr>
          ))}
        </Table>
      )}
      {props.providerTotal > props.providers.length ? (
        <p class="muted">
          The first {props.providers.length} of {props.providerTotal} providers.
        </p>
      ) : null}
    </OrgFrame>
  );
}

/** The `module` block a configuration uses: the required inputs listed, the optional ones left to their defaults. */
export function moduleUsage(host: string, m: RegistryModule, version: string | null, root: ModulePart | null): string {
  const source = m.registryName === "public" ? `${m.namespace}/${m.name}/${m.provider}` : `${host}/${m.namespace}/${m.name}/${m.provider}`;
  const lines = [`module "${m.name.replace(/[^A-Za-z0-9_-]/g, "_")}" {`, `  source  = "${source}"`];
  if (version) lines.push(`  version = "${version}"`);
  const required = (root?.inputs ?? []).filter((i) => i.required);
  if (required.length) lines.push("", ...required.map((i) => `  ${i.name} = # ${i.type || "any"}${i.description ? `: ${i.description.split("\n")[0]}` : ""}`));
  lines.push("}");
  return lines.join("\n");
}

function Part(props: { part: ModulePart; level: "h2" | "h3"; id: string }) {
  const p = props.part;
  const H = props.level;
  return (
    <section aria-labelledby={`${props.id}-h`}>
      <H id={`${props.id}-h`}>{p.path === "" ? "Root module" : p.path}</H>
      {p.readme ? <pre class="readme">{p.readme}</pre> : null}
      <h4>Inputs</h4>
      {p.inputs.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <Table id={`${props.id}-inputs`} columns={["Name", "Type", "Required"]} optional={["Default", "Description"]}>
          {p.inputs.map((i) => (
            <tr data-input={i.name}>
              <td>
                <code>{i.name}</code>
                {i.sensitive ? <span class="badge">sensitive</span> : null}
              </td>
              <td>
                <code>{i.type || "any"}</code>
              </td>
              <td>{i.required ? "yes" : "no"}</td>
              <td class="opt">{i.required ? "" : <code>{i.default}</code>}</td>
              <td class="opt">{i.description}</td>
            </tr>
          ))}
        </Table>
      )}
      <h4>Outputs</h4>
      {p.outputs.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <Table id={`${props.id}-outputs`} columns={["Name"]} optional={["Description"]}>
          {p.outputs.map((o) => (
            <tr data-output={o.name}>
              <td>
                <code>{o.name}</code>
              </td>
              <td class="opt">{o.description}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

export function ModulePage(props: { access: OrgAccess; module: RegistryModule; versions: ModuleVersion[]; selected: ModuleVersion | null; host: string }) {
  const m = props.module;
  const org = props.access.organization.name;
  const d = props.selected?.details ?? null;
  return (
    <OrgFrame access={props.access} current="registry" title={`${m.name} (${m.provider})`} crumbs={<a href={orgPage(org, "registry")}>Registry</a>}>
      <h2 id="usage-h">Usage</h2>
      <pre id="usage">{moduleUsage(props.host, m, props.selected?.version ?? null, d?.root ?? null)}</pre>
      <h2 id="versions-h">Versions</h2>
      {props.versions.length === 0 ? (
        <p class="muted">{m.registryName === "public" ? "A curated module: its versions are the public registry's." : "No versions yet."}</p>
      ) : (
        <Table id="versions" columns={["Version", "Status"]} optional={["Updated", "Error"]}>
          {props.versions.map((v) => (
            <tr data-version={v.version} aria-current={props.selected?.id === v.id ? "true" : undefined}>
              <td>{v.status === "ok" ? <a href={`?version=${encodeURIComponent(v.version)}`}>{v.version}</a> : v.version}</td>
              <td>{v.status}</td>
              <td class="opt">{v.updatedAt}</td>
              <td class="opt">{v.error ?? ""}</td>
            </tr>
          ))}
        </Table>
      )}
      {d ? (
        <>
          <p class="muted" id="shown">
            Showing version {props.selected?.version}.
          </p>
          <Part part={d.root} level="h2" id="root" />
          <h2 id="submodules-h">Submodules</h2>
          {d.submodules.length === 0 ? <p class="muted">None.</p> : d.submodules.map((s, i) => <Part part={s} level="h3" id={`submodule-${i}`} />)}
          <h2 id="examples-h">Examples</h2>
          {d.examples.length === 0 ? <p class="muted">None.</p> : d.examples.map((s, i) => <Part part={s} level="h3" id={`example-${i}`} />)}
        </>
      ) : null}
    </OrgFrame>
  );
}

export function ProviderPage(props: {
  access: OrgAccess;
  provider: RegistryProvider;
  versions: ProviderVersion[];
  platforms: ProviderPlatform[];
  host: string;
}) {
  const p = props.provider;
  const org = props.access.organization.name;
  const usage = `terraform {\n  required_providers {\n    ${p.name} = {\n      source  = "${props.host}/${p.namespace}/${p.name}"${props.versions[0] ? `\n      version = "${props.versions[0].version}"` : ""}\n    }\n  }\n}`;
  return (
    <OrgFrame access={props.access} current="registry" title={`${p.namespace}/${p.name}`} crumbs={<a href={orgPage(org, "registry")}>Registry</a>}>
      <h2 id="usage-h">Usage</h2>
      <pre id="usage">{usage}</pre>
      <h2 id="versions-h">Versions</h2>
      {props.versions.length === 0 ? (
        <p class="muted">No versions yet.</p>
      ) : (
        props.versions.map((v) => {
          const platforms = props.platforms.filter((pl) => pl.versionId === v.id);
          return (
            <section aria-labelledby={`v-${v.id}`} data-version={v.version}>
              <h3 id={`v-${v.id}`}>{v.version}</h3>
              <p class="muted">
                Key {v.keyId}; protocols {v.protocols.join(", ") || "none"}; SHA256SUMS {v.shasumsKey ? "uploaded" : "missing"}, signature{" "}
                {v.shasumsSigKey ? "uploaded" : "missing"}.
              </p>
              {platforms.length === 0 ? (
                <p class="muted">No platforms yet.</p>
              ) : (
                <Table id={`platforms-${v.version}`} columns={["OS", "Arch", "Binary"]} optional={["Filename", "SHA-256"]}>
                  {platforms.map((pl) => (
                    <tr data-platform={`${pl.os}_${pl.arch}`}>
                      <td>{pl.os}</td>
                      <td>{pl.arch}</td>
                      <td>{pl.binaryKey ? "uploaded" : "missing"}</td>
                      <td class="opt">{pl.filename}</td>
                      <td class="opt">
                        <code>{pl.shasum}</code>
                      </td>
                    </tr>
                  ))}
                </Table>
              )}
            </section>
          );
        })
      )}
    </OrgFrame>
  );
}
