/** @jsxImportSource hono/jsx */
/** The pages of password sign-in: setting a password through a link, an invitation's link, a new link shown once. */
import type { Principal } from "../../auth/principal";
import { PASSWORD_MIN_LENGTH } from "../../auth/password";
import type { Membership } from "../../users/memberships.d1";
import { orgPath } from "../context";
import { Layout } from "../layout";
import { Reasons } from "../parts";

export const when = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/** A link just made: shown this once (only its hash is kept). */
export function NewLink(props: { url: string; expiresAt: string; what: string }) {
  return (
    <div class="created" role="status">
      <p>
        {props.what} It works once, until {when(props.expiresAt)}, and is shown only now: copy it and send it on.
      </p>
      <p>
        <code id="new-link">{props.url}</code>
      </p>
    </div>
  );
}

/** A link that cannot be used (unknown: 404; used, expired or void: 410). */
export function LinkGonePage(props: { state: "used" | "expired" | "unknown" | "void" }) {
  const text = {
    used: "This link has already been used.",
    expired: "This link has expired.",
    unknown: "This link is not valid.",
    void: "This link no longer works: the invitation or the account it was made for has changed since.",
  }[props.state];
  return (
    <Layout title="Link not valid">
      <div class="signin">
        <h1>Link not valid</h1>
        <p class="error" role="alert" id="link-gone">
          {text}
        </p>
        <p>Ask whoever sent it for a new link, or sign in if you have a password.</p>
        <p>
          <a href="/app/session/new">Sign in</a>
        </p>
      </div>
    </Layout>
  );
}

/** The form a password link opens: a new password, twice. */
export function SetPasswordPage(props: { action: string; username: string; invitation: boolean; errors?: string[] }) {
  return (
    <Layout title="Set your password">
      <div class="signin">
        <h1>{props.invitation ? "Accept your invitation" : "Set your password"}</h1>
        <p>
          Choose a password for <strong>{props.username}</strong> (at least {PASSWORD_MIN_LENGTH} characters).
          {props.invitation ? " Saving it accepts the invitation and signs you in." : " Saving it signs you in."}
        </p>
        {props.errors ? <Reasons id="password-errors" what="The password was not set:" errors={props.errors} /> : null}
        <form method="post" action={props.action}>
          <div>
            <label for="set-username">Username</label>
            <input id="set-username" name="username" autocomplete="username" value={props.username} readonly />
          </div>
          <div>
            <label for="new-password">New password</label>
            <input id="new-password" name="password" type="password" autocomplete="new-password" minlength={PASSWORD_MIN_LENGTH} required />
          </div>
          <div>
            <label for="password-confirmation">New password again</label>
            <input id="password-confirmation" name="password_confirmation" type="password" autocomplete="new-password" required />
          </div>
          <button class="primary" type="submit" id="set-password">
            Set password
          </button>
        </form>
      </div>
    </Layout>
  );
}

export function InvitationPage(props: {
  principal: Principal;
  organization: string;
  membership: Membership;
  refusal: string | null;
  live: { createdAt: string; expiresAt: string } | null;
  created?: { url: string; expiresAt: string };
  errors?: string[];
}) {
  const m = props.membership;
  const action = `/app/${encodeURIComponent(props.organization)}/invitations/${encodeURIComponent(m.id)}/link`;
  const offered = props.refusal === null;
  return (
    <Layout title="Invitation" principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumbs">
        <a href={orgPath(props.organization, "workspaces")}>{props.organization}</a> / invitations
      </nav>
      <h1>Invitation {m.id}</h1>
      <dl class="attrs">
        <dt>E-mail</dt>
        <dd id="invitation-email">{m.email ?? "—"}</dd>
        <dt>User</dt>
        <dd>{m.username}</dd>
        <dt>Status</dt>
        <dd id="invitation-status">{m.status}</dd>
        <dt>Link</dt>
        <dd>
          {props.refusal
            ? `none: ${props.refusal}`
            : props.live
              ? `one is out, made ${when(props.live.createdAt)}, until ${when(props.live.expiresAt)}`
              : "none"}
        </dd>
      </dl>
      {props.created ? (
        <NewLink url={props.created.url} expiresAt={props.created.expiresAt} what="The invitation link sets a password, accepts the invitation and signs in." />
      ) : null}
      {props.errors ? <Reasons id="link-errors" what="No link was made:" errors={props.errors} /> : null}
      {offered ? (
        <form method="post" action={action} class="actions">
          <button class="primary" type="submit" id="create-link">
            {props.live || props.created ? "Make a new link (the current one stops working)" : "Make the invitation link"}
          </button>
        </form>
      ) : null}
    </Layout>
  );
}
