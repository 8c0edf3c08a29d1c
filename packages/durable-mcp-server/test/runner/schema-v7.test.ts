// Schema 7 (the event inbox and webhook deliveries) from schema 6: a task mid-flight under v6 keeps its journal and,
// once migrated, can be sent events before and while it waits for them.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { migrate, SCHEMA_VERSION, schemaVersion } from "../../src/runner/schema.js";
import { sendTaskEvent } from "../../src/tasks/send-event.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { fixtureEnv, isFinal, probeFor, waitForTask } from "../helpers.js";

describe("schema 7: the event inbox", () => {
  it("migrates a v6 task sleeping before its wait; an event sent then is kept and taken by the wait", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    const probeName = `probe-${taskId}`;
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, SCHEMA_VERSION - 1);
      const now = Date.now();
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin, step_key_salt) VALUES (1, ?, 'alice', 'event_wait', ?, 'working', ?, ?, 60000,
           100, NULL, 'v6-salt-0123456789abcdef0123456789abcdef012')`,
        taskId,
        JSON.stringify({ probe: probeName, sleepMs: 60_000 }),
        now,
        now,
      );
      state.storage.sql.exec(
        `INSERT INTO steps (name, occurrence, kind, state, wake_at, updated_at, started_at)
           VALUES ('before', 1, 'sleep', 'waiting', ?, ?, ?)`,
        now + 3_600_000,
        now,
        now,
      );
      return state.storage.setAlarm(now + 3_600_000);
    });
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION - 1);
    await evictDurableObject(stub);

    // The first call to the new instance migrates it; the event is kept in the new inbox.
    const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);
    expect(
      await sendTaskEvent(runners, taskId, { type: "approved", payload: "after the deploy" }, { trustedSender: true }),
    ).toEqual({
      outcome: "buffered",
    });
    const tables = await runInDurableObject(stub, (_, state) => ({
      version: schemaVersion(state.storage.sql),
      tables: state.storage.sql
        .exec(
          "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name LIKE '%event%' OR name LIKE 'webhook%' ORDER BY name",
        )
        .toArray()
        .map((row) => row.name),
      steps: state.storage.sql.exec("SELECT name, kind, state FROM steps ORDER BY seq").toArray(),
    }));
    expect(tables).toEqual({
      version: SCHEMA_VERSION,
      tables: ["event_inbox", "event_inbox_type", "webhook_deliveries"],
      steps: [{ name: "before", kind: "sleep", state: "waiting" }],
    });

    await runInDurableObject(stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'before'", Date.now()),
    );
    await runDurableObjectAlarm(stub);
    const task = await waitForTask({ stub, access: { taskId, principal: "alice" } }, isFinal);
    expect(JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({
      type: "approved",
      payload: "after the deploy",
      isDate: true,
    });
    expect(await probeFor(probeName).count("after")).toBe(1);
  });
});
