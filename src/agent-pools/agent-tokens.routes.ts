/**
 * Agent tokens of an agent pool (the agent tokens API reference): list and create here; show and delete by id are
 * GET/DELETE /authentication-tokens/:id (src/tokens/tokens.routes.ts), shared with the API tokens.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, paginated } from "../jsonapi/document";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { serializeAuthenticationToken } from "../tokens/tokens.serialize";
import { poolIdParam } from "./agent-pools.schemas";
import { createPoolToken, listPoolTokens } from "./agent-tokens.service";
import { defineRoutes } from "../jsonapi/define-route";
import { authenticationTokenResource } from "../tokens/tokens.schemas";

const defineRoute = defineRoutes({ tags: ["Agent tokens"] });
export const agentTokens = router();

// The docs say `authentication-tokens`; go-tfe sends `agent-tokens`.
const createBody = z
  .object({
    data: z.object({
      type: z.enum(["authentication-tokens", "agent-tokens"]),
      attributes: z.object({ description: z.string().max(LIMITS.descriptionMax) }),
    }),
  })
  .openapi("AgentTokenCreate");

agentTokens.openapi(
  defineRoute({
    method: "get",
    path: "/agent-pools/{pool_id}/authentication-tokens",
    // Agent tokens: listing and minting follow the pool's management (read and delete by id: `token.manage`).
    action: "agent-pools.manage",
    summary: "List an agent pool's tokens (sort: created-at or -created-at); no secrets",
    request: {
      params: poolIdParam,
      query: pageQuery.extend({ sort: z.string().max(32).optional() }).passthrough(),
    },
    responses: ok("A page of agent tokens", listDocument(authenticationTokenResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { tokens, total } = await listPoolTokens(callerOf(c), c.req.valid("param").pool_id, query.sort, page);
    return jsonapi(
      c,
      paginated(
        c,
        tokens.map((t) => serializeAuthenticationToken(t)),
        page,
        total,
      ),
    );
  },
);

agentTokens.openapi(
  defineRoute({
    method: "post",
    path: "/agent-pools/{pool_id}/authentication-tokens",
    action: "agent-pools.manage",
    summary: "Create an agent token (its secret is shown only in this response; it never authenticates API requests)",
    request: { params: poolIdParam, body: jsonBody(createBody) },
    responses: ok("The token, with its secret", resourceDocument(authenticationTokenResource), 201),
  }),
  async (c) => {
    const minted = await createPoolToken(callerOf(c), c.req.valid("param").pool_id, c.req.valid("json").data.attributes.description);
    return jsonapi(c, { data: serializeAuthenticationToken(minted.token, minted.secret) }, 201);
  },
);
