import { describe, expect, it } from "vitest";
import { assertJsonApi } from "../helpers";

const doc = (body: unknown) => ({ status: 200, headers: new Headers(), body, text: JSON.stringify(body) });

describe("the JSON:API schema check used by every test", () => {
  it("accepts documents with the real service's extra link members and relative links", () => {
    expect(() =>
      assertJsonApi(doc({ data: { id: "ws-1", type: "workspaces", attributes: {}, links: { self: "/api/v2/x", "self-html": "/app/x" } } })),
    ).not.toThrow();
    expect(() => assertJsonApi(doc({ errors: [{ status: "404", title: "not found" }] }))).not.toThrow();
  });

  it("rejects documents that are not JSON:API", () => {
    expect(() => assertJsonApi(doc({ data: { id: 1, type: "workspaces" } }))).toThrow(/not a JSON:API document/);
    expect(() => assertJsonApi(doc({ foo: "bar" }))).toThrow(/not a JSON:API document/);
    expect(() => assertJsonApi(doc({ data: [], errors: [] }))).toThrow(/not a JSON:API document/);
  });
});
