import type { Resource } from "../jsonapi/document";
import type { ConfigurationVersionRecord } from "./configuration-versions.types";

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
      // Commit information exists only for configuration from a VCS repository; these come from the API or the CLI.
      "ingress-attributes": { data: null, links: { related: `${self}/ingress-attributes` } },
    },
    links: { self, download: `${self}/download` },
  };
}
