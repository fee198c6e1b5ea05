// Routes outbound `fetch` calls to in-memory handlers (the fakes of fake-vcs.ts, a delivery receiver...) by host, so
// a test sees every request the code under test makes and nothing reaches the network.
//
// Inside vitest's workerd pool the main Worker (its Durable Objects included) runs in the same isolate as the tests,
// so replacing `globalThis.fetch` there also answers the Worker's own calls; see README.md for the experiment and the
// other options that were weighed.
import { afterEach } from "vitest";

export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

export interface FakeFetchOptions {
  /** Follow 3xx answers for requests with `redirect: "follow"` (the default), as a real fetch does. Default true. */
  followRedirects?: boolean;
  /** Every request seen, whichever handler answered it. */
  log?: Request[];
}

/**
 * A `fetch` that answers from `routes`, keyed by host (`api.github.com`, `gitlab.example.com:8443`). A request to any
 * other host is refused with a TypeError, like an unreachable network.
 */
export function fakeFetch(routes: Record<string, FetchHandler>, options: FakeFetchOptions = {}): typeof fetch {
  const follow = options.followRedirects ?? true;
  const handlerFor = (url: URL) => routes[url.host] ?? routes[url.hostname];
  const fetchFake = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    let request = new Request(input, init);
    for (let hops = 0; ; hops++) {
      const url = new URL(request.url);
      const handler = handlerFor(url);
      options.log?.push(request.clone());
      if (!handler) throw new TypeError(`fake fetch: no route for ${url.host} (${request.method} ${request.url})`);
      const response = await handler.fetch(request);
      const location = response.headers.get("location");
      if (!follow || request.redirect !== "follow" || !location || response.status < 300 || response.status > 399) return response;
      if (hops >= 20) throw new TypeError("fake fetch: too many redirects");
      // 303, and 301/302 on POST, turn into a GET without a body (Fetch standard, HTTP-redirect fetch).
      const toGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === "POST");
      const next = new URL(location, request.url);
      const headers = new Headers(request.headers);
      // A cross-origin redirect drops Authorization (Fetch standard, HTTP-redirect fetch step 14).
      if (next.origin !== url.origin) headers.delete("authorization");
      request = new Request(next, {
        method: toGet ? "GET" : request.method,
        headers,
        body: toGet || request.method === "GET" || request.method === "HEAD" ? undefined : await request.clone().arrayBuffer(),
        redirect: "follow",
      });
    }
  };
  return fetchFake as typeof fetch;
}

/** Replaces `globalThis.fetch` with `fakeFetch(routes)`; returns the function that restores the original. */
export function installFakeFetch(routes: Record<string, FetchHandler>, options: FakeFetchOptions = {}): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = fakeFetch(routes, options);
  return () => {
    globalThis.fetch = original;
  };
}

/** `installFakeFetch` for a test file: the fakes one test installs are taken away after that test, last first. */
export function fakeFetchPerTest(): (routes: Record<string, FetchHandler>, options?: FakeFetchOptions) => void {
  const restores: Array<() => void> = [];
  afterEach(() => {
    for (const r of restores.splice(0).reverse()) r();
  });
  return (routes, options) => {
    restores.push(installFakeFetch(routes, options));
  };
}

/** A request a receiver kept: its URL, body and headers. */
export interface Received {
  url: string;
  body: string;
  headers: Headers;
}

/**
 * Makes receivers at https://`host` for a test file: each keeps every request it gets (returned), `answer` decides
 * each status (200 by default); each is taken away after the test that made it.
 */
export function receiversAt(host: string): (answer?: (r: Received, n: number) => Response) => Received[] {
  const install = fakeFetchPerTest();
  return (answer = () => new Response("ok")) => {
    const got: Received[] = [];
    install({
      [host]: {
        async fetch(request: Request) {
          const r = { url: request.url, body: await request.text(), headers: request.headers };
          got.push(r);
          return answer(r, got.length);
        },
      },
    });
    return got;
  };
}

/** Addresses every outbound request refuses (loopback, private, link-local/metadata, IPv6 unique local). */
export const NON_PUBLIC_URLS = ["http://127.0.0.1:8080/", "http://10.0.0.7/", "http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/"];

/** HMAC-SHA512 of `body` under `key`, as hex: the signature notification and run task deliveries carry. */
export async function hmacSha512Hex(key: string, body: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-512" }, false, ["sign"]);
  return Array.from(new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(body))), (b) => b.toString(16).padStart(2, "0")).join("");
}
