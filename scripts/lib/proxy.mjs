// A recording reverse proxy in front of the service: the clients talk to it, it forwards every request unchanged
// (Host header included, so the URLs the service builds point back at the proxy) and keeps a record of each
// exchange (method, path, status, the first bytes of both bodies). The harness uses the records to name the
// request that made a step fail. Node built-ins only.
import { createServer, request } from "node:http";
import { brotliDecompressSync, constants, gunzipSync, inflateSync } from "node:zlib";
import { listen } from "./harness.mjs";

const KEEP = 64 * 1024; // bytes of each body kept in a record
const KEEP_COMPRESSED = 256 * 1024; // compressed response bytes kept to decode the first KEEP bytes

// The first bytes of a possibly compressed body, as text (a truncated stream decodes as far as it goes).
function decode(buf, encoding) {
  try {
    const flush = { finishFlush: constants.Z_SYNC_FLUSH };
    if (encoding === "gzip") buf = gunzipSync(buf, flush);
    else if (encoding === "deflate") buf = inflateSync(buf, flush);
    else if (encoding === "br") buf = brotliDecompressSync(buf, { finishFlush: constants.BROTLI_OPERATION_FLUSH });
  } catch (e) {
    return `(${encoding} body could not be decoded: ${e.message})`;
  }
  return buf.subarray(0, KEEP).toString("utf8");
}

export async function startRecordingProxy({ target, maxRecords = 5_000 }) {
  const upstream = new URL(target);
  const records = [];
  let seq = 0;
  const server = createServer((req, res) => {
    const rec = {
      seq: ++seq,
      at: Date.now(),
      method: req.method,
      path: req.url,
      status: 0,
      reqBody: "",
      resBody: "",
      ua: req.headers["user-agent"] ?? "",
      ms: 0,
      hopTrace: null,
    };
    records.push(rec);
    if (records.length > maxRecords) records.shift();
    const reqChunks = [];
    let reqKept = 0;
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      rec.status = ures.statusCode;
      // The service's hop trace (EXPOSE_HOPS=1), which bench/edge.mjs prices by distance.
      rec.hopTrace = ures.headers["x-hop-trace"] ?? null;
      res.writeHead(ures.statusCode, ures.statusMessage, ures.rawHeaders);
      const resChunks = [];
      let resKept = 0;
      const encoding = ures.headers["content-encoding"];
      const limit = encoding ? KEEP_COMPRESSED : KEEP;
      ures.on("data", (d) => {
        if (resKept < limit) {
          resChunks.push(d.subarray(0, limit - resKept));
          resKept += Math.min(d.length, limit - resKept);
        }
      });
      ures.on("end", () => {
        rec.ms = Date.now() - rec.at;
        rec.resBody = decode(Buffer.concat(resChunks), encoding);
      });
      ures.pipe(res);
    });
    up.on("error", (e) => {
      rec.status = 502;
      rec.resBody = `proxy: upstream error: ${e.message}`;
      if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(rec.resBody);
    });
    req.on("data", (d) => {
      if (reqKept < KEEP) {
        reqChunks.push(d.subarray(0, KEEP - reqKept));
        reqKept += Math.min(d.length, KEEP - reqKept);
      }
    });
    req.on("end", () => (rec.reqBody = Buffer.concat(reqChunks).toString("utf8")));
    req.pipe(up);
  });
  server.keepAliveTimeout = 30_000;
  const port = await listen(server);
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    records,
    mark: () => seq, // records after a mark: records.filter((r) => r.seq > mark)
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
