/** @jsxImportSource hono/jsx */
/** The page of `terraform login`'s authorization endpoint: plain data in, HTML out (src/ui/login/login.routes.tsx checks the request). */
import type { Principal } from "../../auth/principal";
import type { AuthorizeRequest } from "../../login/login.rules";
import { Layout, whoIs } from "../layout";

/** The request's parameters again, as the approve and deny forms send them back. */
function Hidden(props: { request: AuthorizeRequest }) {
  const r = props.request;
  return (
    <>
      <input type="hidden" name="client_id" value={r.clientId} />
      <input type="hidden" name="redirect_uri" value={r.redirectUri} />
      <input type="hidden" name="response_type" value="code" />
      <input type="hidden" name="state" value={r.state} />
      <input type="hidden" name="code_challenge" value={r.codeChallenge} />
      <input type="hidden" name="code_challenge_method" value="S256" />
    </>
  );
}

export function AuthorizePage(props: { principal: Principal; request: AuthorizeRequest }) {
  const target = new URL(props.request.redirectUri);
  const isUser = props.principal.kind === "user";
  const deny = (
    <form method="post" action="/app/oauth/authorize/deny">
      <Hidden request={props.request} />
      <button type="submit" id="deny">
        Deny
      </button>
    </form>
  );
  return (
    <Layout title="Authorize Terraform CLI" principal={props.principal}>
      <div class="signin">
        <h1>Authorize Terraform CLI</h1>
        <p>
          <strong>Terraform CLI</strong> (<code>terraform-cli</code>) asks for a new API token for <strong>{whoIs(props.principal)}</strong>. It will receive
          the answer on this computer at <code>{target.host}</code>.
        </p>
        {isUser ? (
          <>
            <p class="muted">
              Approve only if you just ran <code>terraform login</code>. The token appears on your <a href="/app/settings/tokens">tokens page</a>, where you can
              revoke it.
            </p>
            <div class="actions">
              <form method="post" action="/app/oauth/authorize/approve">
                <Hidden request={props.request} />
                <button class="primary" type="submit" id="approve">
                  Approve
                </button>
              </form>
              {deny}
            </div>
          </>
        ) : (
          <>
            <p class="error" role="alert">
              This session uses a team or organisation token, which belongs to no user: sign in as a user to log Terraform in.
            </p>
            {deny}
          </>
        )}
      </div>
    </Layout>
  );
}
