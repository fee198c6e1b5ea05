/**
 * API tokens: team tokens (legacy single and described multiples), the organisation token, user
 * tokens. Secrets exist in clear only in the create response; D1 keeps their SHA-256.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated, type Page } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { noContentResponse, ok, optionalJsonBody, router } from "../jsonapi/validation";
import type { Token } from "./tokens.d1";
import { serializeAuthenticationToken } from "./tokens.serialize";
import {
  createLegacyTeamToken,
  createOrganizationToken,
  createTeamToken,
  createUserToken,
  deleteLegacyTeamTokenOf,
  deleteOrganizationTokenOf,
  deleteToken,
  listOrganizationTeamTokens,
  listTeamTokens,
  listUserTokens,
  revokeTeamTokens,
  showLegacyTeamToken,
  showOrganizationToken,
  showToken,
  type MintedToken,
  type TokenInput,
} from "./tokens.service";
import { defineRoutes } from "../jsonapi/define-route";
import { authenticationTokenResource, tokenAttributesInput } from "./tokens.schemas";
import { teamParam } from "../teams/teams.schemas";
import { userParam } from "../users/users.schemas";

const defineRoute = defineRoutes({ tags: ["Tokens"] });
export const tokens = router();
const tokenResponse = ok("The token (no secret)", resourceDocument(authenticationTokenResource));
const createdTokenResponse = ok("The token, with its secret", resourceDocument(authenticationTokenResource), 201);

/**
 * An optional create body (go-tfe sends none, or `expired-at` / `description`). A bad body is not thrown: the
 * service reports it only to a caller allowed to create the token.
 */
const tokenBody = z
  .object({ data: z.object({ type: z.string().max(64).optional(), attributes: tokenAttributesInput.optional() }).optional() })
  .optional()
  .transform((b): { attributes: TokenInput } => ({ attributes: b?.data?.attributes ?? {} }));
/** Token bodies are optional and may be empty even with a JSON:API Content-Type: read by the handler (optionalJsonBody). */
const TOKEN_BODY_DOC = 'Body (optional): `{"data":{"type":"authentication-tokens","attributes":{"description":"...","expired-at":"..."}}}`.';

const created = (c: Context, t: MintedToken) => jsonapi(c, { data: serializeAuthenticationToken(t.token, t.secret) }, 201);
const listed = (c: Context, page: Page, p: { tokens: Token[]; total: number }) =>
  jsonapi(
    c,
    paginated(
      c,
      p.tokens.map((t) => serializeAuthenticationToken(t)),
      page,
      p.total,
    ),
  );

// ---- team tokens ----

tokens.openapi(
  defineRoute({
    method: "post",
    path: "/teams/{team_id}/authentication-token",
    action: "teams.manage-tokens",
    summary: "Create (replace) the team's legacy token",
    request: { params: teamParam },
    description: TOKEN_BODY_DOC,
    responses: createdTokenResponse,
  }),
  async (c) => created(c, await createLegacyTeamToken(callerOf(c), c.req.valid("param").team_id, await optionalJsonBody(c, tokenBody))),
);

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/teams/{team_id}/authentication-token",
    action: "teams.manage-tokens",
    summary: "Show the team's legacy token",
    request: { params: teamParam },
    responses: tokenResponse,
  }),
  async (c) => jsonapi(c, { data: serializeAuthenticationToken(await showLegacyTeamToken(callerOf(c), c.req.valid("param").team_id)) }),
);

tokens.openapi(
  defineRoute({
    method: "delete",
    path: "/teams/{team_id}/authentication-token",
    action: "teams.manage-tokens",
    summary: "Delete the team's legacy token",
    request: { params: teamParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteLegacyTeamTokenOf(callerOf(c), c.req.valid("param").team_id);
    return noContent(c);
  },
);

tokens.openapi(
  defineRoute({
    method: "post",
    path: "/teams/{team_id}/authentication-tokens",
    action: "teams.manage-tokens",
    summary: "Create a described team token",
    request: { params: teamParam },
    description: TOKEN_BODY_DOC,
    responses: createdTokenResponse,
  }),
  async (c) => created(c, await createTeamToken(callerOf(c), c.req.valid("param").team_id, await optionalJsonBody(c, tokenBody))),
);

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/teams/{team_id}/authentication-tokens",
    action: "teams.manage-tokens",
    summary: "List a team's tokens",
    request: { params: teamParam, query: pageQuery },
    responses: ok("A page of tokens", listDocument(authenticationTokenResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    return listed(c, page, await listTeamTokens(callerOf(c), c.req.valid("param").team_id, page));
  },
);

tokens.openapi(
  defineRoute({
    method: "delete",
    path: "/teams/{team_id}/authentication-tokens",
    action: "teams.manage-tokens",
    summary: "Revoke every token of a team (legacy and described) in one call",
    request: { params: teamParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await revokeTeamTokens(callerOf(c), c.req.valid("param").team_id);
    return noContent(c);
  },
);

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/team-tokens",
    action: "teams.manage",
    summary: "List the organisation's team tokens (q: team name; sort: team-name, created-by, created-at, expired-at, last-used-at)",
    request: {
      params: orgParam,
      query: pageQuery.extend({ q: z.string().max(255).optional(), sort: z.string().max(64).optional() }).passthrough(),
    },
    responses: ok("A page of team tokens", listDocument(authenticationTokenResource)),
  }),
  async (c) => {
    const { q, sort, ...query } = c.req.valid("query");
    const page = pageOf(query);
    return listed(c, page, await listOrganizationTeamTokens(callerOf(c), c.req.valid("param").organization_name, { q, sort }, page));
  },
);

// ---- organisation token ----

/** `?token=audit-trails` addresses the audit-trails token; without it, the ordinary organisation token. */
const orgTokenQuery = z.object({ token: z.enum(["audit-trails"]).optional() });
const kindOf = (q: { token?: "audit-trails" }) => q.token ?? "organization";

tokens.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/authentication-token",
    action: "organization.manage",
    summary: "Create (replace) the organisation token",
    request: { params: orgParam, query: orgTokenQuery },
    description: TOKEN_BODY_DOC,
    responses: createdTokenResponse,
  }),
  async (c) =>
    created(
      c,
      await createOrganizationToken(callerOf(c), c.req.valid("param").organization_name, await optionalJsonBody(c, tokenBody), kindOf(c.req.valid("query"))),
    ),
);

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/authentication-token",
    action: "organization.owner",
    summary: "Show the organisation token",
    request: { params: orgParam, query: orgTokenQuery },
    responses: tokenResponse,
  }),
  async (c) =>
    jsonapi(c, {
      data: serializeAuthenticationToken(await showOrganizationToken(callerOf(c), c.req.valid("param").organization_name, kindOf(c.req.valid("query")))),
    }),
);

tokens.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/authentication-token",
    action: "organization.owner",
    summary: "Delete the organisation token",
    request: { params: orgParam, query: orgTokenQuery },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteOrganizationTokenOf(callerOf(c), c.req.valid("param").organization_name, kindOf(c.req.valid("query")));
    return noContent(c);
  },
);

// ---- user tokens ----

tokens.openapi(
  defineRoute({
    method: "post",
    path: "/users/{user_id}/authentication-tokens",
    action: "user.self-or-site-admin",
    summary: "Create a user token: for yourself, or (site admins) a user's first token",
    request: { params: userParam },
    description: TOKEN_BODY_DOC,
    responses: createdTokenResponse,
  }),
  async (c) => created(c, await createUserToken(callerOf(c), c.req.valid("param").user_id, await optionalJsonBody(c, tokenBody))),
);

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/users/{user_id}/authentication-tokens",
    action: "user.self",
    summary: "List your user tokens",
    request: { params: userParam, query: pageQuery },
    responses: ok("A page of tokens", listDocument(authenticationTokenResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    return listed(c, page, await listUserTokens(callerOf(c), c.req.valid("param").user_id, page));
  },
);

const tokenParam = z.object({ token_id: z.string().regex(/^at-[A-Za-z0-9]{1,64}$/) });

tokens.openapi(
  defineRoute({
    method: "get",
    path: "/authentication-tokens/{token_id}",
    action: "token.manage",
    summary: "Show a token (an API token, or an agent pool's agent token); no secret",
    request: { params: tokenParam },
    responses: tokenResponse,
  }),
  async (c) => {
    const shown = await showToken(callerOf(c), c.req.valid("param").token_id);
    return jsonapi(c, { data: serializeAuthenticationToken(shown.token) });
  },
);

tokens.openapi(
  defineRoute({
    method: "delete",
    path: "/authentication-tokens/{token_id}",
    action: "token.manage",
    summary: "Delete a token, API or agent (it stops working at once)",
    request: { params: tokenParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteToken(callerOf(c), c.req.valid("param").token_id);
    return noContent(c);
  },
);
