// The web UI's workspace list page against the JSON list call it mirrors (the target: at 100k
// workspaces, the page's p50 is at most 1.5× the JSON list call's for the same query). bench/run.mjs calls it at its sizes.
//
//   measureUiList({ base, token, cookie?, organization, query?, seconds?, minRequests?, warmup? })
//     → Promise<{ query, ui: Stats, json: Stats, ratio, ratioP99, sameRows }>
//
//   base          the running server, e.g. "http://127.0.0.1:8787" (no trailing /api/v2)
//   token         an API token (the JSON call's bearer token; the UI session is made from it unless `cookie` is given)
//   cookie        optional: an existing UI session, "ws_session=…" (it must stand for the same caller as `token`)
//   organization  the organisation whose workspaces are listed
//   query         the list's query string, as both URLs take it: "search[name]=prod&sort=-name" ("" for page 1)
//   seconds       measuring time (default 2), at least `minRequests` (default 30) of each; `warmup` (default 3) pairs first
//   Stats         { n, p50, p99, mean } in ms, and hops { d1, do } per request from X-Hops (null unless EXPOSE_HOPS=1)
//   ratio         ui.p50 / json.p50 (the target: ≤ 1.5); ratioP99 the same for p99
//   sameRows      whether the page's rows (tr[data-workspace]) are the JSON page's workspace names, in order
//
// GET /app/:organization/workspaces?<query> and GET /api/v2/organizations/:organization/workspaces?<query> run at
// concurrency 1, interleaved (UI then JSON, then JSON then UI, …) so both see the same server state and load. A
// session this function makes is signed out at the end.
//
// Standalone, against a server already running (`npm start`, or bench/run.mjs's; RATE_LIMIT=0):
//   node bench/ui-list.mjs --url http://127.0.0.1:8787 --token "$TOKEN" --org acme [--query 'search[name]=prod'] [--seconds 5]
// prints the result as JSON.
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

function stats(samples, hops) {
  const sorted = [...samples].sort((a, b) => a - b);
  const known = hops.filter(Boolean);
  const mean = (k) => known.reduce((s, h) => s + h[k], 0) / known.length;
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    mean: sorted.reduce((s, x) => s + x, 0) / sorted.length,
    hops: known.length === hops.length && known.length ? { d1: mean("d1"), do: mean("do") } : null,
  };
}

const hopsOf = (res) => {
  const m = /d1=(\d+)\s*,\s*do=(\d+)/.exec(res.headers.get("x-hops") ?? "");
  return m ? { d1: Number(m[1]), do: Number(m[2]) } : null;
};

/** A UI session for `token` (POST /app/session, as the sign-in form sends it): the cookie, "ws_session=…". */
async function signIn(base, token) {
  const res = await fetch(`${base}/app/session`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
    body: new URLSearchParams({ token }).toString(),
    redirect: "manual",
  });
  const m = /ws_session=([^;]+)/.exec(res.headers.get("set-cookie") ?? "");
  if (res.status !== 303 || !m) throw new Error(`signing in to the UI answered ${res.status}`);
  return `ws_session=${m[1]}`;
}

/**
 * @param {{ base: string, token: string, cookie?: string, organization: string, query?: string, seconds?: number, minRequests?: number,
 *   warmup?: number }} options
 */
export async function measureUiList({ base, token, cookie, organization, query = "", seconds = 2, minRequests = 30, warmup = 3 }) {
  base = base.replace(/\/$/, "");
  const q = query.replace(/^\?/, "");
  const suffix = q ? `?${q}` : "";
  const org = encodeURIComponent(organization);
  const uiUrl = `${base}/app/${org}/workspaces${suffix}`;
  const jsonUrl = `${base}/api/v2/organizations/${org}/workspaces${suffix}`;
  const session = cookie ?? (await signIn(base, token));

  const timed = async (url, headers) => {
    const t = performance.now();
    const res = await fetch(url, { headers, redirect: "manual" });
    const body = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${body.slice(0, 300)}`);
    return { ms, body, hops: hopsOf(res) };
  };
  const uiCall = () => timed(uiUrl, { Cookie: session });
  const jsonCall = () => timed(jsonUrl, { Authorization: `Bearer ${token}`, Accept: "application/vnd.api+json" });

  try {
    // The same query must give the same page: the comparison is only meaningful then.
    const [page, doc] = [await uiCall(), await jsonCall()];
    const rows = [...page.body.matchAll(/<tr data-workspace="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, "&"));
    const sameRows = JSON.stringify(rows) === JSON.stringify(JSON.parse(doc.body).data.map((w) => w.attributes.name));

    for (let i = 0; i < warmup; i++) {
      await uiCall();
      await jsonCall();
    }
    const ui = { ms: [], hops: [] };
    const json = { ms: [], hops: [] };
    const record = (into, r) => {
      into.ms.push(r.ms);
      into.hops.push(r.hops);
    };
    const until = performance.now() + seconds * 1000;
    for (let i = 0; performance.now() < until || ui.ms.length < minRequests || json.ms.length < minRequests; i++) {
      // Alternate which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        record(ui, await uiCall());
        record(json, await jsonCall());
      } else {
        record(json, await jsonCall());
        record(ui, await uiCall());
      }
    }
    const u = stats(ui.ms, ui.hops);
    const j = stats(json.ms, json.hops);
    return { query: q, ui: u, json: j, ratio: u.p50 / j.p50, ratioP99: u.p99 / j.p99, sameRows };
  } finally {
    if (!cookie) await fetch(`${base}/app/session/delete`, { method: "POST", headers: { Cookie: session, Origin: base }, redirect: "manual" }).catch(() => {});
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      token: { type: "string" },
      cookie: { type: "string" },
      org: { type: "string" },
      query: { type: "string", default: "" },
      seconds: { type: "string", default: "2" },
    },
  });
  if (!values.url || !values.token || !values.org) {
    console.error(
      "usage: node bench/ui-list.mjs --url <base> --token <API token> --org <organisation> [--query <query>] [--seconds <s>] [--cookie ws_session=…]",
    );
    process.exit(2);
  }
  const result = await measureUiList({
    base: values.url,
    token: values.token,
    cookie: values.cookie,
    organization: values.org,
    query: values.query,
    seconds: Number(values.seconds),
  });
  console.log(JSON.stringify(result, null, 2));
}
