/**
 * The registry's signed object URLs (outside /api: no bearer token, raw bodies, their own size limits): `links.upload`
 * and the other upload links of modules and providers, and the download locations the registry protocols give
 * Terraform. Uploads stream into R2; downloads stream out of it.
 */
import { signedQuery } from "../platform/signature";
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { authoriseObject, downloadObject, uploadObject } from "./registry-objects.service";
import { OBJECT_KINDS, type ObjectKind, type ObjectMethod } from "./registry-urls";

export const registryObjects = new Hono<AppEnv>();

async function target(c: Context<AppEnv>, method: ObjectMethod) {
  const kind = c.req.param("kind") as ObjectKind;
  const id = c.req.param("id") ?? "";
  if (!OBJECT_KINDS.includes(kind) || !/^[a-z]+-[A-Za-z0-9]{1,64}$/.test(id)) throw ApiError.of("not_found");
  return authoriseObject(c.env, method, kind, id, signedQuery(c));
}

registryObjects.put("/_registry/object/:kind/:id", async (c) => {
  await uploadObject(c.env, await target(c, "PUT"), c.req.raw.headers, c.req.raw.body);
  return c.body(null, 200);
});

registryObjects.get("/_registry/object/:kind/:id", async (c) => downloadObject(c.env, await target(c, "GET")));
