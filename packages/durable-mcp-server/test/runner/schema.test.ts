import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, SCHEMA_VERSION, schemaVersion } from "../../src/runner/schema.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { fixtureEnv, isFinal, probeFor, waitForTask } from "../helpers.js";
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
    const record = await runInDurableObject(stub, (_, state) => new TaskStore(state.storage.sql).read());
    expect(record).toMatchObject({ taskId, status: "completed", origin: null, clientCapabilities: null });
    expect(record?.stepKeySalt).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("gives a task written by the version before client capabilities none: it may still ask any question", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.MCP_TASK_RUNNER.get(
      fixtureEnv.MCP_TASK_RUNNER.idFromName(taskId),
    ) as unknown as DurableObjectStub & TaskRunnerRpc;
    // The previous version, with a live `confirm` task (it asks one form question) as that version wrote it.
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, SCHEMA_VERSION - 1);
      const now = Date.now();
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin, step_key_salt) VALUES (1, ?, 'alice', 'confirm', '{}', 'working', ?, ?, 60000, 50,
           NULL, 'salt-salt-salt-salt-salt-salt-salt-salt-sal')`,
        taskId,
        now,
        now,
      );
      return state.storage.setAlarm(now + 60_000);
    });
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);

    const access = { taskId, principal: "alice" };
    const asking = await waitForTask({ stub, access }, (task) => task.status === "input_required" || isFinal(task));
    expect(asking.status).toBe("input_required");
    expect(Object.keys(asking.inputRequests ?? {})).toEqual(["ok"]);
    const migrated = await runInDurableObject(stub, (_, state) => ({
      version: schemaVersion(state.storage.sql),
      record: new TaskStore(state.storage.sql).read(),
    }));
    expect(migrated.version).toBe(SCHEMA_VERSION);
    expect(migrated.record?.clientCapabilities).toBeNull();
  });

  it("keeps the key an attempted step was given under schema 4, and gives every other step a derived one", async () => {
    const taskId = newTaskId();
    const probeName = `probe-${taskId}`;
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
      TaskRunnerRpc;
    // Schema 4 as an older deployment left it: "charge" was interrupted mid-attempt after its body was handed the
    // old key (taskId:charge); "notify" was never reached.
    await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, 4);
      const now = Date.now();
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, origin) VALUES (1, ?, 'alice', 'keyed', ?, 'working', ?, ?, 60000, 100, NULL)`,
        taskId,
        JSON.stringify({ probe: probeName }),
        now,
        now,
      );
      state.storage.sql.exec(
        `INSERT INTO steps (name, kind, state, attempts, updated_at, started_at)
         VALUES ('charge', 'do', 'running', 1, ?, ?)`,
        now,
        now,
      );
      return state.storage.setAlarm(now + 60_000);
    });
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);

    const task = await waitForTask({ stub, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    const { charge, notify } = JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
    // The retried attempt got the key its first attempt had: the step was not re-keyed under it.
    expect(await probeFor(probeName).value("charge-key-2")).toBe(`${taskId}:charge`);
    expect(charge).toBe(`${taskId}:charge`);
    // A step first attempted after the migration gets a derived key, free of the task id.
    expect(notify).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(notify).not.toContain(taskId);
    const keys = await runInDurableObject(stub, (_, state) =>
      state.storage.sql.exec("SELECT name, idempotency_key AS key FROM steps ORDER BY seq").toArray(),
    );
    expect(keys).toEqual([
      { name: "charge", key: `${taskId}:charge` },
      { name: "pause", key: null },
      { name: "notify", key: notify },
    ]);
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION);
  });
});
