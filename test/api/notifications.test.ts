// Notification configurations through the API, and their deliveries: the verification on create and through
// actions/verify, run status changes delivered from the workspace object's alarm to a fake receiver (the Worker's
// outbound fetch answered by test/vcs/outbound.ts), each generic body signed with HMAC-SHA512 of the token, answers
// recorded in delivery-responses, failures retried, and addresses the service may not request refused.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace } from "../fixtures";
import { api } from "../helpers";
import { NON_PUBLIC_URLS, hmacSha512Hex, receiversAt } from "../vcs/outbound";
import { claim, createRun, finish, plan, seedCv, action } from "../do/runs.helpers";

const HOST = "hooks.example.com";
const TOKEN = "s3cret-token";

/** A receiver at https://hooks.example.com: every request kept; `answer` decides each status (200 by default). */
const receiver = receiversAt(HOST);
const hmac = hmacSha512Hex;

const body = (attributes: Record<string, unknown>, relationships?: unknown) => ({
  data: {
    type: "notification-configurations",
    attributes: {
      name: "hook",
      "destination-type": "generic",
      enabled: false,
      url: `https://${HOST}/in`,
      token: TOKEN,
      triggers: ["run:created"],
      ...attributes,
    },
    ...(relationships ? { relationships } : {}),
  },
});

async function workspace() {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  return { org, id: ws.id as string, name: ws.attributes.name as string };
}

const create = (ws: string, attributes: Record<string, unknown> = {}, relationships?: unknown) =>
  api("POST", `/workspaces/${ws}/notification-configurations`, { body: body(attributes, relationships) });

describe("notification configurations API", () => {
  it("creates, lists, shows, updates and deletes; the token is never answered", async () => {
    const ws = await workspace();
    const created = await create(ws.id);
    expect(created.status).toBe(201);
    const nc = created.body.data;
    expect(nc).toMatchObject({
      type: "notification-configurations",
      attributes: { name: "hook", "destination-type": "generic", enabled: false, url: `https://${HOST}/in`, token: null, triggers: ["run:created"] },
      relationships: { subscribable: { data: { id: ws.id, type: "workspaces" } } },
    });
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);

    const all = await api("GET", `/workspaces/${ws.id}/notification-configurations`);
    expect(all.body.data).toEqual([nc]);
    expect(all.body.meta?.pagination).toBeUndefined();
    const paged = await api("GET", `/workspaces/${ws.id}/notification-configurations?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(paged.body.data).toEqual([]);
    expect(paged.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 1 });

    expect((await api("GET", `/notification-configurations/${nc.id}`)).body.data).toEqual(nc);
    const renamed = await api("PATCH", `/notification-configurations/${nc.id}`, {
      body: { data: { type: "notification-configurations", attributes: { name: "renamed", triggers: ["run:errored", "assessment:drifted"] } } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.attributes).toMatchObject({ name: "renamed", triggers: ["run:errored", "assessment:drifted"], enabled: false });

    expect((await api("DELETE", `/notification-configurations/${nc.id}`)).status).toBe(204);
    expect((await api("GET", `/notification-configurations/${nc.id}`)).status).toBe(404);
    expect((await api("GET", "/notification-configurations/nonexisting")).status).toBe(404);
  });

  it("accepts every documented trigger and refuses others, a missing URL, and a 21st configuration", async () => {
    const ws = await workspace();
    const all = [
      "run:created",
      "run:planning",
      "run:needs_attention",
      "run:applying",
      "run:completed",
      "run:errored",
      "assessment:drifted",
      "assessment:failed",
      "assessment:check_failure",
    ];
    expect((await create(ws.id, { triggers: all })).status).toBe(201);
    const bad = await create(ws.id, { triggers: ["run:exploded"] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/triggers");
    const noUrl = await create(ws.id, { "destination-type": "slack", url: undefined });
    expect(noUrl.status).toBe(422);
    expect(noUrl.body.errors[0].source.pointer).toBe("/data/attributes/url");
    for (let i = 1; i < 20; i++) expect((await create(ws.id)).status).toBe(201);
    const over = await create(ws.id);
    expect(over.status).toBe(422);
    expect(over.body.errors[0].detail).toMatch(/at most 20/);
  });

  it("refuses a change to a stored e-mail configuration while the operator has no SMTP relay", async () => {
    const ws = await workspace();
    const stub = env.WORKSPACES.getByName(ws.id);
    const now = new Date().toISOString();
    const id = `nc-AAAAAAAAAAAAAAAA${ws.id.slice(3)}`;
    const config = {
      id,
      name: "mail",
      destinationType: "email" as const,
      enabled: false,
      url: null,
      triggers: [],
      emailAddresses: ["ops@example.com"],
      emailUserIds: ["user-doesnotmatter01"],
      sealedToken: null,
      origin: "http://localhost",
      createdAt: now,
      updatedAt: now,
      deliveryResponses: [],
    };
    expect((await stub.createNotification({ config })).ok).toBe(true);
    const patched = await api("PATCH", `/notification-configurations/${id}`, {
      body: { data: { type: "notification-configurations", attributes: { name: "renamed" } } },
    });
    // No relay: the e-mail configuration cannot be changed into one that would be kept and never sent.
    expect(patched.status).toBe(422);
    expect(patched.body.errors[0].detail).toMatch(/SMTP_URL/);
  });

  it("refuses e-mail configurations while the operator has no SMTP relay, saying why, and stores nothing", async () => {
    const ws = await workspace();
    const res = await create(ws.id, { "destination-type": "email", url: undefined, "email-addresses": ["ops@example.com"] });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].detail).toMatch(/SMTP_URL/);
    expect((await api("GET", `/workspaces/${ws.id}/notification-configurations`)).body.data).toEqual([]);
  });

  it("refuses URLs on loopback, private, link-local and metadata addresses", async () => {
    const ws = await workspace();
    for (const url of [...NON_PUBLIC_URLS, "http://metadata.google.internal/"]) {
      const res = await create(ws.id, { url });
      expect(res.status, url).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe("/data/attributes/url");
    }
  });

  it("verifies an enabled configuration on create: a signed verification payload, its answer recorded", async () => {
    const got = receiver();
    const ws = await workspace();
    const res = await create(ws.id, { enabled: true });
    expect(res.status).toBe(201);
    expect(got).toHaveLength(1);
    const payload = JSON.parse(got[0].body);
    expect(payload).toMatchObject({
      payload_version: 1,
      notification_configuration_id: res.body.data.id,
      run_id: null,
      workspace_id: ws.id,
      workspace_name: ws.name,
      notifications: [{ trigger: "verification" }],
    });
    expect(got[0].headers.get("x-tfe-notification-signature")).toBe(await hmac(TOKEN, got[0].body));
    expect(res.body.data.attributes["delivery-responses"]).toMatchObject([{ code: "200", body: "ok", successful: "true", url: `https://${HOST}/in` }]);
  });

  it("refuses to enable a configuration whose receiver answers 500, and keeps it disabled", async () => {
    receiver(() => new Response("no", { status: 500 }));
    const ws = await workspace();
    const res = await create(ws.id, { enabled: true });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].detail).toMatch(/answered 500/);
    expect((await api("GET", `/workspaces/${ws.id}/notification-configurations`)).body.data).toEqual([]);

    const off = await create(ws.id);
    const on = await api("PATCH", `/notification-configurations/${off.body.data.id}`, {
      body: { data: { type: "notification-configurations", attributes: { enabled: true } } },
    });
    expect(on.status).toBe(422);
    expect((await api("GET", `/notification-configurations/${off.body.data.id}`)).body.data.attributes.enabled).toBe(false);
  });

  it("actions/verify sends a verification and records the answer, whatever it is", async () => {
    receiver(() => new Response("teapot", { status: 418 }));
    const ws = await workspace();
    const nc = (await create(ws.id)).body.data;
    const res = await api("POST", `/notification-configurations/${nc.id}/actions/verify`);
    expect(res.status).toBe(200);
    expect(res.body.data.attributes["delivery-responses"]).toMatchObject([{ code: "418", body: "teapot", successful: "false" }]);
  });

  it("follows no redirect to a metadata address", async () => {
    const got = receiver(() => new Response(null, { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data" } }));
    const ws = await workspace();
    const nc = (await create(ws.id)).body.data;
    const res = await api("POST", `/notification-configurations/${nc.id}/actions/verify`);
    const [answer] = res.body.data.attributes["delivery-responses"];
    expect(answer).toMatchObject({ successful: "false", code: "" });
    expect(answer.body).toMatch(/link-local or metadata/);
    expect(got.every((r) => new URL(r.url).host === HOST)).toBe(true);
  });

  it("sends Slack and Microsoft Teams their incoming-webhook formats", async () => {
    const got = receiver();
    const ws = await workspace();
    expect((await create(ws.id, { "destination-type": "slack", enabled: true, token: undefined })).status).toBe(201);
    expect((await create(ws.id, { "destination-type": "microsoft-teams", enabled: true, token: undefined })).status).toBe(201);
    const [slack, teams] = got.map((r) => JSON.parse(r.body));
    expect(typeof slack.text).toBe("string");
    expect(slack.blocks[0]).toMatchObject({ type: "section", text: { type: "mrkdwn" } });
    expect(teams).toMatchObject({
      type: "message",
      attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", content: { type: "AdaptiveCard" } }],
    });
    expect(got.every((r) => r.headers.get("x-tfe-notification-signature") === null)).toBe(true);
  });
});

describe("run notifications", () => {
  it("delivers each triggered status change from the alarm, signed, and records the answers", async () => {
    const got = receiver();
    const ws = await workspace();
    const triggers = ["run:created", "run:planning", "run:needs_attention", "run:applying", "run:completed"];
    const nc = (await create(ws.id, { enabled: true, triggers })).body.data;
    got.splice(0);
    const stub = env.WORKSPACES.getByName(ws.id);
    const cv = await seedCv(stub);
    const run = await createRun(stub, cv);
    const job = await claim(stub, run.id, "plan");
    await finish(stub, job, "finished", { hasChanges: true });
    await action(stub, run.id, "apply");
    await finish(stub, await claim(stub, run.id, "apply"), "finished");
    await runDurableObjectAlarm(stub);
    const bodies = got.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.notifications[0].trigger)).toEqual(triggers);
    for (const r of got) expect(r.headers.get("x-tfe-notification-signature")).toBe(await hmac(TOKEN, r.body));
    expect(bodies[0]).toMatchObject({ run_id: run.id, workspace_id: ws.id, organization_name: ws.org, notification_configuration_id: nc.id });
    expect(bodies[0].run_url).toMatch(new RegExp(`/app/${ws.org}/workspaces/${ws.name}/runs/${run.id}$`));
    expect(bodies[4].notifications[0]).toMatchObject({ run_status: "applied", message: "Run Applied" });
    const responses = (await api("GET", `/notification-configurations/${nc.id}`)).body.data.attributes["delivery-responses"];
    expect(responses).toHaveLength(6); // five deliveries and the verification
    expect(responses.every((r: { successful: string }) => r.successful === "true")).toBe(true);
  });

  it("retries a delivery the receiver failed, with backoff, and never holds up the run", async () => {
    const got = receiver((_r, n) => (n === 2 ? new Response("down", { status: 500 }) : new Response("ok")));
    const ws = await workspace();
    const nc = (await create(ws.id, { enabled: true, triggers: ["run:errored"] })).body.data;
    const stub = env.WORKSPACES.getByName(ws.id);
    const run = await createRun(stub, await seedCv(stub));
    const errored = await finish(stub, await claim(stub, run.id, "plan"), "errored", { error: "boom" });
    expect(errored.status).toBe("errored");
    await runDurableObjectAlarm(stub);
    expect(got).toHaveLength(2);
    // The retry is due later: the alarm is armed for it, and nothing is sent before.
    const pending = await runInDurableObject(stub, async (_o, state) => {
      const row = state.storage.sql.exec<{ attempts: number; next_at: number }>("SELECT attempts, next_at FROM notification_deliveries").one();
      return { ...row, alarm: await state.storage.getAlarm() };
    });
    expect(pending.attempts).toBe(1);
    expect(pending.next_at).toBeGreaterThan(Date.now());
    expect(pending.alarm).toBe(pending.next_at);
    await runInDurableObject(stub, async (_o, state) => {
      state.storage.sql.exec("UPDATE notification_deliveries SET next_at = 0");
      await state.storage.setAlarm(Date.now());
    });
    await runDurableObjectAlarm(stub);
    expect(got).toHaveLength(3);
    expect(JSON.parse(got[2].body).notifications[0].trigger).toBe("run:errored");
    const responses = (await api("GET", `/notification-configurations/${nc.id}`)).body.data.attributes["delivery-responses"];
    expect(responses.map((r: { code: string }) => r.code)).toEqual(["200", "500", "200"]);
    expect(await runInDurableObject(stub, async (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM notification_deliveries").one().n)).toBe(0);
  });

  it("tells run:errored of a canceled run, as the API docs define it", async () => {
    const got = receiver();
    const ws = await workspace();
    await create(ws.id, { enabled: true, triggers: ["run:errored"] });
    got.splice(0);
    const stub = env.WORKSPACES.getByName(ws.id);
    const run = await createRun(stub, await seedCv(stub));
    await action(stub, run.id, "cancel");
    await runDurableObjectAlarm(stub);
    expect(got.map((r) => JSON.parse(r.body).notifications[0])).toMatchObject([{ trigger: "run:errored", run_status: "canceled", message: "Run Canceled" }]);
  });

  it("sends nothing for a disabled configuration or an untriggered change", async () => {
    const got = receiver();
    const ws = await workspace();
    await create(ws.id, { enabled: false, triggers: ["run:created"] });
    await create(ws.id, { enabled: true, triggers: ["run:errored"] });
    got.splice(0);
    const stub = env.WORKSPACES.getByName(ws.id);
    const run = await createRun(stub, await seedCv(stub));
    await plan(stub, run.id, false);
    await runDurableObjectAlarm(stub);
    expect(got).toHaveLength(0);
  });
});
