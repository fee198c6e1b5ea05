// The hop trace's bookkeeping (src/platform/hops.ts): round trips in the order they started, grouped into steps of those that
// overlapped, so a model can price a step by its slowest round trip and the request by the sum of its steps.
import { describe, expect, it } from "vitest";
import { type Hops, hopTraceHeader, traced } from "../../src/platform/hops";

const later = <T>(value: T, ms = 1) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("hop trace", () => {
  it("puts round trips that overlap in one step and later ones in the next", async () => {
    const hops: Hops = { d1: 0, do: 0 };
    await traced(hops, "d1p", () => later(1));
    await Promise.all([traced(hops, "d1r", () => later(2, 5)), traced(hops, "do", () => later(3))]);
    await traced(hops, "d1w", () => later(4));
    expect(hopTraceHeader(hops)).toBe("d1p, d1r | do, d1w");
  });

  it("ends a round trip that fails, so the next one starts a step of its own", async () => {
    const hops: Hops = { d1: 0, do: 0 };
    await expect(traced(hops, "d1p", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(() =>
      traced(hops, "d1r", () => {
        throw new Error("sync");
      }),
    ).toThrow("sync");
    await traced(hops, "do-create", async (entry) => {
      entry.indexWrites = 1;
      return null;
    });
    expect(hopTraceHeader(hops)).toBe("d1p, d1r, do-create+d1w");
    expect(hops.trace?.inFlight).toBe(0);
  });

  it("traces nothing without a counter", async () => {
    expect(await traced(undefined, "d1p", () => later("x"))).toBe("x");
  });
});
