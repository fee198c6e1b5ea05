/**
 * A client of the HCP Terraform / Terraform Enterprise API as a careful script would use it against the real
 * service: it spaces its requests (HCP allows 30 per second per token), waits out a 429 for as long as `Retry-After`
 * says, retries a refused connection or a 502/503/504 a few times, and pages a list by following `links.next` (or
 * `meta.pagination.next-page` where a server gives only that).
 */

export type Json = Record<string, any>;

/** A resource of a JSON:API document. */
export interface Resource {
  id: string;
  type: string;
  attributes?: Json;
  relationships?: Json;
  links?: Json;
}

/** A request the server refused, or one that never reached it (`status` 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly url: string;
  /** The error object's `source.pointer` (a refused attribute), when the server named one. */
  readonly pointer: string | null;
  constructor(status: number, url: string, message: string, pointer: string | null = null) {
    super(message);
    this.status = status;
    this.url = url;
    this.pointer = pointer;
  }
}

export interface ClientOptions {
  /** The server's base URL (`https://app.terraform.io`), with or without `/api/v2`. */
  base: string;
  token: string;
  /** Requests per second at most; 0: no limit of our own (a 429 is still waited out). */
  rate?: number;
  /** Called before each wait a 429 imposes, for the progress output. */
  onThrottle?: (seconds: number) => void;
  /** Counts every request made (the bench reads it). */
  counter?: { requests: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RETRIES = 5;

/** `Retry-After` in seconds or as an HTTP date; a missing or odd one waits a second. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (!header) return 1000;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? 1000 : Math.max(0, at - now);
}

function errorText(status: number, body: unknown): { message: string; pointer: string | null } {
  const e = (body as Json | null)?.errors?.[0];
  if (e && typeof e === "object") {
    const text = [e.title, e.detail].filter((s) => typeof s === "string" && s).join(": ");
    return { message: text || `HTTP ${status}`, pointer: typeof e.source?.pointer === "string" ? e.source.pointer : null };
  }
  return { message: `HTTP ${status}`, pointer: null };
}

export class ApiClient {
  readonly origin: string;
  readonly api: string;
  private readonly token: string;
  private readonly interval: number;
  private nextSlot = 0;
  private readonly onThrottle?: (seconds: number) => void;
  private readonly counter?: { requests: number };

  constructor(o: ClientOptions) {
    const url = new URL(o.base.replace(/\/+$/, ""));
    this.origin = url.origin;
    const path = url.pathname.replace(/\/api\/v2$/, "").replace(/\/$/, "");
    this.api = `${url.origin}${path}/api/v2`;
    this.token = o.token;
    this.interval = o.rate ? 1000 / o.rate : 0;
    this.onThrottle = o.onThrottle;
    this.counter = o.counter;
  }

  /** Waits for this request's slot: requests leave at most `rate` per second, however many run at once. */
  private async slot(): Promise<void> {
    if (!this.interval) return;
    const now = Date.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + this.interval;
    if (at > now) await sleep(at - now);
  }

  private url(pathOrUrl: string): string {
    return /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.api}${pathOrUrl}`;
  }

  /** One request with its retries; resolves the parsed body (null for 204), throws ApiError otherwise. */
  async request(method: string, pathOrUrl: string, body?: unknown): Promise<Json | null> {
    const url = this.url(pathOrUrl);
    const res = await this.send(url, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ApiError(res.status, url, `${method} ${url}: the answer (HTTP ${res.status}) is not JSON`);
      }
    }
    if (!res.ok) {
      const { message, pointer } = errorText(res.status, parsed);
      throw new ApiError(res.status, url, message, pointer);
    }
    return parsed as Json | null;
  }

  /** Like `request`, but a 404 resolves null. */
  async find(pathOrUrl: string): Promise<Json | null> {
    try {
      return await this.request("GET", pathOrUrl);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }

  /** Every resource of a list, page after page. */
  async list(path: string, query: Record<string, string> = {}): Promise<Resource[]> {
    const first = new URL(this.url(path));
    for (const [k, v] of Object.entries(query)) first.searchParams.set(k, v);
    if (!first.searchParams.has("page[size]")) first.searchParams.set("page[size]", "100");
    const out: Resource[] = [];
    let next: string | null = first.toString();
    const seen = new Set<string>();
    while (next && !seen.has(next)) {
      seen.add(next);
      const doc = await this.request("GET", next);
      const page = (doc?.data ?? []) as Resource[];
      out.push(...page);
      next = this.nextPage(next, doc);
    }
    return out;
  }

  private nextPage(current: string, doc: Json | null): string | null {
    const link = doc?.links?.next;
    if (typeof link === "string" && link) return new URL(link, this.origin).toString();
    const n = doc?.meta?.pagination?.["next-page"];
    if (typeof n === "number") {
      const u = new URL(current);
      u.searchParams.set("page[number]", String(n));
      return u.toString();
    }
    return null;
  }

  /** A blob (a state's bytes). The token goes only to the API's own origin, never to a storage host it links to. */
  async download(url: string): Promise<Buffer> {
    const absolute = new URL(url, this.origin);
    const headers: Record<string, string> = absolute.origin === this.origin ? { Authorization: `Bearer ${this.token}` } : {};
    const res = await this.send(absolute.toString(), { method: "GET", headers, redirect: "follow" });
    if (!res.ok) throw new ApiError(res.status, absolute.toString(), `download failed: HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }

  /** PUT of raw bytes to an upload URL the API gave. */
  async upload(url: string, bytes: Buffer): Promise<void> {
    const absolute = new URL(url, this.origin);
    const headers: Record<string, string> = { "Content-Type": "application/octet-stream" };
    if (absolute.origin === this.origin) headers.Authorization = `Bearer ${this.token}`;
    const res = await this.send(absolute.toString(), { method: "PUT", headers, body: bytes });
    await res.arrayBuffer();
    if (!res.ok) throw new ApiError(res.status, absolute.toString(), `upload failed: HTTP ${res.status}`);
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      await this.slot();
      if (this.counter) this.counter.requests++;
      let res: Response;
      try {
        res = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
      } catch (e) {
        if (attempt >= RETRIES) {
          const c = (e as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
          const cause = c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? (e as Error).message;
          throw new ApiError(0, url, `${new URL(url).host} is unreachable (${cause})`);
        }
        await sleep(250 * 2 ** attempt);
        continue;
      }
      if (res.status === 429 && attempt < RETRIES * 4) {
        const wait = retryAfterMs(res.headers.get("retry-after"));
        await res.arrayBuffer();
        this.onThrottle?.(wait / 1000);
        // Hold every request of this token, not only this one: the limit is the token's.
        this.nextSlot = Math.max(this.nextSlot, Date.now() + wait);
        await sleep(wait);
        continue;
      }
      if ((res.status === 502 || res.status === 503 || res.status === 504) && attempt < RETRIES) {
        await res.arrayBuffer();
        await sleep(retryAfterMs(res.headers.get("retry-after")) * (attempt + 1));
        continue;
      }
      return res;
    }
  }
}
