/**
 * The signed configuration-archive URLs (outside /api/v2: no bearer token, raw tar.gz bodies, their own size limit).
 * The service streams uploads into the workspace's Durable Object in 1 MiB pieces and downloads back out in parts.
 */
import { signedQuery } from "../platform/signature";
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { archiveResponse, authoriseSlug, uploadArchive } from "./configuration-versions.signed.service";
import type { SlugMethod } from "./configuration-versions.urls";

export const slugs = new Hono<AppEnv>();

function target(c: Context<AppEnv>): { ws: string; cv: string } {
  const ws = c.req.param("ws") ?? "";
  const cv = c.req.param("cv") ?? "";
  if (!/^ws-[A-Za-z0-9]{1,64}$/.test(ws) || !/^cv-[A-Za-z0-9]{1,64}$/.test(cv)) throw ApiError.of("not_found");
  return { ws, cv };
}

async function authorise(c: Context<AppEnv>, method: SlugMethod): Promise<{ ws: string; cv: string }> {
  const t = target(c);
  await authoriseSlug(c.env, method, t, signedQuery(c));
  return t;
}

slugs.put("/_slugs/:ws/:cv", async (c) => {
  const t = await authorise(c, "PUT");
  await uploadArchive(c.env, t, c.req.raw.body, Number(c.req.header("Content-Length") ?? "0"));
  return c.body(null, 200);
});

slugs.get("/_slugs/:ws/:cv", async (c) => {
  const t = await authorise(c, "GET");
  return archiveResponse(c.env, t.ws, t.cv);
});
