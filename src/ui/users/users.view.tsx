/** @jsxImportSource hono/jsx */
/** The site admin's users: the list (searched, paged, a form to create one) and one user's page with its actions. */
import type { Principal } from "../../auth/principal";
import type { ListedUser } from "../../users/users.d1";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOr } from "../forms";
import { Layout } from "../layout";
import { Field, FilterForm, Pager, Reasons, Submit, Table } from "../parts";
import { NewLink } from "../passwords/passwords.view";

export const usersPath = (id?: string) => (id ? `/app/admin/users/${encodeURIComponent(id)}` : "/app/admin/users");

export function AdminUsersPage(props: {
  principal: Principal;
  users: ListedUser[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  created?: { url: string; expiresAt: string; username: string };
  refusal?: Refusal;
}) {
  const r = props.refusal;
  return (
    <Layout title="Users" principal={props.principal}>
      <h1>Users</h1>
      <p class="muted">Everyone with an account. A reset link sets a new password (and signs in); there is no mail, so you send it on.</p>
      {props.created ? (
        <NewLink url={props.created.url} expiresAt={props.created.expiresAt} what={`The reset link of ${props.created.username} sets a new password.`} />
      ) : null}
      <FilterForm label="Search users" sizeId="users-size" size={props.page.size}>
        <Field id="users-q" name="q" label="Username or e-mail contains" query={props.query} />
      </FilterForm>
      <p id="total">{props.total} users</p>
      <Table id="users" columns={["Username", "Password", "Reset"]} optional={["E-mail", "Site admin", "Two-factor"]}>
        {props.users.map((u) => (
          <tr data-user={u.username}>
            <td>
              <a href={usersPath(u.id)}>{u.username}</a>
            </td>
            <td>{u.hasPassword ? "set" : "none"}</td>
            <td>
              <form method="post" action={`${usersPath(u.id)}/reset-link`}>
                <button type="submit" aria-label={`Make a reset link for ${u.username}`}>
                  Reset link
                </button>
              </form>
            </td>
            <td class="opt">{u.email ?? "—"}</td>
            <td class="opt">{u.isSiteAdmin ? "yes" : "no"}</td>
            <td class="opt">{u.twoFactor ? "on" : "off"}</td>
          </tr>
        ))}
      </Table>
      <Pager page={props.page} total={props.total} query={props.query} />
      <h2>New user</h2>
      <Refused refusal={r} form="new-user" what="The user was not created:" />
      <form class="settings" method="post" action={usersPath()}>
        <Input id="new-user-username" name="username" label="Username" value={sentOr(r, "new-user", "username", "")} />
        <Input id="new-user-email" name="email" label="E-mail" value={sentOr(r, "new-user", "email", "")} />
        <Check id="new-user-admin" name="is-site-admin" label="Site admin" checked={r?.values["is-site-admin"] === "true"} />
        <Submit text="Create user" id="create-user" />
      </form>
    </Layout>
  );
}

export function AdminUserPage(props: { principal: Principal; user: ListedUser & { unconfirmedEmail: string | null }; errors?: string[] }) {
  const u = props.user;
  return (
    <Layout title={u.username} principal={props.principal}>
      <nav class="crumbs" aria-label="Breadcrumbs">
        <a href={usersPath()}>Users</a> / {u.username}
      </nav>
      <h1>{u.username}</h1>
      {props.errors?.length ? <Reasons id="user-errors" what="Not done:" errors={props.errors} /> : null}
      <dl class="attrs">
        <dt>Id</dt>
        <dd>{u.id}</dd>
        <dt>E-mail</dt>
        <dd id="user-email">{u.email ?? "—"}</dd>
        <dt>E-mail change waiting</dt>
        <dd id="user-unconfirmed-email">{u.unconfirmedEmail ?? "—"}</dd>
        <dt>Password</dt>
        <dd>{u.hasPassword ? "set" : "none"}</dd>
        <dt>Site admin</dt>
        <dd id="user-site-admin">{u.isSiteAdmin ? "yes" : "no"}</dd>
        <dt>Two-factor authentication</dt>
        <dd id="user-two-factor">{u.twoFactor ? "on" : "off"}</dd>
      </dl>
      <div class="actions">
        <ButtonForm action={`${usersPath(u.id)}/reset-link`} label={`for ${u.username}`} text="Make a reset link" />
        {u.unconfirmedEmail ? <ButtonForm action={`${usersPath(u.id)}/confirm-email`} label={`of ${u.username}`} text="Confirm the e-mail change" /> : null}
        {u.isSiteAdmin ? (
          <ButtonForm action={`${usersPath(u.id)}/revoke-admin`} label={`of ${u.username}`} text="Revoke site admin" danger />
        ) : (
          <ButtonForm action={`${usersPath(u.id)}/grant-admin`} label={`to ${u.username}`} text="Make site admin" />
        )}
        {u.twoFactor ? (
          <ButtonForm action={`${usersPath(u.id)}/disable-two-factor`} label={`of ${u.username}`} text="Turn off two-factor authentication" danger />
        ) : null}
      </div>
    </Layout>
  );
}
