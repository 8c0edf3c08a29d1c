// The engine builds `step_started` / `step_finished` only for a sink that wants them (EngineHost.stepEvents; the
// runner sets it for `events: "all"`): at the default level they were built and dropped, one object each per step.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { migrate } from "../../src/runner/schema.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";

/** Runs two steps with `stepEvents` as given; returns the events the sink received. */
function eventsWith(stepEvents: boolean | undefined): Promise<string[]> {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  return runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    const events: string[] = [];
    const outcome = await runWithJournal(
      async (_input, step) => {
        await step.do("a", async () => 1);
        await step.do("b", async () => 2);
      },
      null,
      engineHost(new StepJournal(state.storage.sql), {
        event: (name, fields) => events.push(`${name}:${fields?.step ?? ""}`),
        ...(stepEvents === undefined ? {} : { stepEvents }),
      }),
    );
    expect(outcome.kind).toBe("returned");
    return events;
  });
}

it("reports each step's start and finish when the sink wants them, and builds none when it does not", async () => {
  const every = ["step_started:a", "step_finished:a", "step_started:b", "step_finished:b"];
  expect(await eventsWith(true)).toEqual(every);
  expect(await eventsWith(undefined)).toEqual(every);
  expect(await eventsWith(false)).toEqual([]);
});
