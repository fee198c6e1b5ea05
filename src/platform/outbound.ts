/**
 * Requests the Worker makes to other systems go through here. A URL is refused when it is not http(s), names a
 * link-local or metadata address, or the service's own origin (always), or a private or loopback address (unless the
 * operator allows them with OUTBOUND_ALLOW_PRIVATE=1, as local tests do); each redirect is checked the same way.
 * Names are checked as written: the platform's own egress does not reach private networks from a deployed Worker.
 */
import type { Bindings } from "../env";
import { readLimited } from "./body";

/** Names that reach a cloud's instance metadata service. */
const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

function ipv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

type AddressKind = "link-local" | "private" | "loopback" | "public";

function kindOf(hostname: string): AddressKind {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (METADATA_HOSTS.has(host)) return "link-local";
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  const v4 = ipv4(host) ?? (/^::ffff:/.test(host) ? ipv4(host.slice(7)) : null);
  if (v4) {
    const [a, b] = v4;
    if (a === 169 && b === 254) return "link-local";
    if (a === 127 || a === 0) return "loopback";
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return "private";
    return "public";
  }
  if (host.includes(":")) {
    if (host === "::1" || host === "::") return "loopback";
    if (/^fe[89ab]/.test(host)) return "link-local";
    if (/^f[cd]/.test(host) || host === "fd00:ec2::254") return host === "fd00:ec2::254" ? "link-local" : "private";
  }
  return "public";
}

/** Why the Worker may not request `url`, or null when it may. `self`: the service's own origin. */
export function outboundRefusal(env: Pick<Bindings, "OUTBOUND_ALLOW_PRIVATE">, url: string, self: string | null): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "it is not a URL";
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") return "only http and https URLs are requested";
  if (u.username || u.password) return "URLs with credentials are not requested";
  if (self && u.origin === new URL(self).origin) return "it is this service's own address";
  const kind = kindOf(u.hostname);
  if (kind === "link-local") return "it names a link-local or metadata address";
  if ((kind === "private" || kind === "loopback") && env.OUTBOUND_ALLOW_PRIVATE !== "1") {
    return `it names a ${kind} address (OUTBOUND_ALLOW_PRIVATE=1 allows those)`;
  }
  return null;
}

export class OutboundError extends Error {}

/**
 * GET of `url` within `timeoutMs`, its body read up to `maxBytes`; redirects followed (at most 5), each checked.
 * Throws OutboundError with the reason on a refusal, a failure, a non-2xx status or an oversized body.
 */
export async function outboundGet(
  env: Pick<Bindings, "OUTBOUND_ALLOW_PRIVATE">,
  url: string,
  opts: { self: string | null; timeoutMs: number; maxBytes: number; accept?: string },
): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let at = url;
  for (let hop = 0; hop <= 5; hop++) {
    const refused = outboundRefusal(env, at, opts.self);
    if (refused) throw new OutboundError(`${at} is not requested: ${refused}`);
    let res: Response;
    try {
      res = await fetch(at, { redirect: "manual", signal, headers: { Accept: opts.accept ?? "*/*", "User-Agent": "workspace-service" } });
    } catch (err) {
      throw new OutboundError(`${at} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (res.status >= 300 && res.status < 400 && res.headers.get("location")) {
      await res.body?.cancel();
      at = new URL(res.headers.get("location") as string, at).toString();
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new OutboundError(`${at} answered ${res.status}`);
    }
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > opts.maxBytes) {
      await res.body?.cancel();
      throw new OutboundError(`${at} is larger than ${opts.maxBytes} bytes`);
    }
    try {
      return await readLimited(res.body, opts.maxBytes, () => new OutboundError(`${at} is larger than ${opts.maxBytes} bytes`));
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      throw new OutboundError(`${at} could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw new OutboundError(`${url} redirects more than 5 times`);
}

/**
 * Any request to another system (a VCS host's API, a webhook): refused with OutboundError before it leaves when its
 * address is not allowed, redirects followed by hand (at most 5) and each checked; a 303, or a 301/302 answering a
 * POST, becomes a GET without a body, and a redirect to another origin drops `Authorization` (Fetch standard,
 * HTTP-redirect fetch). The global `fetch` is read at call time (tests route it to fakes).
 */
export async function outboundFetch(
  env: Pick<Bindings, "OUTBOUND_ALLOW_PRIVATE">,
  url: string,
  init: RequestInit & { self: string | null; timeoutMs: number },
): Promise<Response> {
  const { self, timeoutMs, ...rest } = init;
  // A timer cleared once the answer's headers are in (or the request failed): none is left pending behind a request
  // that failed at once, which would outlive the alarm that made it.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    return await follow(env, url, { ...rest, redirect: "manual", signal: controller.signal }, self);
  } finally {
    clearTimeout(timer);
  }
}

async function follow(env: Pick<Bindings, "OUTBOUND_ALLOW_PRIVATE">, url: string, first: RequestInit, self: string | null): Promise<Response> {
  let at = url;
  let request: RequestInit = first;
  for (let hop = 0; hop <= 5; hop++) {
    const refused = outboundRefusal(env, at, self);
    if (refused) throw new OutboundError(`${new URL(at).host} is not requested: ${refused}`);
    let res: Response;
    try {
      res = await fetch(at, request);
    } catch (err) {
      throw new OutboundError(`${new URL(at).host} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    const location = res.headers.get("location");
    if (res.status < 300 || res.status > 399 || !location) return res;
    await res.body?.cancel();
    const next = new URL(location, at);
    const method = (request.method ?? "GET").toUpperCase();
    const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST");
    const headers = new Headers(request.headers);
    if (next.origin !== new URL(at).origin) headers.delete("authorization");
    request = { ...request, headers, ...(toGet ? { method: "GET", body: undefined } : {}) };
    at = next.toString();
  }
  throw new OutboundError(`${new URL(url).host} redirects more than 5 times`);
}
