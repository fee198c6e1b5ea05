import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll } from "vitest";
import { CONNECTED_WORKSPACES } from "./helpers";

// No test reaches the network: the Worker's outbound requests (VCS hosts, releases, webhooks) go to the fakes a test
// installs (test/vcs/outbound.ts, which restores this after each test), and anything else fails at once as an
// unreachable host would. Without it, an object's alarm retrying a connection after its test ended would try the real
// network, which this sandbox answers with a DNS failure workerd reports as an uncaught internal error.
const original = globalThis.fetch;
globalThis.fetch = (async (input: Request | string | URL, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.hostname === "localhost" || url.hostname === "127.0.0.1") return original(input, init);
  throw new TypeError(`no network in tests: ${url.host}`);
}) as typeof fetch;

// A connected workspace's object retries its host from its alarm; none may fire once this file's storage is gone.
afterAll(async () => {
  for (const id of CONNECTED_WORKSPACES) {
    await runInDurableObject(env.WORKSPACES.getByName(id), async (_object, state) => {
      await state.storage.deleteAlarm();
    }).catch(() => undefined);
  }
  CONNECTED_WORKSPACES.clear();
});
