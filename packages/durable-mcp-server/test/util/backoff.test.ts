import { describe, expect, it } from "vitest";
import { backoffDelayMs, equalJitter, type Backoff } from "../../src/util/backoff.js";

function waits(kind: Backoff): number[] {
  return [1, 2, 3, 4].map((attempt) => backoffDelayMs(kind, 40, attempt));
}

describe("backoff", () => {
  it("constant, linear and exponential waits after attempts 1..4", () => {
    expect(waits("constant")).toEqual([40, 40, 40, 40]);
    expect(waits("linear")).toEqual([40, 80, 120, 160]);
    expect(waits("exponential")).toEqual([40, 80, 160, 320]);
  });

  it("equal jitter draws between ceiling / 2 and ceiling", () => {
    expect(equalJitter(160, () => 0)).toBe(80);
    expect(equalJitter(160, () => 0.5)).toBe(120);
    // Math.random() < 1, but the sum can round up to the ceiling itself.
    expect(equalJitter(160, () => 1 - 2 ** -53)).toBeLessThanOrEqual(160);
    for (let i = 0; i < 1000; i++) {
      const delay = equalJitter(320);
      expect(delay).toBeGreaterThanOrEqual(160);
      expect(delay).toBeLessThanOrEqual(320);
    }
  });
});
