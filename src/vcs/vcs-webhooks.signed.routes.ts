/**
 * The ingress of VCS deliveries (outside /api/v2: no token; the host signs each delivery with the hook's secret).
 * The body is read raw, as signed, up to the largest delivery GitHub sends (25 MB).
 */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { readLimited } from "../platform/body";
import { receiveDelivery } from "./vcs-webhooks.signed.service";

export const vcsWebhooks = new Hono<AppEnv>();

const DELIVERY_MAX_BYTES = 25 * 1024 * 1024;

vcsWebhooks.post("/webhooks/vcs/:hookId", async (c) => {
  const hookId = c.req.param("hookId");
  if (!/^hook-[A-Za-z0-9]{1,64}$/.test(hookId)) throw ApiError.of("not_found");
  const body = await readLimited(c.req.raw.body, DELIVERY_MAX_BYTES, () =>
    ApiError.of("payload_too_large", { detail: `Deliveries are limited to ${DELIVERY_MAX_BYTES} bytes` }),
  );
  const answer = await receiveDelivery(c.env, hookId, c.req.raw.headers, body, new URL(c.req.url).origin);
  return c.body(null, answer.status, { "X-Delivery-Outcome": answer.outcome });
});
