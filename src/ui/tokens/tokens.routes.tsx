/** @jsxImportSource hono/jsx */
/**
 * The signed-in user's API tokens (`/app/settings/tokens`, where `terraform login` sends people when a host offers no
 * login.v1): listed by the service `GET /users/:id/authentication-tokens` calls, created as
 * `POST /users/:id/authentication-tokens` creates them (the secret shown once, on the answer to the form, and never
 * again) and revoked as `DELETE /authentication-tokens/:id` does. A team or organisation token's session has no user,
 * hence no tokens here.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError, ok } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { tokenAttributesInput } from "../../tokens/tokens.schemas";
import { createUserToken, deleteToken, listUserTokens } from "../../tokens/tokens.service";
import { callerOf, type Ctx } from "../context";
import { definePage } from "../define-page";
import { CreatedPage, type Refusal, TOKENS_PATH, TokensPage } from "./tokens.view";

export const tokensUi = new Hono<AppEnv>();

async function tokensPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const me = caller.principal;
  const tokens = me.kind === "user" ? (await listUserTokens(caller, me.userId, { number: 1, size: 100 })).tokens : null;
  return c.html(<TokensPage principal={me} tokens={tokens} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(tokensUi, "get", "/settings/tokens", "authenticated", (c) => tokensPage(c));

definePage(tokensUi, "post", "/settings/tokens", "user.self-or-site-admin", async (c) => {
  const form = await c.req.parseBody();
  const values = {
    description: typeof form.description === "string" ? form.description.trim() : "",
    expires: typeof form.expires === "string" ? form.expires.trim() : "",
    never: form.never === "on",
  };
  const caller = callerOf(c);
  const me = caller.principal;
  // A caller with no user has no tokens to create: the service refuses it as the API does.
  const userId = me.kind === "user" ? me.userId : "";
  const attributes = {
    description: values.description || null,
    "expired-at": values.never ? null : values.expires ? `${values.expires}T00:00:00Z` : undefined,
  };
  // The API's own schema, then the service's rules (a past or malformed date): their reasons, next to the form.
  const parsed = tokenAttributesInput.safeParse(attributes);
  try {
    const minted = await createUserToken(caller, userId, parsed.success ? ok({ attributes: parsed.data }) : { ok: false, code: "invalid_attribute" });
    return c.html(<CreatedPage principal={me} token={minted.token} secret={minted.secret} />, 201);
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) {
      const err = parsed.success ? e : validationError(parsed.error, "json");
      return tokensPage(c, { values, errors: err.errors.map((x) => x.detail ?? x.title) });
    }
    throw e;
  }
});

definePage(tokensUi, "post", "/settings/tokens/:token_id/delete", "token.manage", async (c) => {
  // The API's service decides: a token of another user is not found, as `DELETE /authentication-tokens/:id` answers.
  await deleteToken(callerOf(c), c.req.param("token_id"));
  return c.redirect(TOKENS_PATH, 303);
});
