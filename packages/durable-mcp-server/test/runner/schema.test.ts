import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, SCHEMA_VERSION, schemaVersion } from "../../src/runner/schema.js";
import { DERIVED_KEY } from "../../src/steps/step-record.js";
import { StepKeys } from "../../src/steps/step-keys.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { fixtureEnv, fixtureTask, isFinal, probeFor, waitForTask } from "../helpers.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";

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

  it("makes a new task's object, created or prepared, at the current schema in one script", async () => {
    const shapes = [];
    for (const make of ["create", "prepare"] as const) {
      const taskId = newTaskId();
      const stub = fixtureEnv.TASK_RUNNER.get(
        fixtureEnv.TASK_RUNNER.idFromName(taskId),
      ) as unknown as DurableObjectStub & TaskRunnerRpc;
      if (make === "create") {
        await stub.create(fixtureTask(taskId, "three_steps"));
      } else {
        expect(await stub.prepare()).toBe(true);
      }
      shapes.push(
        await runInDurableObject(stub, (_, state) => ({
          version: schemaVersion(state.storage.sql),
          ledger: state.storage.sql
            .exec<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version")
            .toArray()
            .map((row) => row.version),
          steps: state.storage.sql
            .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'steps'")
            .one().sql,
        })),
      );
    }
    for (const shape of shapes) {
      expect(shape.version).toBe(SCHEMA_VERSION);
      expect(shape.ledger).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, index) => index + 1));
      // Made as it is now, not rebuilt: a table the migrations rebuild is stored under its rename, `"steps"`.
      expect(shape.steps).toMatch(/^CREATE TABLE steps \(/);
    }
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
    // It is HMAC(salt, `1:notify`), the salt migration 5 gave the task: derived when read, so not stored.
    const { salt, keys } = await runInDurableObject(stub, (_, state) => ({
      salt: state.storage.sql.exec<{ s: string }>("SELECT step_key_salt AS s FROM task").one().s,
      keys: state.storage.sql.exec("SELECT name, idempotency_key AS key FROM steps ORDER BY seq").toArray(),
    }));
    expect(notify).toBe(new StepKeys(salt).derive("notify", 1));
    expect(keys).toEqual([
      { name: "charge", key: `${taskId}:charge` },
      { name: "pause", key: null },
      { name: "notify", key: DERIVED_KEY },
    ]);
    expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION);
  });
});

const V5_SALT = "v5-salt-0123456789abcdef0123456789abcdef012";

/** A TaskRunner's database as schema 5 left it: the task row and its journal rows, as v5 wrote them. */
async function v5Task(
  steps: Array<{ name: string; kind: string; state: string; attempts?: number; result?: string; key?: string }>,
  options: { wakeAt?: number; request?: string } = {},
) {
  const taskId = newTaskId();
  const probeName = `probe-${taskId}`;
  const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as DurableObjectStub &
    TaskRunnerRpc;
  await runInDurableObject(stub, (_, state) => {
    migrate(state.storage, 0, 5);
    const now = Date.now();
    state.storage.sql.exec(
      `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
         poll_interval_ms, origin, step_key_salt) VALUES (1, ?, 'alice', 'in_flight', ?, ?, ?, ?, 60000, 100, NULL, ?)`,
      taskId,
      JSON.stringify({ probe: probeName }),
      steps.some((step) => step.kind === "input" && step.state === "waiting") ? "input_required" : "working",
      now,
      now,
      V5_SALT,
    );
    for (const step of steps) {
      state.storage.sql.exec(
        `INSERT INTO steps (name, kind, state, attempts, result, wake_at, request, updated_at, started_at,
           idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        step.name,
        step.kind,
        step.state,
        step.attempts ?? 0,
        step.result ?? null,
        step.state === "waiting" && step.kind === "sleep" ? (options.wakeAt ?? now) : null,
        step.kind === "input" ? (options.request ?? null) : null,
        now,
        now,
        step.key ?? null,
      );
    }
    return state.storage.setAlarm(now + 60_000);
  });
  expect(await runInDurableObject(stub, (_, state) => schemaVersion(state.storage.sql))).toBe(5);
  // A bodies' run before the deploy, as the done rows say.
  const probe = probeFor(probeName);
  for (const step of steps) if (step.kind === "do" && step.state === "done") await probe.hit(step.name);
  return { taskId, stub, probe, access: { taskId, principal: "alice" } };
}

const journal = (stub: DurableObjectStub, columns = "seq, name, occurrence, kind, state, idempotency_key AS key") =>
  runInDurableObject(stub, (_, state) => state.storage.sql.exec(`SELECT ${columns} FROM steps ORDER BY seq`).toArray());
const confirm = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Go on?",
    requestedSchema: { type: "object", properties: { go: { type: "boolean" } } },
  },
};

async function resume(task: Awaited<ReturnType<typeof v5Task>>) {
  await evictDurableObject(task.stub);
  // The new instance migrates on start; its alarm resumes the task up to the input request.
  await runDurableObjectAlarm(task.stub);
  const asked = await waitForTask(task, (t) => t.status !== "working");
  expect(asked.status).toBe("input_required");
  expect(asked.inputRequests).toEqual({ confirm });
  expect(await task.stub.update(task.access, { confirm: { action: "accept", content: { go: true } } })).toEqual({
    accepted: ["confirm"],
  });
  await runDurableObjectAlarm(task.stub);
  const done = await waitForTask(task, isFinal);
  expect(done.status).toBe("completed");
  expect(JSON.parse((done.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({
    a: "a",
    b: "b",
    go: true,
  });
  expect(await task.probe.count("a")).toBe(1);
  expect(await task.probe.count("b")).toBe(1);
  expect(await runInDurableObject(task.stub, (_, state) => schemaVersion(state.storage.sql))).toBe(SCHEMA_VERSION);
}

describe("schema 6: steps keyed by (name, occurrence)", () => {
  it("resumes a task that was waiting in a sleep: the done step is not run again and keeps its key", async () => {
    const task = await v5Task(
      [
        { name: "a", kind: "do", state: "done", attempts: 1, result: '"a"', key: "key-a-from-v5" },
        { name: "nap", kind: "sleep", state: "waiting" },
      ],
      { wakeAt: Date.now() - 1 },
    );
    const before = await journal(task.stub, "seq, name, kind, idempotency_key AS key");
    await resume(task);
    const after = await journal(task.stub);
    // Rows kept their seq and key and became occurrence 1; new rows come after them.
    expect(after.slice(0, 2)).toEqual([
      { ...before[0], occurrence: 1, state: "done" },
      { ...before[1], occurrence: 1, state: "done" },
    ]);
    expect(after.map((row) => [row.name, row.occurrence, row.kind])).toEqual([
      ["a", 1, "do"],
      ["nap", 1, "sleep"],
      ["b", 1, "do"],
      ["confirm", 1, "input"],
    ]);
    expect(after[0]!.key).toBe("key-a-from-v5");
    // "b", first attempted after the deploy, got the key derived from the task's salt (not stored: derived).
    expect(await task.probe.value("b-key")).toBe(new StepKeys(V5_SALT).derive("b", 1));
    expect(after[2]!.key).toBe(DERIVED_KEY);
  });

  it("resumes a step interrupted mid-attempt under v5 with the key its first attempt was handed", async () => {
    const task = await v5Task([
      { name: "a", kind: "do", state: "done", attempts: 1, result: '"a"', key: "key-a-from-v5" },
      { name: "nap", kind: "sleep", state: "done" },
      { name: "b", kind: "do", state: "running", attempts: 1, key: "key-b-from-v5" },
    ]);
    await resume(task);
    expect(await task.probe.value("b-key")).toBe("key-b-from-v5");
    const after = await journal(task.stub);
    expect(after.find((row) => row.name === "b")).toMatchObject({ occurrence: 1, state: "done", key: "key-b-from-v5" });
  });

  it("keeps a pending input request outstanding under the same key, and completes once it is answered", async () => {
    const task = await v5Task(
      [
        { name: "a", kind: "do", state: "done", attempts: 1, result: '"a"', key: "key-a-from-v5" },
        { name: "nap", kind: "sleep", state: "done" },
        { name: "b", kind: "do", state: "done", attempts: 1, result: '"b"', key: "key-b-from-v5" },
        { name: "confirm", kind: "input", state: "waiting" },
      ],
      { request: JSON.stringify(confirm) },
    );
    await resume(task);
    expect((await journal(task.stub)).map((row) => [row.name, row.occurrence, row.state])).toEqual([
      ["a", 1, "done"],
      ["nap", 1, "done"],
      ["b", 1, "done"],
      ["confirm", 1, "done"],
    ]);
  });

  it("rebuilds the table with the new key, the reserved kinds and the waiting index", async () => {
    const task = await v5Task([{ name: "a", kind: "do", state: "done", attempts: 1, result: '"a"' }]);
    await evictDurableObject(task.stub);
    const shape = await runInDurableObject(task.stub, (_, state) => {
      const sql = state.storage.sql;
      const now = Date.now();
      // A second use of a name is its own row now; the same (name, occurrence) twice is refused.
      sql.exec(
        "INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('a', 2, 'do', 'running', ?)",
        now,
      );
      for (const kind of ["event", "webhook", "patch"]) {
        sql.exec(
          "INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES (?, 1, ?, 'done', ?)",
          kind,
          kind,
          now,
        );
      }
      const duplicate = (() => {
        try {
          sql.exec(
            "INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('a', 1, 'do', 'done', ?)",
            now,
          );
          return "accepted";
        } catch (error) {
          return String(error);
        }
      })();
      const badKind = (() => {
        try {
          sql.exec(
            "INSERT INTO steps (name, occurrence, kind, state, updated_at) VALUES ('x', 1, 'nap', 'done', ?)",
            now,
          );
          return "accepted";
        } catch (error) {
          return String(error);
        }
      })();
      return {
        version: schemaVersion(sql),
        duplicate,
        badKind,
        rows: sql.exec("SELECT seq, name, occurrence FROM steps ORDER BY seq").toArray(),
        index: sql.exec("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'steps_waiting'").toArray(),
        leftovers: sql.exec("SELECT name FROM sqlite_master WHERE name LIKE 'steps_v%'").toArray(),
      };
    });
    expect(shape.version).toBe(SCHEMA_VERSION);
    expect(shape.duplicate).toMatch(/UNIQUE constraint failed/);
    expect(shape.badKind).toMatch(/CHECK constraint failed/);
    expect(shape.rows.map((row) => [row.name, row.occurrence])).toEqual([
      ["a", 1],
      ["a", 2],
      ["event", 1],
      ["webhook", 1],
      ["patch", 1],
    ]);
    // AUTOINCREMENT carried over: new rows come after the migrated ones.
    expect(shape.rows.map((row) => row.seq as number)).toEqual([1, 2, 3, 4, 5]);
    expect(shape.index).toHaveLength(1);
    expect(shape.leftovers).toEqual([]);
  });
});
