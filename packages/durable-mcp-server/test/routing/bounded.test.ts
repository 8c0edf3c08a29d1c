import { describe, expect, it } from "vitest";
import { mapBounded } from "../../src/routing/bounded.js";
import { LISTEN_CONCURRENCY } from "../../src/limits.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("mapBounded", () => {
  it("keeps at most `limit` calls in flight and the results in order", async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapBounded(
      Array.from({ length: 50 }, (_, i) => i),
      LISTEN_CONCURRENCY,
      async (i) => {
        most = Math.max(most, ++inFlight);
        await tick();
        inFlight--;
        return i * 2;
      },
    );
    expect(most).toBe(LISTEN_CONCURRENCY);
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
  });

  it("rejects with the first failure once the calls in flight settled, and starts no more", async () => {
    const started: number[] = [];
    let settledAfterFailure = 0;
    const outcome = mapBounded(
      Array.from({ length: 40 }, (_, i) => i),
      4,
      async (i) => {
        started.push(i);
        await tick();
        if (i === 5) throw new Error("boom 5");
        settledAfterFailure++;
        return i;
      },
    );
    await expect(outcome).rejects.toThrow("boom 5");
    expect(started.length).toBeLessThan(40);
    expect(settledAfterFailure).toBe(started.length - 1);
  });

  it("maps nothing to nothing", async () => {
    expect(await mapBounded([], 8, async () => 1)).toEqual([]);
  });
});
