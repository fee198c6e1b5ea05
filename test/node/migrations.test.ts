import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

// Applied stores know these by name, so the historical duplicate stays (migrations/README.md).
const HISTORICAL_DUPLICATES = new Set(["0007"]);

describe("migrations/", () => {
  const files = readdirSync(new URL("../../migrations/", import.meta.url))
    .filter((f) => f.endsWith(".sql"))
    .sort();

  it("names every file NNNN_name.sql", () => {
    for (const f of files) expect(f).toMatch(/^\d{4}_[a-z0-9_]+\.sql$/);
  });

  it("gives every new migration its own prefix", () => {
    const seen = new Map<string, string[]>();
    for (const f of files) seen.set(f.slice(0, 4), [...(seen.get(f.slice(0, 4)) ?? []), f]);
    const duplicated = [...seen].filter(([prefix, names]) => names.length > 1 && !HISTORICAL_DUPLICATES.has(prefix));
    expect(duplicated).toEqual([]);
  });
});
