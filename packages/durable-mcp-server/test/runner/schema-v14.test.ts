// Schema 13 (child tasks) from schema 12: the journal, rebuilt to allow the kind `invoke`, keeps every row with its
// seq and columns; the task gains `parent` (NULL), and `children` and `outbox` exist. A v12 task mid-flight goes on.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, schemaVersion } from "../../src/runner/schema.js";
import { TaskStore } from "../../src/runner/task-store.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { fixtureEnv, isFinal, probeFor, waitForTask } from "../helpers.js";

const STEP_COLUMNS = `seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at, started_at,
  idempotency_key, attempt_started_at, pack`;

describe("schema 13: child tasks", () => {
  it("migrates a v12 task with journaled and waiting steps; it runs on and can now journal invokes", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    const probeName = `probe-${taskId}`;
    const before = await runInDurableObject(stub, async (_, state) => {
      migrate(state.storage, 0, 12);
      const sql = state.storage.sql;
      const now = Date.now();
      sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin, step_key_salt, client_capabilities) VALUES (1, ?, 'alice', 'three_steps', ?,
           'working', ?, ?, 60000, 100, 'https://example.com', 'v12-salt-0123456789abcdef0123456789abcdef01', NULL)`,
        taskId,
        JSON.stringify({ probe: probeName, pauseMs: 1 }),
        now,
        now,
      );
      // `a`, the first pause and `b` done (the seqs with gaps, as deleted attempts leave them), the second pause waiting.
      sql.exec(
        `INSERT INTO steps (seq, name, occurrence, kind, state, attempts, result, updated_at, started_at,
           idempotency_key, attempt_started_at) VALUES (3, 'a', 1, 'do', 'done', 1, '1', ?, ?, '', ?)`,
        now,
        now,
        now,
      );
      sql.exec(
        `INSERT INTO steps (seq, name, occurrence, kind, state, wake_at, updated_at, started_at)
           VALUES (5, 'pause-1', 1, 'sleep', 'done', ?, ?, ?)`,
        now,
        now,
        now,
      );
      sql.exec(
        `INSERT INTO steps (seq, name, occurrence, kind, state, attempts, result, updated_at, started_at,
           idempotency_key, attempt_started_at) VALUES (7, 'b', 1, 'do', 'done', 1, '2', ?, ?, '', ?)`,
        now,
        now,
        now,
      );
      sql.exec(
        `INSERT INTO steps (seq, name, occurrence, kind, state, wake_at, updated_at, started_at)
           VALUES (9, 'pause-2', 1, 'sleep', 'waiting', ?, ?, ?)`,
        now + 3_600_000,
        now,
        now,
      );
      // Version 12 refuses the new kind.
      expect(() =>
        sql.exec(
          "INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('x', 1, 'invoke', 'waiting', 0)",
        ),
      ).toThrow(/CHECK/);
      await state.storage.setAlarm(now + 3_600_000);
      return {
        version: schemaVersion(sql),
        rows: sql.exec(`SELECT ${STEP_COLUMNS} FROM steps ORDER BY seq`).toArray(),
      };
    });
    expect(before.version).toBe(12);
    await evictDurableObject(stub);

    // The first call to the new instance migrates it.
    expect(await stub.get({ taskId, principal: "alice" })).toMatchObject({ status: "working" });
    const after = await runInDurableObject(stub, (_, state) => {
      const sql = state.storage.sql;
      // The new kind is accepted now (the row goes again: the task's code never asks for it).
      sql.exec("INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('x', 1, 'invoke', 'waiting', 0)");
      sql.exec("DELETE FROM steps WHERE name = 'x'");
      return {
        version: schemaVersion(sql),
        rows: sql.exec(`SELECT ${STEP_COLUMNS} FROM steps ORDER BY seq`).toArray(),
        parent: new TaskStore(sql).read()!.parent,
        tables: sql
          .exec("SELECT name FROM sqlite_master WHERE name IN ('children', 'outbox', 'steps_waiting') ORDER BY name")
          .toArray()
          .map((row) => row.name),
        kindCheck: sql.exec("SELECT sql FROM sqlite_master WHERE name = 'steps'").one().sql,
      };
    });
    expect(after.version).toBe(14);
    expect(after.rows).toEqual(before.rows);
    expect(after.parent).toBeNull();
    expect(after.tables).toEqual(["children", "outbox", "steps_waiting"]);
    expect(after.kindCheck).toContain("'invoke'");

    // The task goes on from its journal: only `c` runs.
    await runInDurableObject(stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'pause-2'", Date.now()),
    );
    await runDurableObjectAlarm(stub);
    const task = await waitForTask({ stub, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    const probe = probeFor(probeName);
    expect([await probe.count("a"), await probe.count("b"), await probe.count("c")]).toEqual([0, 0, 1]);
  });
});
