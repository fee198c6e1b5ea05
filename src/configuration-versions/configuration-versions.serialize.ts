import type { Resource } from "../jsonapi/document";
import type { ConfigurationVersionRecord, IngressAttributes } from "./configuration-versions.types";

const API = "/api/v2";

/**
 * The configuration version resource. `uploadUrl` only in the create's response (go-tfe reads it there and
 * requires it empty on a read); everything else is identical in every response, as go-tfe's tests compare them.
 */
export function serializeConfigurationVersion(cv: ConfigurationVersionRecord, uploadUrl?: string): Resource {
  const self = `${API}/configuration-versions/${cv.id}`;
  const attributes: Record<string, unknown> = {
    "auto-queue-runs": cv.autoQueueRuns,
    error: cv.error,
    "error-message": cv.errorMessage,
    source: cv.source,
    speculative: cv.speculative,
    provisional: cv.provisional,
    status: cv.status,
    "status-timestamps": cv.statusTimestamps,
  };
  if (uploadUrl !== undefined) attributes["upload-url"] = uploadUrl;
  return {
    id: cv.id,
    type: "configuration-versions",
    attributes,
    relationships: {
      // Commit information exists only for configuration from a VCS repository, not from the API or the CLI.
      "ingress-attributes": {
        data: cv.ingress ? { type: "ingress-attributes", id: cv.ingress.id } : null,
        links: { related: `${self}/ingress-attributes` },
      },
    },
    links: { self, download: `${self}/download` },
  };
}

/** A version's commit (`ingress-attributes`), with its `created-by` left empty: the commit's author is not a user here. */
export function serializeIngressAttributes(ia: IngressAttributes): Resource {
  const { id, ...attributes } = ia;
  return {
    id,
    type: "ingress-attributes",
    attributes,
    relationships: { "created-by": { data: null } },
    links: { self: `${API}/ingress-attributes/${id}` },
  };
}
