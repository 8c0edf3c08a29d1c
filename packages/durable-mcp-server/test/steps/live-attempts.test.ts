// The run's live attempts (the list the engine threads through them, engine.ts LiveList): several attempts under way
// at once, taken out of the middle, the front and the back of the list by their timeouts in deadline order, and all of
// them ended together by a cancel, with or without a signal of their own. On a real SQLite object, real timers.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { StepFailedError } from "../../src/errors/errors.js";
import { migrate } from "../../src/runner/schema.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";

const hostOf = (state: DurableObjectState, cancelled: () => boolean, controllers: Set<AbortController>) =>
  engineHost(new StepJournal(state.storage.sql), { isCancelled: cancelled, controllers });

const never = () => new Promise<never>(() => {});

it("times out parallel attempts one by one, each at its own deadline, whatever their place in the list", async () => {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  const { outcome, rows, order } = await runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    const host = hostOf(state, () => false, new Set());
    const settledAt: Record<string, number> = {};
    const once = { retries: { limit: 0, delay: 0 }, timeout: 0 };
    const ran = await runWithJournal(
      async (_input, step) => {
        const timed = (name: string, timeoutMs: number) =>
          step.do(name, { ...once, timeout: timeoutMs }, never).catch((error: unknown) => {
            settledAt[name] = Date.now();
            return error instanceof StepFailedError ? `${name} failed` : `${name}: ${String(error)}`;
          });
        // Started in this order (a, b, c, d): d returns at once and leaves the list from its back, then e joins it
        // there; b leaves from the middle at its deadline, then c, and a (the front) last.
        const [a, b, c] = [timed("a", 60), timed("b", 20), timed("c", 40)];
        const d = step.do("d", once, () => "d done");
        const e = d.then(() => timed("e", 5));
        return Promise.all([a, b, c, d, e]);
      },
      null,
      host,
    );
    const journaled = host.journal.load().map((r) => [r.name, r.state, r.error && JSON.parse(r.error).name]);
    return { outcome: ran, rows: journaled, order: Object.entries(settledAt).toSorted((x, y) => x[1] - y[1]) };
  });
  expect(outcome).toEqual({ kind: "returned", value: ["a failed", "b failed", "c failed", "d done", "e failed"] });
  expect(rows).toEqual([
    ["a", "failed", "StepTimeoutError"],
    ["b", "failed", "StepTimeoutError"],
    ["c", "failed", "StepTimeoutError"],
    ["d", "done", null],
    ["e", "failed", "StepTimeoutError"],
  ]);
  expect(order.map(([name]) => name).filter((name) => name !== "e")).toEqual(["b", "c", "a"]);
});

it("ends every live attempt at a cancel, those that read their signal and those that did not", async () => {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  const result = await runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    let cancelled = false;
    const controllers = new Set<AbortController>();
    const host = hostOf(state, () => cancelled, controllers);
    const aborted: string[] = [];
    const started: string[] = [];
    const body = (name: string, withSignal: boolean) => (attempt: { signal: AbortSignal }) => {
      started.push(name);
      if (withSignal) attempt.signal.addEventListener("abort", () => aborted.push(name));
      return never();
    };
    const run = runWithJournal(
      async (_input, step) => {
        await Promise.all(["a", "b", "c", "d", "e"].map((name, i) => step.do(name, body(name, i % 2 === 0))));
      },
      null,
      host,
    );
    // Cancel once every body runs: as the runner does, mark the task cancelled and abort the run's controllers.
    while (started.length < 5) await new Promise((resolve) => setTimeout(resolve, 1));
    cancelled = true;
    for (const controller of controllers) controller.abort(new Error("cancelled"));
    const outcome = await run;
    // The attempts' own endings run a few microtasks later: each gives back its controller.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { outcome, aborted: aborted.toSorted(), controllersLeft: controllers.size };
  });
  expect(result).toEqual({ outcome: { kind: "cancelled" }, aborted: ["a", "c", "e"], controllersLeft: 0 });
});
