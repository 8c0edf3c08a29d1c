import { expect, it } from "vitest";
import { expiryOf } from "../../src/util/expiry.js";

it("expiryOf: creation plus TTL, null without one", () => {
  expect(expiryOf(1_700_000_000_000, 60_000)).toBe(1_700_000_060_000);
  expect(expiryOf(1_700_000_000_000, 0)).toBe(1_700_000_000_000);
  expect(expiryOf(1_700_000_000_000, null)).toBeNull();
});
