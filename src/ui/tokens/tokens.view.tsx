/** @jsxImportSource hono/jsx */
/** The signed-in user's API tokens: plain data in, HTML out (src/ui/tokens/tokens.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import type { Token } from "../../tokens/tokens.d1";
import { Layout } from "../layout";
import { Reasons, Submit, Table } from "../parts";

export const TOKENS_PATH = "/app/settings/tokens";
const when = (iso: string | null, none: string) => (iso ? <time datetime={iso}>{iso.slice(0, 16).replace("T", " ")}</time> : <span class="muted">{none}</span>);

export interface Refusal {
  values: { description: string; expires: string; never: boolean };
  errors: string[];
}

function CreateForm(props: { refusal?: Refusal }) {
  const v = props.refusal?.values;
  return (
    <form class="settings" method="post" action={TOKENS_PATH} aria-labelledby="create-heading">
      <div>
        <label for="t-description">Description</label>
        <input id="t-description" name="description" maxlength={255} value={v?.description ?? ""} />
      </div>
      <div>
        <label for="t-expires">Expires on (empty: in 2 years)</label>
        <input id="t-expires" name="expires" type="date" value={v?.expires ?? ""} />
      </div>
      <div class="check">
        <input id="t-never" name="never" type="checkbox" checked={v?.never ?? false} />
        <label for="t-never">Never expires</label>
      </div>
      <Submit text="Create API token" id="create-token" />
      {props.refusal ? (
        <div class="wide">
          <Reasons id="create-errors" what="The token was not created:" errors={props.refusal.errors} />
        </div>
      ) : null}
    </form>
  );
}

export function TokensPage(props: { principal: Principal; tokens: Token[] | null; refusal?: Refusal }) {
  const me = props.principal;
  return (
    <Layout title="API tokens" principal={me}>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/app">Organisations</a> / API tokens
      </nav>
      <h1>API tokens</h1>
      {props.tokens === null ? (
        <p class="error" role="alert" id="no-user">
          This session uses a team or organisation token. API tokens here belong to users: sign in as a user to see and create yours.
        </p>
      ) : (
        <>
          <p class="muted">Tokens act as you in the API and in Terraform. Revoking one ends it at once, with every session signed in with it.</p>
          <h2 id="create-heading">Create a token</h2>
          <CreateForm refusal={props.refusal} />
          <h2>Your tokens</h2>
          {props.tokens.length === 0 ? (
            <p class="muted">You have no API tokens.</p>
          ) : (
            <Table id="tokens" columns={["Description", "Expires", "Revoke"]} optional={["Created", "Last used"]}>
              {props.tokens.map((t) => (
                <tr data-token={t.id}>
                  <td>
                    {t.description || <span class="muted">(no description)</span>}
                    {me.kind === "user" && me.tokenId === t.id ? (
                      <>
                        {" "}
                        <span class="badge">this session</span>
                      </>
                    ) : null}
                  </td>
                  <td>{when(t.expiredAt, "never")}</td>
                  <td>
                    <form method="post" action={`${TOKENS_PATH}/${t.id}/delete`}>
                      <button class="danger" type="submit" aria-label={`Revoke ${t.description || t.id}`}>
                        Revoke
                      </button>
                    </form>
                  </td>
                  <td class="opt">{when(t.createdAt, "")}</td>
                  <td class="opt">{when(t.lastUsedAt, "never")}</td>
                </tr>
              ))}
            </Table>
          )}
        </>
      )}
    </Layout>
  );
}

export function CreatedPage(props: { principal: Principal; token: Token; secret: string }) {
  return (
    <Layout title="API token created" principal={props.principal}>
      <h1>API token created</h1>
      <p>
        Copy the token <strong>{props.token.description || props.token.id}</strong> now: it is shown only this once.
      </p>
      <label for="secret">Token</label>
      <input id="secret" readonly value={props.secret} autocomplete="off" />
      <p>
        Expires: {when(props.token.expiredAt, "never")}. <a href={TOKENS_PATH}>Back to your tokens</a>
      </p>
    </Layout>
  );
}
