// A stand-in OpenID Connect provider for the workers project's tests: discovery, JWKS and a token endpoint whose ID
// tokens are signed with `jose` (and can be made wrong on purpose). It checks the PKCE verifier against the
// authorization request's challenge and answers `invalid_grant` to a code used twice, as a real provider does.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import type { FetchHandler } from "../vcs/outbound";

export interface Grant {
  /** Claims of the ID token (iss, aud, sub, nonce, iat and exp default to the right values). */
  claims?: Record<string, unknown>;
  /** Sign with a key the provider does not publish, or not at all (alg "none"). */
  signing?: "good" | "unknown-key" | "none";
}

let hosts = 0;

export async function fakeIdp(clientId: string, clientSecret: string) {
  const host = `idp-${++hosts}-${crypto.randomUUID().slice(0, 8)}.example.net`;
  const issuer = `https://${host}`;
  const key = await generateKeyPair("RS256", { extractable: true });
  const other = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(key.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  /** Codes handed out at the authorization step: what the authorization request asked for, and the grant. */
  const codes = new Map<string, { challenge: string; nonce: string; redirectUri: string; grant: Grant; used: boolean }>();
  const tokenRequests: URLSearchParams[] = [];

  async function idToken(nonce: string, grant: Grant): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: clientId, sub: "subject-1", nonce, iat: now, exp: now + 300, ...grant.claims };
    if (grant.signing === "none") {
      const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
      return `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    }
    const signer: CryptoKey = grant.signing === "unknown-key" ? other.privateKey : key.privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1", typ: "JWT" }).sign(signer);
  }

  const handler: FetchHandler = {
    async fetch(request: Request): Promise<Response> {
      const url = new URL(request.url);
      const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
      if (url.pathname === "/.well-known/openid-configuration")
        return json({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          scopes_supported: ["openid", "profile", "email", "groups"],
          code_challenge_methods_supported: ["S256"],
        });
      if (url.pathname === "/jwks") return json({ keys: [jwk] });
      if (url.pathname === "/token" && request.method === "POST") {
        const form = new URLSearchParams(await request.text());
        tokenRequests.push(form);
        // RFC 6749 §2.3.1: the id and secret are form-urlencoded before they are joined and base64-encoded.
        const basic = atob((request.headers.get("Authorization") ?? "").replace(/^Basic /, ""))
          .split(":")
          .map(decodeURIComponent);
        if (basic[0] !== clientId || basic[1] !== clientSecret) return json({ error: "invalid_client" }, 401);
        const entry = codes.get(form.get("code") ?? "");
        if (!entry || entry.used) return json({ error: "invalid_grant", error_description: "grant request is invalid" }, 400);
        entry.used = true;
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(form.get("code_verifier") ?? "")));
        const challenge = btoa(String.fromCharCode(...digest))
          .replace(/=+$/, "")
          .replace(/\+/g, "-")
          .replace(/\//g, "_");
        if (challenge !== entry.challenge || form.get("redirect_uri") !== entry.redirectUri) return json({ error: "invalid_grant" }, 400);
        return json({ access_token: "at", token_type: "Bearer", expires_in: 300, id_token: await idToken(entry.nonce, entry.grant) });
      }
      return json({ error: "not_found" }, 404);
    },
  };

  return {
    host,
    issuer,
    handler,
    tokenRequests,
    /**
     * The provider's answer to an authorization request (`location`: where the service sent the browser): a code for
     * `grant`, and the callback URL the browser is sent back to.
     */
    authorize(location: string, grant: Grant = {}, opts: { state?: string } = {}): { code: string; callback: string } {
      const req = new URL(location);
      const code = crypto.randomUUID();
      const p = req.searchParams;
      codes.set(code, { challenge: p.get("code_challenge") ?? "", nonce: p.get("nonce") ?? "", redirectUri: p.get("redirect_uri") ?? "", grant, used: false });
      const back = new URL(p.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", opts.state ?? p.get("state") ?? "");
      back.searchParams.set("iss", issuer);
      return { code, callback: back.toString() };
    },
    /** A callback URL for a code already handed out (a replay). */
    callbackFor(location: string, code: string): string {
      const p = new URL(location).searchParams;
      const back = new URL(p.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", p.get("state") ?? "");
      back.searchParams.set("iss", issuer);
      return back.toString();
    },
  };
}
