import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";

describe("openapi.json", () => {
  it("is a valid OpenAPI 3.1 document (standard validator)", async () => {
    const doc = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
  });
});
