// The per-attempt history of `do` steps (step_attempts): written with the step's own journal row, exposed on the
// steps `_meta` of tasks/get, bounded per step, migrated onto older objects, and gone with the task.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { MAX_STEP_ATTEMPTS_KEPT } from "../../src/limits.js";
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

const ms = (iso: string | null) => Date.parse(iso!);

describe("step attempt history", () => {
  it("times each attempt with its error, and the back-off between them, on tasks/get's steps _meta", async () => {
    const started = await startTask("flaky", { failures: 2, limit: 3, delayMs: 40, backoff: "exponential" });
    await waitForTask(started, isFinal);
    const [step] = await stepsOf(started);
    // "ok after 3" as JSON: 12 bytes.
    expect(step).toMatchObject({ name: "flaky", kind: "do", state: "done", attempts: 3, resultBytes: 12 });
    const history = step!.attemptHistory!;
    expect(history.map((a) => [a.n, a.error])).toEqual([
      [1, { name: "Error", message: "boom 1" }],
      [2, { name: "Error", message: "boom 2" }],
      [3, undefined],
    ]);
    for (const attempt of history) expect(ms(attempt.endedAt)).toBeGreaterThanOrEqual(ms(attempt.startedAt));
    // The back-off is the gap between an attempt's end and the next one's start: 40 ms, then 80 ms.
    expect(ms(history[1]!.startedAt) - ms(history[0]!.endedAt)).toBeGreaterThanOrEqual(40);
    expect(ms(history[2]!.startedAt) - ms(history[1]!.endedAt)).toBeGreaterThanOrEqual(80);
    // The step spans its attempts: first start to last end.
    expect(history[0]!.startedAt).toBe(step!.startedAt);
    expect(history[2]!.endedAt).toBe(step!.updatedAt);
  });

  it("keeps the newest MAX_STEP_ATTEMPTS_KEPT attempts of a step, while the count stays exact", async () => {
    const failures = MAX_STEP_ATTEMPTS_KEPT + 4;
    const started = await startTask("flaky", { failures, limit: failures, delayMs: 1, backoff: "constant" });
    await waitForTask(started, isFinal, 20_000);
    const [step] = await stepsOf(started);
    expect(step!.attempts).toBe(failures + 1);
    const kept = step!.attemptHistory!.map((a) => a.n);
    expect(kept).toEqual(
      Array.from({ length: MAX_STEP_ATTEMPTS_KEPT }, (_, i) => failures + 2 - MAX_STEP_ATTEMPTS_KEPT + i),
    );
    const rows = await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("SELECT COUNT(*) AS n FROM step_attempts").one(),
    );
    expect(rows.n).toBe(MAX_STEP_ATTEMPTS_KEPT);
  });

  it("gives no history to steps other than `do`", async () => {
    const started = await startTask("three_steps");
    await waitForTask(started, isFinal);
    for (const step of await stepsOf(started)) {
      if (step.kind === "do") expect(step.attemptHistory).toHaveLength(1);
      else expect(step.attemptHistory).toBeUndefined();
    }
  });

  it("migrates an object of the version before: an interrupted attempt goes on, timed from then on", async () => {
    const taskId = newTaskId();
    const probeName = `probe-${taskId}`;
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    const access = { taskId, principal: "alice" };
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, SCHEMA_VERSION - 1);
      const now = Date.now();
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin, step_key_salt) VALUES (1, ?, 'alice', 'flaky', ?, 'working', ?, ?, 60000, 100,
           NULL, 'prev-salt-0123456789abcdef0123456789abcdef01')`,
        taskId,
        JSON.stringify({ probe: probeName, failures: 0, limit: 3, delayMs: 10 }),
        now,
        now,
      );
      // Attempt 1 was under way when the object was evicted, before the history existed.
      state.storage.sql.exec(
        `INSERT INTO steps (name, occurrence, kind, state, attempts, updated_at, started_at, idempotency_key)
         VALUES ('flaky', 1, 'do', 'running', 1, ?, ?, 'k')`,
        now,
        now,
      );
      return state.storage.setAlarm(now + 60_000);
    });
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION - 1);
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);
    const task = await waitForTask({ stub, access }, isFinal);
    expect(task.result).toMatchObject({ content: [{ type: "text", text: "ok after 2" }] });
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION);
    const [step] = await stepsOf({ stub, access });
    // Attempt 1 was counted but never timed: it is not made up.
    expect(step!.attempts).toBe(2);
    expect(step!.attemptHistory!.map((a) => a.n)).toEqual([2]);
    expect(step!.attemptHistory![0]!.endedAt).not.toBeNull();
  });

  it("is deleted with the task", async () => {
    const started = await startTask("flaky", { failures: 1, limit: 2, delayMs: 1 }, { ttlMs: 300 });
    await waitForTask(started, isFinal);
    const before = await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("SELECT COUNT(*) AS n FROM step_attempts").one(),
    );
    expect(before.n).toBe(2);
    // TTL 300 ms, purge grace 200 ms: the purge alarm deletes the whole database.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await runDurableObjectAlarm(started.stub);
    const tables = await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'step_attempts'").toArray(),
    );
    expect(tables).toEqual([]);
    expect(await started.stub.get(started.access)).toBeNull();
  });
});
