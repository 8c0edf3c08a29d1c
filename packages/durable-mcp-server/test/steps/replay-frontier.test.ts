// The replay rule without a clock, on the engine itself: runs of handlers against one real SQLite journal, the events
// each run logs, and what each replay mode does with the same departures from the journal.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/runner/schema.js";
import type { ReplayMode, RunOutcome } from "../../src/steps/engine-host.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import type { Step } from "../../src/steps/types.js";
import type { TaskEventFields, TaskEventName } from "../../src/task-events.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";

type Handler = (step: Step) => Promise<unknown>;
type Logged = [TaskEventName, TaskEventFields | undefined];

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `handlers` one after the other against one journal in a fresh object; each run's outcome and events. */
function runs(handlers: Handler[], replay?: ReplayMode) {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  return runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    const results: Array<{ outcome: RunOutcome; events: Logged[] }> = [];
    for (const handler of handlers) {
      const events: Logged[] = [];
      const journal = new StepJournal(state.storage.sql);
      const host = engineHost(journal, { event: (name, fields) => events.push([name, fields]), replay });
      const outcome = await runWithJournal((_input, step) => handler(step), null, host);
      journal.flush();
      results.push({
        outcome,
        events: events.filter(([name]) => name.startsWith("replay") || name === "patch_applied"),
      });
    }
    return results;
  });
}

/** Journals "a" and "b" from two branches, "b" after a short timer. */
const firstRun: Handler = (step) =>
  Promise.all([step.do("a", async () => "a"), delay(1).then(() => step.do("b", async () => "b"))]);
/**
 * The same branches, "b"'s now behind "c" (new, after "a"): "c" is reached while "b" is journaled and unclaimed, and
 * "b" only after "c"'s body ran — so the run is quiescent at "c" by construction, not by a timer (which a loaded
 * machine can stretch past the frontier check).
 */
const slowerReplay: Handler = async (step) => {
  let cRan!: () => void;
  const afterC = new Promise<void>((resolve) => (cRan = resolve));
  return Promise.all([
    step
      .do("a", async () => "a")
      .then(() =>
        step.do("c", async () => {
          cRan();
          return "c";
        }),
      ),
    afterC.then(() => step.do("b", async () => "b")),
  ]);
};

const dropsB: Handler = (step) => step.do("a", async () => "a");

const throwsFirst: Handler = async (step) => {
  await step.do("a", async () => "a");
  throw new Error("after a");
};

const patchedBetween: Handler = async (step) => {
  const first = await step.do("a", async () => "a");
  const patched = await step.patched("p");
  return [first, patched, await step.do("b", async () => "b")];
};

describe("replay without a clock", () => {
  it("lets a new step go on at quiescence with a replay_out_of_order warning naming both keys, and completes", async () => {
    const [, replay] = await runs([firstRun, slowerReplay]);
    expect(replay!.outcome).toEqual({ kind: "returned", value: ["c", "b"] });
    expect(replay!.events).toEqual([["replay_out_of_order", { step: "c", journaled: "b" }]]);
  });

  it("in strict mode fails that step at quiescence instead, naming both keys", async () => {
    const [, replay] = await runs([firstRun, slowerReplay], "strict");
    expect(replay!.outcome.kind).toBe("diverged");
    expect((replay!.outcome as { error: { data: unknown } }).error.data).toEqual({
      reason: "replay_divergence",
      step: "c",
      journaled: "b",
    });
  });

  it("fails a handler that returns with a journaled step never claimed; warn mode completes it and says so", async () => {
    const [, failed] = await runs([firstRun, dropsB]);
    expect(failed!.outcome.kind).toBe("diverged");
    expect((failed!.outcome as { error: { data: unknown } }).error.data).toMatchObject({ journaled: "b" });
    const [, warned] = await runs([firstRun, dropsB], "warn");
    expect(warned!.outcome).toEqual({ kind: "returned", value: "a" });
    expect(warned!.events).toEqual([
      [
        "replay_divergence_ignored",
        {
          unclaimed: "b",
          continuesWith: "the handler's result; the unclaimed steps stay in the journal, never read again",
        },
      ],
    ]);
  });

  it("lets a throw stand whatever is unclaimed (a rejected Promise.all cuts off its siblings), with a warning", async () => {
    const [, threw] = await runs([firstRun, throwsFirst]);
    expect(threw!.outcome.kind).toBe("threw");
    expect(threw!.events).toEqual([["replay_unclaimed", { unclaimed: "b", outcome: "threw" }]]);
  });

  it("journals step.patched's first answer: false while a journaled step is unclaimed, and replays it", async () => {
    const [, behind, again] = await runs([firstRun, patchedBetween, patchedBetween]);
    expect(behind!.outcome).toEqual({ kind: "returned", value: ["a", false, "b"] });
    expect(again!.outcome).toEqual({ kind: "returned", value: ["a", false, "b"] });
    const [fresh, replayed] = await runs([patchedBetween, patchedBetween]);
    expect(fresh!.outcome).toEqual({ kind: "returned", value: ["a", true, "b"] });
    expect(fresh!.events).toEqual([["patch_applied", { step: "p" }]]);
    expect(replayed!.outcome).toEqual({ kind: "returned", value: ["a", true, "b"] });
  });
});
