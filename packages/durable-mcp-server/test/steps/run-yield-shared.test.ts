// A run yields in short chunks for a while after a yield during which other work held the object's thread
// (RUN_YIELD_SHARED_*): locally a request crosses several hops on that thread, each waiting out one chunk of the run.
// Driven by the engine's own clock (host.now), so what is checked is which steps run between two event-loop turns,
// never how long anything took.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import {
  RUN_YIELD_MS,
  RUN_YIELD_SHARED_GAP_MS,
  RUN_YIELD_SHARED_HOLD_MS,
  RUN_YIELD_SHARED_MS,
} from "../../src/limits.js";
import { migrate } from "../../src/runner/schema.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";

it("yields every RUN_YIELD_SHARED_MS for a while after a yield that others used, then every RUN_YIELD_MS again", async () => {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  const chunks = await runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    // Each step's body moves the engine's clock by 1 ms: a chunk of RUN_YIELD_MS ms is RUN_YIELD_MS steps.
    let clock = Date.now();
    let steps = 0;
    const total = RUN_YIELD_MS * 3 + RUN_YIELD_SHARED_HOLD_MS + RUN_YIELD_MS * 3;
    // Steps run between two turns of the event loop: one entry per turn in which the run went on.
    const turns: number[] = [];
    let seen = 0;
    let first = true;
    const watch = () => {
      if (steps > seen) {
        turns.push(steps - seen);
        seen = steps;
      }
      // Other work on the thread during the first yield: the clock moves past RUN_YIELD_SHARED_GAP_MS meanwhile.
      if (first && steps > 0) {
        first = false;
        clock += RUN_YIELD_SHARED_GAP_MS;
      }
      if (steps < total) setTimeout(watch, 0);
    };
    setTimeout(watch, 0);
    const outcome = await runWithJournal(
      async (_input, step) => {
        for (let i = 0; i < total; i++) {
          await step.do(`step ${i}`, async () => {
            clock += 1;
            return ++steps;
          });
        }
      },
      null,
      engineHost(new StepJournal(state.storage.sql), { now: () => clock }),
    );
    expect(outcome.kind).toBe("returned");
    return turns;
  });
  // Before: chunks of RUN_YIELD_MS steps. After the yield that others used: RUN_YIELD_SHARED_MS-step chunks for
  // RUN_YIELD_SHARED_HOLD_MS, then RUN_YIELD_MS-step chunks again.
  // The first chunk is timed from when the engine was made, on the host's clock like every other.
  expect(chunks[0]).toBe(RUN_YIELD_MS);
  expect(chunks.slice(1, 10)).toEqual(Array.from({ length: 9 }, () => RUN_YIELD_SHARED_MS));
  expect(chunks.at(-2)).toBe(RUN_YIELD_MS);
});
