// The importer's API client against a stand-in server: it pages by `links.next` (and by `meta.pagination` where a
// server gives only that), waits out a 429 and asks again, and sends its token to the API's origin only.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiError, retryAfterMs } from "../../tools/import/api.client.ts";

type Seen = { url: string; auth: string | undefined };
const seen: Seen[] = [];
let api: Server;
let storage: Server;
let apiBase: string;
let storageBase: string;
let throttled = 0;

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(s.address() as { port: number }).port}`)));
const json = (body: unknown) => JSON.stringify(body);

beforeAll(async () => {
  storage = createServer((req: IncomingMessage, res) => {
    seen.push({ url: `storage${req.url}`, auth: req.headers.authorization });
    res.end("state-bytes");
  });
  storageBase = await listen(storage);
  api = createServer((req, res) => {
    seen.push({ url: req.url ?? "", auth: req.headers.authorization });
    const url = new URL(req.url ?? "", "http://x");
    res.setHeader("content-type", "application/vnd.api+json");
    if (url.pathname === "/api/v2/things") {
      const page = url.searchParams.get("page[number]") ?? "1";
      if (page === "1")
        return res.end(json({ data: [{ id: "a", type: "things" }], links: { next: `${apiBase}/api/v2/things?page%5Bnumber%5D=2&page%5Bsize%5D=100` } }));
      if (page === "2") return res.end(json({ data: [{ id: "b", type: "things" }], links: {}, meta: { pagination: { "next-page": 3 } } }));
      return res.end(json({ data: [{ id: "c", type: "things" }], meta: { pagination: { "next-page": null } } }));
    }
    if (url.pathname === "/api/v2/busy") {
      if (throttled++ < 2) {
        res.statusCode = 429;
        res.setHeader("retry-after", "0");
        return res.end(json({ errors: [{ status: "429", title: "Too many requests" }] }));
      }
      return res.end(json({ data: { id: "ok", type: "things" } }));
    }
    if (url.pathname === "/api/v2/bad") {
      res.statusCode = 422;
      return res.end(json({ errors: [{ status: "422", title: "invalid attribute", detail: "no", source: { pointer: "/data/attributes/x" } }] }));
    }
    if (url.pathname === "/own-blob") return res.end("own");
    res.statusCode = 404;
    res.end(json({ errors: [{ status: "404", title: "not found" }] }));
  });
  apiBase = await listen(api);
});

afterAll(() => {
  api?.close();
  storage?.close();
});

describe("the importer's API client", () => {
  it("pages a list by links.next, then by meta.pagination", async () => {
    const client = new ApiClient({ base: apiBase, token: "t0ken" });
    expect((await client.list("/things")).map((r) => r.id)).toEqual(["a", "b", "c"]);
  });

  it("waits out a 429 and asks again", async () => {
    const client = new ApiClient({ base: `${apiBase}/api/v2`, token: "t0ken" });
    const waits: number[] = [];
    const c2 = new ApiClient({ base: apiBase, token: "t0ken", onThrottle: (s) => waits.push(s) });
    expect((await c2.request("GET", "/busy"))?.data.id).toBe("ok");
    expect(waits).toEqual([0, 0]);
    expect(seen.filter((s) => s.url === "/api/v2/busy")).toHaveLength(3);
    expect(client.api).toBe(`${apiBase}/api/v2`);
  });

  it("turns an error document into an ApiError with its pointer", async () => {
    const client = new ApiClient({ base: apiBase, token: "t0ken" });
    const e = await client.request("POST", "/bad", {}).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 422, pointer: "/data/attributes/x", message: "invalid attribute: no" });
    expect(await client.find("/missing")).toBeNull();
  });

  it("sends its token to the API's origin, never to a storage host a download URL names", async () => {
    const client = new ApiClient({ base: apiBase, token: "t0ken" });
    expect((await client.download(`${storageBase}/blob?sig=1`)).toString()).toBe("state-bytes");
    expect(seen.find((s) => s.url === "storage/blob?sig=1")?.auth).toBeUndefined();
    expect((await client.download("/own-blob")).toString()).toBe("own");
    expect(seen.find((s) => s.url === "/own-blob")?.auth).toBe("Bearer t0ken");
  });

  it("reads Retry-After in seconds or as a date", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(null)).toBe(1000);
  });
});
