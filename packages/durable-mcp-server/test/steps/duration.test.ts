import { describe, expect, it } from "vitest";
import { toMilliseconds } from "../../src/steps/duration.js";
import { resolveStepConfig, retryDelayMs } from "../../src/steps/retry-policy.js";

describe("durations", () => {
  it("reads milliseconds and Workflows strings", () => {
    expect(toMilliseconds(250)).toBe(250);
    expect(toMilliseconds("10 seconds")).toBe(10_000);
    expect(toMilliseconds("1 second")).toBe(1_000);
    expect(toMilliseconds("2 hours")).toBe(7_200_000);
    expect(toMilliseconds("1 day")).toBe(86_400_000);
    expect(toMilliseconds("1 month")).toBe(2_592_000_000);
    expect(toMilliseconds("1.5 minutes")).toBe(90_000);
    expect(toMilliseconds("50 ms")).toBe(50);
    expect(toMilliseconds("3 milliseconds")).toBe(3);
  });

  it("refuses what it cannot read", () => {
    expect(() => toMilliseconds(-1)).toThrow(RangeError);
    expect(() => toMilliseconds(Number.NaN)).toThrow(RangeError);
    // @ts-expect-error -- a string the Duration type refuses; refused at run time too
    expect(() => toMilliseconds("soon")).toThrow(/cannot read duration/);
    // @ts-expect-error -- a string the Duration type refuses; refused at run time too
    expect(() => toMilliseconds("5 fortnights")).toThrow(/cannot read duration/);
    // @ts-expect-error -- a string the Duration type refuses; refused at run time too
    expect(() => toMilliseconds("5 mss")).toThrow(/cannot read duration/);
  });
});

describe("retry policy", () => {
  it("defaults to Workflows' 5 retries, 10 s, exponential, 10-minute timeout", () => {
    expect(resolveStepConfig(undefined)).toEqual({
      limit: 5,
      delayMs: 10_000,
      backoff: "exponential",
      timeoutMs: 600_000,
    });
  });

  it("computes constant, linear and exponential back-off per failed attempt", () => {
    const base = { limit: 5, delayMs: 100, timeoutMs: 1 };
    expect([1, 2, 3].map((n) => retryDelayMs({ ...base, backoff: "constant" }, n))).toEqual([100, 100, 100]);
    expect([1, 2, 3].map((n) => retryDelayMs({ ...base, backoff: "linear" }, n))).toEqual([100, 200, 300]);
    expect([1, 2, 3].map((n) => retryDelayMs({ ...base, backoff: "exponential" }, n))).toEqual([100, 200, 400]);
  });

  it("refuses a negative or fractional retry limit", () => {
    expect(() => resolveStepConfig({ retries: { limit: -1, delay: 1 } })).toThrow(RangeError);
    expect(() => resolveStepConfig({ retries: { limit: 1.5, delay: 1 } })).toThrow(RangeError);
  });
});
