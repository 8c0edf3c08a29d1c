// A `do` step's first attempt is timed in the step's own journal row (schema v10), so a step that succeeds at once
// writes no step_attempts row; its history still shows that attempt, and a retry moves it to step_attempts.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, SCHEMA_VERSION, schemaVersion } from "../../src/runner/schema.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import type { StepTimelineEntry } from "../../src/steps/step-record.js";
import { STEPS_META } from "../../src/wire/meta-keys.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

async function stepsOf(started: Pick<StartedTask, "stub" | "access">): Promise<StepTimelineEntry[]> {
  const task = (await started.stub.get(started.access, { steps: true })) as DetailedTask;
  return (task._meta![STEPS_META] as unknown as { steps: StepTimelineEntry[] }).steps;
}

const attemptRows = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec<{ n: number }>("SELECT n FROM step_attempts ORDER BY n")
      .toArray()
      .map((r) => r.n),
  );

describe("attempt 1 in the step's row", () => {
  it("times a step that succeeds at once without an attempt row", async () => {
    const started = await startTask("pure_steps", { count: 3, tailMs: 0 });
    await waitForTask(started, isFinal);
    expect(await attemptRows(started.stub)).toEqual([]);
    const steps = (await stepsOf(started)).filter((step) => step.kind === "do");
    expect(steps).toHaveLength(3);
    for (const step of steps) {
      expect(step.attemptHistory).toEqual([{ n: 1, startedAt: step.startedAt, endedAt: step.updatedAt }]);
    }
  });

  it("moves attempt 1, with its error, to step_attempts when attempt 2 starts", async () => {
    const started = await startTask("flaky", { failures: 1, limit: 2, delayMs: 20, backoff: "constant" });
    await waitForTask(started, isFinal);
    expect(await attemptRows(started.stub)).toEqual([1, 2]);
    const [step] = await stepsOf(started);
    expect(step!.attemptHistory!.map((a) => [a.n, a.error?.message])).toEqual([
      [1, "boom 1"],
      [2, undefined],
    ]);
    expect(step!.attemptHistory![0]!.startedAt).toBe(step!.startedAt);
  });

  it("migrates a version-9 object mid-retry: its attempts stay where version 9 wrote them", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    const access = { taskId, principal: "alice" };
    const start = Date.now() - 1000;
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, 9);
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin, step_key_salt) VALUES (1, ?, 'alice', 'flaky', ?, 'working', ?, ?, 60000, 100,
           NULL, 'v9-salt-0123456789abcdef0123456789abcdef0123')`,
        taskId,
        JSON.stringify({ probe: `probe-${taskId}`, failures: 0, limit: 3, delayMs: 10 }),
        start,
        start,
      );
      // Version 9 wrote attempt 1 to step_attempts as it started; the object was evicted during it.
      state.storage.sql.exec(
        `INSERT INTO steps (name, occurrence, kind, state, attempts, updated_at, started_at, idempotency_key)
         VALUES ('flaky', 1, 'do', 'running', 1, ?, ?, 'k')`,
        start,
        start,
      );
      state.storage.sql.exec(
        `INSERT INTO step_attempts (name, occurrence, slot, n, started_at) VALUES ('flaky', 1, 0, 1, ?)`,
        start,
      );
      return state.storage.setAlarm(Date.now() + 60_000);
    });
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);
    await waitForTask({ stub, access }, isFinal);
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION);
    const [step] = await stepsOf({ stub, access });
    expect(step!.attempts).toBe(2);
    // Attempt 1 as version 9 kept it (interrupted: no end), then attempt 2, ended.
    expect(step!.attemptHistory!.map((a) => [a.n, a.startedAt, a.endedAt === null])).toEqual([
      [1, new Date(start).toISOString(), true],
      [2, expect.any(String), false],
    ]);
  });

  it("rebuilds the journal without AUTOINCREMENT, keeping every row's seq; new steps come after them", async () => {
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(newTaskId()));
    const shape = await runInDurableObject(stub, (_, state) => {
      const sql = state.storage.sql;
      // An object of version 9 with three journaled rows (seq 1, 2, 5), migrated to the latest.
      migrate(state.storage, 0, 9);
      for (const [seq, name] of [
        [1, "a"],
        [2, "b"],
        [5, "c"],
      ] as const) {
        sql.exec(
          "INSERT INTO steps (seq, name, occurrence, kind, state, attempts, updated_at) VALUES (?, ?, 1, 'do', 'done', 1, 0)",
          seq,
          name,
        );
      }
      migrate(state.storage, 9);
      sql.exec("INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('d', 1, 'do', 'done', 0)");
      return {
        version: schemaVersion(sql),
        rows: sql.exec("SELECT seq, name FROM steps ORDER BY seq").toArray(),
        table: sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'steps'").one().sql,
        sequence: sql.exec("SELECT name FROM sqlite_sequence WHERE name = 'steps'").toArray(),
      };
    });
    expect(shape.version).toBe(SCHEMA_VERSION);
    expect(shape.rows).toEqual([
      { seq: 1, name: "a" },
      { seq: 2, name: "b" },
      { seq: 5, name: "c" },
      { seq: 6, name: "d" },
    ]);
    expect(shape.table).not.toMatch(/AUTOINCREMENT/i);
    expect(shape.sequence).toEqual([]);
  });
});
