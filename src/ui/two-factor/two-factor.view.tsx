/** @jsxImportSource hono/jsx */
/** The two-factor authentication settings: plain data in, HTML out (src/ui/two-factor/two-factor.routes.tsx calls the service). */
import type { Principal } from "../../auth/principal";
import type { TwoFactorStatus } from "../../two-factor/two-factor.service";
import { Layout } from "../layout";
import { Reasons } from "../parts";

const PATH = "/app/settings/two-factor";

function CodeForm(props: { action: string; id: string; button: string; label: string; danger?: boolean }) {
  return (
    <form method="post" action={props.action}>
      <div>
        <label for={props.id}>{props.label}</label>
        <input id={props.id} name="code" autocomplete="one-time-code" required />
      </div>
      <button type="submit" class={props.danger ? "danger" : "primary"} id={`${props.id}-submit`}>
        {props.button}
      </button>
    </form>
  );
}

/**
 * Off: a button begins enrolling. Pending: the secret (`#totp-secret`) and its `otpauth://` URI (`#totp-uri`) for the
 * authenticator app, and the code that confirms it. On: the recovery codes left, and disabling with a code.
 */
export function TwoFactorPage(props: { principal: Principal; status: TwoFactorStatus; errors?: string[] }) {
  const s = props.status;
  return (
    <Layout title="Two-factor authentication" principal={props.principal}>
      <h1>Two-factor authentication</h1>
      {props.errors?.length ? <Reasons id="two-factor-errors" what="Not done:" errors={props.errors} /> : null}
      {s.state === "off" ? (
        <>
          <p id="two-factor-state">Off. With it on, signing in with your password also asks for a code from an authenticator app.</p>
          <form method="post" action={`${PATH}/enrol`}>
            <button type="submit" class="primary" id="enrol">
              Set up an authenticator app
            </button>
          </form>
        </>
      ) : s.state === "pending" ? (
        <>
          <p id="two-factor-state">Not on yet: add this account to your authenticator app, then enter the code it shows.</p>
          <p>
            Secret (enter it by hand): <code id="totp-secret">{s.secret}</code>
          </p>
          <p>
            Or the URI (most apps read it from a QR code): <code id="totp-uri">{s.uri}</code>
          </p>
          <CodeForm action={`${PATH}/confirm`} id="confirm-code" label="Code from the app" button="Turn on two-factor authentication" />
          <form method="post" action={`${PATH}/disable`}>
            <button type="submit" id="abandon">
              Cancel the setup
            </button>
          </form>
        </>
      ) : (
        <>
          <p id="two-factor-state">On. Signing in with your password asks for a code from your authenticator app.</p>
          <p id="recovery-left">{s.recoveryCodesLeft} recovery codes left.</p>
          <CodeForm
            action={`${PATH}/disable`}
            id="disable-code"
            label="A code from the app, or a recovery code"
            button="Turn off two-factor authentication"
            danger
          />
        </>
      )}
    </Layout>
  );
}

/** The recovery codes, shown this once (only their hashes are kept). */
export function RecoveryCodesPage(props: { principal: Principal; codes: string[] }) {
  return (
    <Layout title="Two-factor authentication" principal={props.principal}>
      <h1>Two-factor authentication is on</h1>
      <p>
        Keep these recovery codes somewhere safe: each signs you in once without the app. They are shown now and <strong>never again</strong>.
      </p>
      <ul id="recovery-codes">
        {props.codes.map((c) => (
          <li>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <p>
        <a href="/app">Continue</a>
      </p>
    </Layout>
  );
}
