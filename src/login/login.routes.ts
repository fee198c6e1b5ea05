/**
 * The login.v1 token endpoint (`POST /oauth/token`): OAuth 2.0's form-encoded request and JSON answer, outside the
 * JSON:API and outside the web UI (no session, no CSRF check: the PKCE verifier is what proves the caller).
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { limitByClient } from "../auth/auth.middleware";
import type { AppEnv } from "../env";
import { exchangeLoginCode, type OAuthErrorCode } from "./login.service";
import { TOKEN_PATH } from "./login.rules";

export const login = new Hono<AppEnv>();

const STATUS: Record<OAuthErrorCode, 400 | 401> = { invalid_request: 400, invalid_client: 401, invalid_grant: 400, unsupported_grant_type: 400 };
// RFC 6749 §5.1: token answers are never cached.
const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };

login.use(TOKEN_PATH, limitByClient);
login.post(
  TOKEN_PATH,
  bodyLimit({ maxSize: 8 * 1024, onError: (c) => c.json({ error: "invalid_request", error_description: "the request is too large" }, 413, NO_STORE) }),
  async (c) => {
    const type = (c.req.header("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded") {
      return c.json({ error: "invalid_request", error_description: "the body must be application/x-www-form-urlencoded" }, 400, NO_STORE);
    }
    const params = new URLSearchParams(await c.req.text());
    const form: Record<string, string> = {};
    for (const [k, v] of params) {
      // RFC 6749 §3.2: a parameter sent twice makes the request invalid.
      if (k in form) return c.json({ error: "invalid_request", error_description: `${k} is given more than once` }, 400, NO_STORE);
      form[k] = v;
    }
    const result = await exchangeLoginCode(c.env, form);
    if (!result.ok) return c.json({ error: result.error, error_description: result.description }, STATUS[result.error], NO_STORE);
    return c.json({ access_token: result.token, token_type: "bearer" }, 200, NO_STORE);
  },
);
