// E-mail notifications through a real SMTP server (the `smtp-server` package) against `npm start` (workerd serving the
// built Worker, whose Workers TCP socket reaches the relay named by SMTP_URL): a verification and a run's
// notification arrive as messages to the configured addresses and users, and the relay's acceptance is recorded.
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService } from "../../scripts/lib/service.mjs";

type Service = { base: string; token: string; stop: () => Promise<void> };
type Mail = { from: string; to: string[]; data: string; user: string | undefined };

let svc: Service;
let smtp: SMTPServer;
let logDir: string;
const mails: Mail[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "relay" && auth.password === "p@ss") callback(null, { user: auth.username });
      else callback(new Error("bad credentials"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString("utf8"),
          user: session.user as string | undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  logDir = mkdtempSync(join(tmpdir(), "notifications-smtp-"));
  svc = await startService({
    root: join(import.meta.dirname, "..", ".."),
    logFile: join(logDir, "service.log"),
    env: { SMTP_URL: `smtp://relay:p%40ss@127.0.0.1:${port}?from=terraform@example.com`, NO_AGENT: "1", OUTBOUND_ALLOW_PRIVATE: "1" },
  });
}, 180_000);

afterAll(async () => {
  await svc?.stop();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  if (logDir) rmSync(logDir, { recursive: true, force: true });
}, 30_000);

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${svc.token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe("e-mail notifications", () => {
  it("sends a verification through the relay, authenticated, to the addresses and users configured", async () => {
    expect((await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: "mailers", email: "owner@example.com" } } })).status).toBe(
      201,
    );
    const ws = await api("POST", "/organizations/mailers/workspaces", { data: { type: "workspaces", attributes: { name: "mailed" } } });
    expect(ws.status).toBe(201);
    const created = await api("POST", `/workspaces/${ws.body.data.id}/notification-configurations`, {
      data: {
        type: "notification-configurations",
        attributes: { name: "ops mail", "destination-type": "email", enabled: true, triggers: ["run:errored"], "email-addresses": ["ops@example.com"] },
      },
    });
    expect(created.status).toBe(201);
    expect(mails).toHaveLength(0);

    const verified = await api("POST", `/notification-configurations/${created.body.data.id}/actions/verify`);
    expect(verified.status).toBe(200);
    expect(verified.body.data.attributes["delivery-responses"][0]).toMatchObject({ successful: "true", code: "250" });
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ from: "terraform@example.com", to: ["ops@example.com"], user: "relay" });
    expect(mails[0].data).toMatch(/Subject: Verification of ops mail/);
    expect(mails[0].data).toMatch(/mailers\/mailed/);
  }, 60_000);

  it("names only the organisation's members: they get the mail while members; another organisation's user is refused as not found", async () => {
    const user = async (username: string) => {
      const res = await api("POST", "/admin/users", { data: { type: "users", attributes: { username, email: `${username}@example.com` } } });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const joinOwners = async (org: string, userId: string) => {
      const owners = (await api("GET", `/organizations/${org}/teams?filter[names]=owners`)).body.data[0];
      expect((await api("POST", `/teams/${owners.id}/relationships/users`, { data: [{ type: "users", id: userId }] })).status).toBe(204);
    };
    const [alice, bob] = [await user("alice-mail"), await user("bob-mail")];
    await joinOwners("mailers", alice);
    expect((await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: "elsewhere", email: "e@example.com" } } })).status).toBe(
      201,
    );
    await joinOwners("elsewhere", bob);
    const ws = (await api("GET", "/organizations/mailers/workspaces/mailed")).body.data.id as string;
    const configs = async () => (await api("GET", `/workspaces/${ws}/notification-configurations`)).body.data.length as number;
    const before = await configs();
    const create = (users: string[]) =>
      api("POST", `/workspaces/${ws}/notification-configurations`, {
        data: {
          type: "notification-configurations",
          attributes: { name: "people", "destination-type": "email", enabled: true, triggers: ["run:completed"], "email-addresses": ["ops@example.com"] },
          relationships: { users: { data: users.map((id) => ({ type: "users", id })) } },
        },
      });

    // Bob exists, in another organisation; the second id exists nowhere: both answer alike, and nothing is stored.
    for (const id of [bob, "user-NoSuchUser0000"]) {
      const refused = await create([alice, id]);
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ status: "422", detail: `User ${id} was not found`, source: { pointer: "/data/relationships/users" } });
    }
    expect(await configs()).toBe(before);

    // Carol is invited and has not accepted: she may be named (as go-tfe names an invited member), and gets nothing yet.
    const invited = await api("POST", "/organizations/mailers/organization-memberships", {
      data: { type: "organization-memberships", attributes: { email: "carol-mail@example.com" } },
    });
    expect(invited.status).toBe(201);
    const carol = invited.body.data.relationships.user.data.id as string;
    const created = await create([alice, carol]);
    expect(created.status).toBe(201);
    expect(created.body.data.relationships.users.data).toEqual([
      { type: "users", id: alice },
      { type: "users", id: carol },
    ]);
    const verify = async () => {
      const sent = mails.length;
      expect((await api("POST", `/notification-configurations/${created.body.data.id}/actions/verify`)).status).toBe(200);
      expect(mails).toHaveLength(sent + 1);
      return [...mails[sent].to].sort();
    };
    expect(await verify()).toEqual(["alice-mail@example.com", "ops@example.com"]);

    // Alice leaves the organisation: the configuration still names her, and she gets nothing more.
    const memberships = (await api("GET", "/organizations/mailers/organization-memberships?q=alice-mail")).body.data as Array<{ id: string }>;
    expect(memberships).toHaveLength(1);
    expect((await api("DELETE", `/organization-memberships/${memberships[0].id}`)).status).toBe(204);
    expect(await verify()).toEqual(["ops@example.com"]);
  }, 60_000);
});
