// Steps packed into the row before them (schema 11, packed-steps.ts PackedStep; issue 15, step engine round 3): a run
// of new steps that returned at their first attempt is written as one row, not one each. These run the engine on a real
// SQLite Durable Object and check that the packed journal is the same journal: replayed without running a body
// again, and read (steps, timeline with its attempt history and result sizes, completed steps) exactly as the same
// steps written a row each.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/runner/schema.js";
import { runWithJournal } from "../../src/steps/engine.js";
import { StepJournal } from "../../src/steps/journal.js";
import type { Step } from "../../src/steps/types.js";
import { fixtureEnv } from "../helpers.js";
import { engineHost } from "./engine-host.js";
import { journalRows } from "./journal-rows.js";

const hostOf = (journal: StepJournal, now: () => number) => engineHost(journal, { now });

const freshObject = () => fixtureEnv.PROBE.get(fixtureEnv.PROBE.newUniqueId());
const rowCount = (sql: SqlStorage) => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM steps").one().n;
/** A result with 1-, 2-, 3- and 4-byte UTF-8 characters, so that sizes are counted in bytes, not code units. */
const valueOf = (i: number) => `é€😀 ${i}`;
/** 600 steps, names used twice (`step 5`, then `step 5#2`), one of them awaiting real I/O in the middle. */
async function handler(step: Step, bodies: { n: number }): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const value = await step.do(`step ${i % 300}`, async () => {
      bodies.n++;
      // Running across a timer turn: its row is written as running, then updated; the steps after it pack anew.
      if (i === 400) await new Promise((resolve) => setTimeout(resolve, 1));
      return valueOf(i);
    });
    if (value !== valueOf(i)) throw new Error(`step ${i} returned ${value}`);
  }
  return "ok";
}

describe("steps packed into one row", () => {
  it("packs a run of steps that returned into few rows, and replays them without running a body again", async () => {
    await runInDurableObject(freshObject(), async (_object: unknown, state: DurableObjectState) => {
      migrate(state.storage, 0);
      const bodies = { n: 0 };
      // The clock stands still, as workerd's does while a run computes without I/O: what is counted is rows per batch,
      // not chunks cut by time (a clock moving 1 ms per read would make the run yield, and so write, every 10 reads).
      const clock = 1_000;
      const journal = new StepJournal(state.storage.sql);
      const first = await runWithJournal(
        (_input, step) => handler(step, bodies),
        null,
        hostOf(journal, () => clock),
      );
      // As the runner does before it writes the outcome.
      journal.flush();
      expect(first).toEqual({ kind: "returned", value: "ok" });
      expect(bodies.n).toBe(600);
      // One row per step before (600): now a row per batch of steps written together, and one for the step that ran
      // across I/O.
      expect(rowCount(state.storage.sql)).toBeLessThanOrEqual(8);
      const rows = journalRows(state.storage.sql);
      expect(rows.map((row) => `${row.name}#${row.occurrence}:${row.state}:${row.attempts}:${row.key}`)).toEqual(
        Array.from({ length: 600 }, (_v, i) => `step ${i % 300}#${i < 300 ? 1 : 2}:done:1:`),
      );
      expect(rows.map((row) => row.result)).toEqual(Array.from({ length: 600 }, (_v, i) => JSON.stringify(valueOf(i))));
      // A new run (as after an eviction: it loads the journal afresh) replays all 600 from the packed rows, then goes on with a new step.
      const replay = await runWithJournal(
        async (_input, step) => {
          await handler(step, bodies);
          return step.do("after", async () => "new");
        },
        null,
        hostOf(journal, () => clock),
      );
      journal.flush();
      expect(replay).toEqual({ kind: "returned", value: "new" });
      expect(bodies.n).toBe(600);
      expect(journalRows(state.storage.sql).map((row) => row.name)).toEqual([
        ...Array.from({ length: 600 }, (_v, i) => `step ${i % 300}`),
        "after",
      ]);
    });
  });

  it("reads as the same steps written a row each: load, timeline (count, times, attempts, sizes), completed steps", async () => {
    // The packed journal, with a clock that moves on every read: each packed step keeps its own times.
    const packed = await runInDurableObject(freshObject(), async (_object: unknown, state: DurableObjectState) => {
      migrate(state.storage, 0);
      let clock = 5_000;
      const journal = new StepJournal(state.storage.sql);
      await runWithJournal(
        (_input, step) => handler(step, { n: 0 }),
        null,
        hostOf(journal, () => (clock += 3)),
      );
      journal.flush();
      expect(rowCount(state.storage.sql)).toBeLessThan(600);
      return {
        rows: journalRows(state.storage.sql),
        load: journal.load(),
        timeline: journal.timeline(500),
        completed: journal.completedSteps(),
      };
    });
    // The same steps, each written as its own row, read by the same journal code.
    const unpacked = await runInDurableObject(freshObject(), async (_object: unknown, state: DurableObjectState) => {
      migrate(state.storage, 0);
      for (const row of packed.rows) {
        state.storage.sql.exec(
          `INSERT INTO steps (name, occurrence, kind, state, attempts, result, updated_at, started_at, idempotency_key,
             attempt_started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          row.name,
          row.occurrence,
          row.kind,
          row.state,
          row.attempts,
          row.result,
          row.updated_at,
          row.started_at,
          row.key,
          row.attempt_started_at,
        );
      }
      expect(rowCount(state.storage.sql)).toBe(600);
      const journal = new StepJournal(state.storage.sql);
      return { load: journal.load(), timeline: journal.timeline(500), completed: journal.completedSteps() };
    });
    expect(packed.load).toEqual(unpacked.load);
    expect(packed.timeline).toEqual(unpacked.timeline);
    expect(packed.completed).toEqual(unpacked.completed);
    // What that shared answer is: 600 steps, the last 500 shown, each with its own times and its size in bytes.
    expect(packed.timeline.total).toBe(600);
    expect(packed.timeline.steps).toHaveLength(500);
    expect(packed.timeline.steps[0]).toMatchObject({ name: "step 100", occurrence: 1, kind: "do", state: "done" });
    const bytes = new TextEncoder().encode(JSON.stringify(valueOf(599))).byteLength;
    const last = packed.timeline.steps[499]!;
    expect(last).toMatchObject({ name: "step 299", occurrence: 2, attempts: 1, resultBytes: bytes });
    expect(last.attemptHistory).toEqual([{ n: 1, startedAt: last.startedAt, endedAt: last.updatedAt }]);
    expect(last.durationMs).toBeGreaterThan(0);
    expect(new Set(packed.timeline.steps.map((step) => step.startedAt)).size).toBe(500);
    expect(packed.completed).toEqual(
      Array.from({ length: 600 }, (_v, i) => (i < 300 ? `step ${i}` : `step ${i % 300}#2`)),
    );
  });
});
