// A new step's first attempt is held by the journal and written with the rows beside it in one statement (issue 15,
// round 2): a step that succeeds at once costs a share of one statement, not two. These run the engine on a real
// SQLite Durable Object and count the statements it sends; and they check that held rows are in SQLite before
// anything could see the database: a body's I/O, another request, a read through the journal, the run's end.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/runner/schema.js";
import type { RunOutcome } from "../../src/steps/engine-host.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import { DERIVED_KEY } from "../../src/steps/step-record.js";
import type { Step } from "../../src/steps/types.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";
import { journalRows } from "./journal-rows.js";

/** The real SqlStorage, counting the statements sent through it (a spy: every call reaches SQLite). */
function counting(sql: SqlStorage): { sql: SqlStorage; statements: () => number } {
  let statements = 0;
  const spy = Object.create(sql) as SqlStorage;
  spy.exec = ((query: string, ...bindings: unknown[]) => {
    statements++;
    return sql.exec(query, ...(bindings as SqlStorageValue[]));
  }) as SqlStorage["exec"];
  return { sql: spy, statements: () => statements };
}

const hostOf = (journal: StepJournal, now: () => number = () => Date.now()) => engineHost(journal, { now });

/** Runs `handler` against a fresh journal in a fresh object; returns the outcome, the rows and the statement count. */
function run(handler: (step: Step, sql: SqlStorage) => Promise<unknown>, now?: () => number) {
  const stub = fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
  return runInDurableObject(stub, async (_: unknown, state: DurableObjectState) => {
    migrate(state.storage, 0);
    const spy = counting(state.storage.sql);
    const journal = new StepJournal(spy.sql);
    const outcome: RunOutcome = await runWithJournal(
      (_input, step) => handler(step, state.storage.sql),
      null,
      hostOf(journal, now),
    );
    const statements = spy.statements();
    // Read straight from SQLite, not through the journal (which would write what it holds first).
    await new Promise((resolve) => setTimeout(resolve, 0));
    const rows = journalRows(state.storage.sql);
    return { outcome, statements, rows };
  });
}

const rowsNow = (sql: SqlStorage) => journalRows(sql).map(({ name, state }) => ({ name, state }));

/** Each row's [started_at, updated_at, attempt_started_at], in journal order. */
const timesOf = (sql: SqlStorage) =>
  journalRows(sql).map((row) => [row.started_at, row.updated_at, row.attempt_started_at]);

describe("the journal holds a new step's first attempt", () => {
  it("writes 500 steps that return at once in a few statements, in order, each done", async () => {
    const { outcome, statements, rows } = await run(async (step) => {
      for (let i = 0; i < 500; i++) await step.do(`step ${i}`, async () => i);
      return "ok";
    });
    expect(outcome).toEqual({ kind: "returned", value: "ok" });
    // Two statements per step before (the running row, then its result): 1,000 here.
    expect(statements).toBeLessThanOrEqual(10);
    expect(rows.map((row) => row.name)).toEqual(Array.from({ length: 500 }, (_, i) => `step ${i}`));
    expect(rows.every((row, i) => row.state === "done" && row.attempts === 1 && row.result === String(i))).toBe(true);
    // Reached by the run (not injected): the key is derived when read, not stored.
    expect(rows.every((row) => row.key === DERIVED_KEY)).toBe(true);
  });

  it("has a body's running row in SQLite before the body's I/O goes on", async () => {
    const { outcome, rows } = await run(async (step, sql) => {
      await step.do("before", async () => 1);
      const seen = await step.do("slow", async () => {
        // A real wait on the event loop: whatever could commit or be read meanwhile sees the database as it is now.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return rowsNow(sql);
      });
      return seen;
    });
    expect(outcome).toEqual({
      kind: "returned",
      value: [
        { name: "before", state: "done" },
        { name: "slow", state: "running" },
      ],
    });
    expect(rows.map((row) => [row.name, row.state])).toEqual([
      ["before", "done"],
      ["slow", "done"],
    ]);
  });

  it("has every step in SQLite once the handler waits on anything outside the run", async () => {
    const { rows, outcome } = await run(async (step, sql) => {
      for (let i = 0; i < 3; i++) await step.do(`step ${i}`, async () => i);
      await new Promise((resolve) => setTimeout(resolve, 0));
      return rowsNow(sql).map((row) => `${row.name}:${row.state}`);
    });
    expect(outcome).toEqual({ kind: "returned", value: ["step 0:done", "step 1:done", "step 2:done"] });
    expect(rows).toHaveLength(3);
  });

  it("keeps journal order when a held step is followed by a step written at once", async () => {
    const { rows } = await run(async (step) => {
      await step.do("a", async () => 1);
      await step.sleep("nap", 0);
      await step.do("b", async () => 2);
      return null;
    });
    expect(rows.map((row) => `${row.name}:${row.state}`)).toEqual(["a:done", "nap:done", "b:done"]);
  });

  it("times every held row: one time for a whole batch, or each row's own when the clock moved", async () => {
    // A frozen clock (as workerd's between two I/O completions): the batch is written with one shared time.
    const frozen = await run(
      async (step, sql) => {
        for (let i = 0; i < 3; i++) await step.do(`step ${i}`, async () => i);
        await new Promise((resolve) => setTimeout(resolve, 0));
        return timesOf(sql);
      },
      () => 1_000,
    );
    expect(frozen.outcome).toEqual({ kind: "returned", value: Array.from({ length: 3 }, () => [1_000, 1_000, 1_000]) });
    // A clock that moves on every read: each row keeps when its attempt started and when it finished.
    let clock = 2_000;
    const moving = await run(
      async (step, sql) => {
        for (let i = 0; i < 3; i++) await step.do(`step ${i}`, async () => i);
        await new Promise((resolve) => setTimeout(resolve, 0));
        return timesOf(sql);
      },
      () => (clock += 10),
    );
    expect(moving.outcome.kind).toBe("returned");
    const times = (moving.outcome as { value: number[][] }).value;
    expect(times).toHaveLength(3);
    for (const [started, updated, attemptStarted] of times) {
      expect(updated).toBeGreaterThan(started!);
      expect(attemptStarted).toBe(started);
    }
    expect(times[1]![0]).toBeGreaterThan(times[0]![1]!);
  });

  it("writes a first attempt that fails as running, then its retry as usual", async () => {
    const { rows, outcome } = await run(async (step) => {
      await step.do("ok", async () => 1);
      await step.do("flaky", { retries: { limit: 0, delay: 0 } }, async () => {
        throw new Error("no");
      });
    });
    expect(outcome.kind).toBe("threw");
    expect(rows.map((row) => `${row.name}:${row.state}:${row.attempts}`)).toEqual(["ok:done:1", "flaky:failed:1"]);
  });
});
