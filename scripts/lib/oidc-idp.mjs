// A real OpenID Connect provider for the harnesses: panva's `oidc-provider` on loopback, with one confidential client
// (PKCE required), the scopes' claims in the ID token (the service reads no userinfo), and `people` keyed by subject,
// whose claims (e-mail, preferred_username, groups) may change between sign-ins. Its development login form takes any
// password: the subject typed is who signs in.
import { randomBytes } from "node:crypto";
import Provider from "oidc-provider";

/** Starts the provider on `port` for a client returning to `redirectUri`; resolves { issuer, people, close }. */
export async function startIdp({ port, clientId, clientSecret, redirectUri }) {
  const issuer = `http://127.0.0.1:${port}`;
  /** @type {Record<string, { email: string, preferred_username?: string, groups?: string[] }>} */
  const people = {};
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ["authorization_code"] }],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email"], profile: ["preferred_username"], groups: ["groups"] },
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(16).toString("hex")] },
    async findAccount(_ctx, sub) {
      const p = people[sub];
      return p ? { accountId: sub, claims: () => ({ sub, ...p }) } : undefined;
    },
  });
  const server = await new Promise((resolve) => {
    const s = provider.listen(port, "127.0.0.1", () => resolve(s));
  });
  return { issuer, people, close: () => new Promise((r) => server.close(() => r(undefined))) };
}
