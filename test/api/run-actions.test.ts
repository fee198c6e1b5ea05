// Run actions, run events and comments through the API: 202 with no body, the run's state read back, and the
// engine's refusals as JSON:API errors. Agents are played through the workspace object's job methods.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, type TestPrincipal } from "../fixtures";
import { ADMIN, api } from "../helpers";
import { claim, plan, seedCv, setup } from "../do/runs.helpers";
import { env } from "cloudflare:workers";

async function newRun(workspaceId: string, attributes: Record<string, unknown> = {}): Promise<string> {
  const res = await api("POST", "/runs", {
    body: { data: { type: "runs", attributes, relationships: { workspace: { data: { type: "workspaces", id: workspaceId } } } } },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** A run queued in a fresh workspace, and a team that may only read that workspace. */
async function runWithReader(): Promise<{ runId: string; reader: TestPrincipal }> {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  await seedCv(env.WORKSPACES.getByName(ws.id));
  const runId = await newRun(ws.id);
  const reader = await makeTeam(org);
  await grantWorkspace(reader.id, ws.id, "read");
  return { runId, reader };
}

const read = async (runId: string) => (await api("GET", `/runs/${runId}`)).body.data;

/** A run action as clients send it: a raw body (or none) under the JSON:API media type. */
async function act(runId: string, action: string, raw?: string, token = ADMIN) {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (raw !== undefined) headers["Content-Type"] = "application/vnd.api+json";
  const res = await exports.default.fetch(new Request(`http://localhost/api/v2/runs/${runId}/actions/${action}`, { method: "POST", headers, body: raw }));
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : null };
}

describe("run actions", () => {
  it("applies a planned run with a comment: 202 and no body; confirmed-by, the comment and its event read back", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    await plan(stub, runId);
    const planned = await read(runId);
    expect(planned.attributes.status).toBe("planned");
    expect(planned.attributes.actions["is-confirmable"]).toBe(true);
    expect(planned.attributes["has-changes"]).toBe(true);

    const res = await act(runId, "apply", JSON.stringify({ comment: "ship it" }));
    expect(res).toMatchObject({ status: 202, text: "" });
    const after = await read(runId);
    expect(after.attributes.status).toBe("apply_queued");
    expect(after.relationships["confirmed-by"].data.type).toBe("users");
    expect(after.relationships.comments.data).toHaveLength(1);
    const comment = await api("GET", `/comments/${after.relationships.comments.data[0].id}`);
    expect(comment.status).toBe(200);
    expect(comment.body.data.attributes.body).toBe("ship it");
    const event = await api("GET", `/run-events/${comment.body.data.relationships["run-event"].data.id}?include=actor,comment`);
    expect(event.status).toBe(200);
    expect(event.body.data.relationships.comment.data.id).toBe(comment.body.data.id);
    expect(event.body.included.map((r: { type: string }) => r.type).sort()).toEqual(["comments", "users"]);
    // Not confirmable any more: a second apply is refused.
    const again = await act(runId, "apply", "{}");
    expect(again.status).toBe(409);
    expect(again.body.errors[0].title).toBe("transition not allowed");
  });

  it("discards with an empty body or none, and refuses a discard of a final run", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    await plan(stub, runId);
    expect((await act(runId, "discard")).status).toBe(202);
    expect((await read(runId)).attributes.status).toBe("discarded");
    const refused = await act(runId, "discard", "");
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0]).toMatchObject({ status: "409", title: "transition not allowed" });
    // The lock went with the run.
    expect((await api("GET", `/workspaces/${id}`)).body.data.attributes.locked).toBe(false);
  });

  it("cancels a pending run at once, with canceled-at and force-cancel-available-at set", async () => {
    const { id } = await setup();
    await newRun(id);
    const pending = await newRun(id);
    expect((await read(pending)).attributes["canceled-at"]).toBeNull();
    expect((await act(pending, "cancel", "{}")).status).toBe(202);
    const after = await read(pending);
    expect(after.attributes.status).toBe("canceled");
    expect(after.attributes["canceled-at"]).toMatch(/Z$/);
    expect(after.attributes["force-cancel-available-at"]).toMatch(/Z$/);
    expect(after.attributes.actions["is-cancelable"]).toBe(false);
  });

  it("signals a running plan on cancel; force-cancel waits for the cool-off", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    await claim(stub, runId, "plan");
    expect((await act(runId, "cancel", "{}")).status).toBe(202);
    const after = await read(runId);
    expect(after.attributes.status).toBe("planning");
    expect(Date.parse(after.attributes["force-cancel-available-at"])).toBeGreaterThan(Date.now());
    expect(after.attributes.actions["is-force-cancelable"]).toBe(false);
    const early = await act(runId, "force-cancel", "{}");
    expect(early.status).toBe(409);
    expect((await read(runId)).attributes.status).toBe("planning");
  });

  it("force-executes a pending run behind a discardable one, which is discarded; 403 for a run that is not pending", async () => {
    const { id, stub } = await setup();
    const first = await newRun(id);
    await plan(stub, first);
    const second = await newRun(id);
    expect((await read(second)).attributes.status).toBe("pending");
    const notPending = await act(first, "force-execute");
    expect(notPending.status).toBe(403);
    expect((await act(second, "force-execute")).status).toBe(202);
    expect((await read(first)).attributes.status).toBe("discarded");
    expect((await read(second)).attributes.status).toBe("plan_queued");
  });

  it("refuses a malformed body, or a comment of the wrong type, without acting", async () => {
    const { id, stub } = await setup();
    const runId = await newRun(id);
    await plan(stub, runId);
    expect((await act(runId, "apply", "{nope")).status).toBe(400);
    const wrong = await act(runId, "apply", JSON.stringify({ comment: 5 }));
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].source).toEqual({ pointer: "/comment" });
    expect((await read(runId)).attributes.status).toBe("planned");
  });

  it("hides the run from callers without access and refuses readers (404), changing nothing", async () => {
    const { runId, reader } = await runWithReader();
    expect((await act(runId, "cancel", "{}", reader.token)).status).toBe(404);
    expect((await act("run-doesnotexist0000", "cancel", "{}")).status).toBe(404);
    expect((await read(runId)).attributes.status).toBe("plan_queued");
  });
});

describe("run events and comments", () => {
  it("lists the run's events, a comment posted adds a commented event with its actor and comment", async () => {
    const { id } = await setup();
    const runId = await newRun(id);
    const posted = await api("POST", `/runs/${runId}/comments`, { body: { data: { type: "comments", attributes: { body: "Test comment" } } } });
    expect(posted.status).toBe(201);
    expect(posted.body.data.attributes.body).toBe("Test comment");
    expect(posted.body.data.id).toMatch(new RegExp(`^wsc-${runId.slice(4)}`));

    const plainList = await api("GET", `/runs/${runId}/run-events`);
    expect(plainList.status).toBe(200);
    const commented = plainList.body.data.find((e: { attributes: { action: string } }) => e.attributes.action === "commented");
    expect(commented.relationships.actor.data.type).toBe("users");
    expect(commented.relationships.comment.data.id).toBe(posted.body.data.id);
    expect(plainList.body.included).toBeUndefined();

    const withAll = await api("GET", `/runs/${runId}/run-events?include=actor,comment`);
    const users = withAll.body.included.filter((r: { type: string }) => r.type === "users");
    expect(users[0].attributes.username).toBeTruthy();
    expect(withAll.body.included.find((r: { type: string }) => r.type === "comments").attributes.body).toBe("Test comment");

    const comments = await api("GET", `/runs/${runId}/comments`);
    expect(comments.body.data.map((c: { id: string }) => c.id)).toEqual([posted.body.data.id]);
    expect((await read(runId)).relationships.comments.data).toEqual([{ id: posted.body.data.id, type: "comments" }]);
    expect((await api("GET", "/run-events/re-doesnotexist00000000")).status).toBe(404);
  });

  it("lets plan-level teams comment but not readers; an empty body is refused", async () => {
    const { runId, reader } = await runWithReader();
    const body = { data: { type: "comments", attributes: { body: "hi" } } };
    expect((await api("POST", `/runs/${runId}/comments`, { body, token: reader.token })).status).toBe(404);
    const empty = await api("POST", `/runs/${runId}/comments`, { body: { data: { type: "comments", attributes: { body: "" } } } });
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0].source.pointer).toBe("/data/attributes/body");
    expect((await api("GET", `/runs/${runId}/comments`)).body.data).toEqual([]);
  });
});
