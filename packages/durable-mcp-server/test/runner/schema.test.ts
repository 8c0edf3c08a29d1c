import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, SCHEMA_VERSION, schemaVersion } from "../../src/runner/schema.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { fixtureEnv, isFinal, waitForTask } from "../helpers.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner.js";

describe("schema migrations", () => {
  it("creates no tables for an id nobody created a task under", async () => {
    const stub = fixtureEnv.TASK_RUNNER.get(
      fixtureEnv.TASK_RUNNER.idFromName(newTaskId()),
    ) as unknown as DurableObjectStub & TaskRunnerRpc;
    expect(await stub.get({ taskId: "x".repeat(32), principal: "alice" })).toBeNull();
    expect(
      await runInDurableObject(stub, (_, state) =>
        state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name NOT LIKE '\\_%' ESCAPE '\\'").toArray(),
      ),
    ).toEqual([]);
  });

  it("brings an object written by schema version 1 up to date on its next start, keeping its task", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    // An object as an older deployment left it: schema 1, a live task, its alarm armed.
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, 1);
      const input = JSON.stringify({ probe: `probe-${taskId}` });
      // The row as version 1 wrote it (today's TaskStore writes columns version 1 did not have).
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms) VALUES (1, ?, 'alice', 'three_steps', ?, 'working', ?, ?, 60000, 100)`,
        taskId,
        input,
        Date.now(),
        Date.now(),
      );
      return state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(1);
    await evictDurableObject(stub);
    // The new instance migrates on start; then its alarm runs the task.
    await runDurableObjectAlarm(stub);

    const task = await waitForTask({ stub, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    const after = await runInDurableObject(stub, (_, state) => ({
      version: schemaVersion(state.storage.sql),
      index: state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'steps_waiting'")
        .toArray().length,
    }));
    expect(after).toEqual({ version: SCHEMA_VERSION, index: 1 });
    expect(SCHEMA_VERSION).toBe(4);
    const record = await runInDurableObject(stub, (_, state) => new TaskStore(state.storage.sql).read());
    expect(record).toMatchObject({ taskId, status: "completed", origin: null });
  });
});
