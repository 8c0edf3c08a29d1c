import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { FIRST_RUN_FALLBACK_MS, PREPARED_RUNNER_TTL_MS } from "../../src/limits.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { PREPARED_DEADLINE_KEY } from "../../src/runner/prepared-runner.js";
import type { NewTask } from "../../src/runner/task-store.js";
import { SCHEMA_VERSION } from "../../src/runner/schema.js";
import { registriesBuilt } from "../fixtures/worker.js";
import { fixtureEnv, isFinal, probeFor, waitForTask } from "../helpers.js";

type Runner = DurableObjectStub & TaskRunnerRpc;

function runnerFor(taskId: string): Runner {
  const namespace = fixtureEnv.TASK_RUNNER;
  return namespace.get(namespace.idFromName(taskId)) as unknown as Runner;
}

function newTask(
  taskId: string,
  principal: string,
  tool = "three_steps",
  extra: Record<string, unknown> = {},
): NewTask {
  return {
    taskId,
    principal,
    tool,
    input: JSON.stringify({ probe: `probe-${taskId}`, ...extra }),
    ttlMs: 60_000,
    pollIntervalMs: 100,
  };
}

/** Every user table and the alarm: what a runner leaves in storage. */
const storageOf = (runner: Runner) =>
  runInDurableObject(runner, async (_, state) => ({
    tables: state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
      )
      .toArray()
      .map((row) => row.name),
    alarm: await state.storage.getAlarm(),
  }));

/** A three_steps task on a fresh runner, to its end. */
async function runToEnd() {
  const taskId = newTaskId();
  const runner = runnerFor(taskId);
  await runner.create(newTask(taskId, "alice"));
  return waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
}

/** The deadline an unclaimed runner keeps (when it deletes itself), and its alarm. */
const deadlineOf = (runner: Runner) =>
  runInDurableObject(runner, async (_, state) => ({
    deadline: state.storage.kv.get<number>(PREPARED_DEADLINE_KEY),
    alarm: await state.storage.getAlarm(),
  }));

/**
 * Brings an unclaimed runner to its deadline without waiting 5 minutes: delivers the alarm prepare armed (which
 * re-arms at the deadline), then moves the kept deadline to now — the only stand-in for the clock — and delivers the
 * deadline's alarm.
 */
async function passDeadline(runner: Runner): Promise<void> {
  expect(await runDurableObjectAlarm(runner)).toBe(true);
  const { deadline, alarm } = await deadlineOf(runner);
  expect(alarm).toBe(deadline);
  await runInDurableObject(runner, (_, state) => state.storage.kv.put(PREPARED_DEADLINE_KEY, Date.now()));
  expect(await runDurableObjectAlarm(runner)).toBe(true);
}

/** Counts this instance's `setAlarm` calls from now on (create's, the run's, the alarm handler's). */
const countSetAlarm = (runner: Runner) =>
  runInDurableObject(runner, (_, state) => {
    const storage = state.storage as DurableObjectStorage & { setAlarmCalls: number };
    const setAlarm = storage.setAlarm.bind(storage);
    storage.setAlarmCalls = 0;
    storage.setAlarm = (...args) => (storage.setAlarmCalls++, setAlarm(...args));
  });
const setAlarmCalls = (runner: Runner) =>
  runInDurableObject(
    runner,
    (_, state) => (state.storage as DurableObjectStorage & { setAlarmCalls: number }).setAlarmCalls,
  );

const schemaOf = (runner: Runner) =>
  runInDurableObject(
    runner,
    (_, state) => state.storage.sql.exec<{ v: number }>("SELECT MAX(version) AS v FROM schema_migrations").one().v,
  );

describe("pre-created TaskRunners (prepare)", () => {
  it("applies the schema, keeps a deadline and arms its alarm at most FIRST_RUN_FALLBACK_MS ahead, creating no task", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    const before = Date.now();
    expect(await runner.prepare()).toBe(true);
    const after = Date.now();
    expect(await schemaOf(runner)).toBe(SCHEMA_VERSION);
    const { tables, alarm } = await storageOf(runner);
    expect(tables).toContain("task");
    expect(alarm).toBeGreaterThanOrEqual(before + FIRST_RUN_FALLBACK_MS);
    expect(alarm).toBeLessThanOrEqual(after + FIRST_RUN_FALLBACK_MS);
    expect((await deadlineOf(runner)).deadline).toBeGreaterThanOrEqual(before + PREPARED_RUNNER_TTL_MS);
    expect(
      await runInDurableObject(runner, (_, state) => state.storage.sql.exec("SELECT * FROM task").toArray()),
    ).toEqual([]);
  });

  it("answers every call on a prepared, unclaimed id exactly as on an unknown id", async () => {
    const prepared = runnerFor(newTaskId());
    const unknownId = newTaskId();
    const unknown = runnerFor(unknownId);
    await prepared.prepare();
    const preparedId = (await runInDurableObject(prepared, (_, state) => state.id.name)) ?? "";
    for (const [runner, taskId] of [
      [prepared, preparedId],
      [unknown, unknownId],
    ] as const) {
      const access = { taskId, principal: "alice" };
      expect(await runner.get(access)).toBeNull();
      expect(await runner.inspect(access)).toBeNull();
      expect(await runner.update(access, { a: 1 })).toBeNull();
      expect(await runner.cancel(access)).toBe(false);
      expect(await runner.awaitSettled(access, 10)).toBeNull();
      expect(await runner.watch(access)).toBeNull();
      expect(await runner.sendEvent(taskId, { type: "t", payload: "1" })).toEqual({
        refused: "unknown_task",
        message: `no task ${taskId}`,
      });
      expect(await runner.deliverWebhook(taskId, { hookId: "h", type: "t", payload: "1" })).toMatchObject({
        status: 404,
      });
    }
    // None of those reads claimed it: it is still unclaimed, and still goes at its deadline.
    await passDeadline(prepared);
    expect(await storageOf(prepared)).toEqual({ tables: [], alarm: null });
  });

  it("re-arms at its deadline when its first alarm finds it unclaimed, and leaves no storage once the deadline passes", async () => {
    const runner = runnerFor(newTaskId());
    const before = Date.now();
    await runner.prepare();
    const { deadline } = await deadlineOf(runner);
    expect(deadline).toBeGreaterThanOrEqual(before + PREPARED_RUNNER_TTL_MS);
    expect((await storageOf(runner)).tables.length).toBeGreaterThan(0);
    // The alarm FIRST_RUN_FALLBACK_MS after prepare: nothing is deleted, the alarm moves to the kept deadline.
    expect(await runDurableObjectAlarm(runner)).toBe(true);
    expect((await storageOf(runner)).tables).toContain("task");
    expect(await deadlineOf(runner)).toEqual({ deadline, alarm: deadline });
    // Delivered early (the platform retries, or a local clock), it re-arms again rather than deleting.
    expect(await runDurableObjectAlarm(runner)).toBe(true);
    expect(await deadlineOf(runner)).toEqual({ deadline, alarm: deadline });
    // At the deadline it goes.
    await runInDurableObject(runner, (_, state) => state.storage.kv.put(PREPARED_DEADLINE_KEY, Date.now()));
    expect(await runDurableObjectAlarm(runner)).toBe(true);
    expect(await storageOf(runner)).toEqual({ tables: [], alarm: null });
  });

  it("binds the principal at create, not at prepare, and is claimed at most once", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    const created = await runner.create(newTask(taskId, "bob"));
    expect(created).toMatchObject({ taskId, status: "working" });
    expect(await runner.get({ taskId, principal: "bob" })).toMatchObject({ taskId });
    expect(await runner.get({ taskId, principal: "alice" })).toBeNull();

    // A second create on the claimed runner, for anyone or anything else, is refused and changes nothing.
    expect(await runner.create(newTask(taskId, "mallory"))).toBeNull();
    expect(await runner.create(newTask(taskId, "bob", "sleeper", { ms: 1 }))).toBeNull();
    // Preparing it again does not touch it either.
    expect(await runner.prepare()).toBe(false);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "bob" } }, isFinal);
    expect(task).toMatchObject({ status: "completed" });
    expect(await runner.get({ taskId, principal: "mallory" })).toBeNull();
    expect(await probeFor(`probe-${taskId}`).count("a")).toBe(1);
  });

  it("keeps a claimed task at its deadline: the alarm runs it instead of deleting it", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    await runner.create(newTask(taskId, "alice", "sleeper", { ms: 60_000 }));
    await runDurableObjectAlarm(runner);
    await runDurableObjectAlarm(runner);
    expect(await runner.get({ taskId, principal: "alice" })).toMatchObject({ taskId, status: "working" });
    expect((await storageOf(runner)).tables).toContain("task");
  });

  it("loses nothing when a prepared runner is evicted: its deadline and schema stay, a create still claims it", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    const before = await storageOf(runner);
    await evictDurableObject(runner);
    expect(await storageOf(runner)).toEqual(before);
    expect(await runner.create(newTask(taskId, "alice"))).toMatchObject({ taskId });
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");

    // And one evicted and never claimed still goes at its deadline.
    const other = runnerFor(newTaskId());
    await other.prepare();
    await evictDurableObject(other);
    await passDeadline(other);
    expect(await storageOf(other)).toEqual({ tables: [], alarm: null });
  });

  it("a create within FIRST_RUN_FALLBACK_MS of prepare keeps the prepared alarm as the first run's fallback: no setAlarm", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    const { alarm: prepared } = await storageOf(runner);
    await countSetAlarm(runner);
    const createdAt = Date.now();
    await runner.create(newTask(taskId, "alice", "hang", { ms: 300 }));
    expect(await setAlarmCalls(runner)).toBe(0);
    const { alarm } = await storageOf(runner);
    expect(alarm).toBe(prepared);
    expect(alarm).toBeLessThanOrEqual(createdAt + FIRST_RUN_FALLBACK_MS);
    // The first run, inside its step, has set no alarm either; the prepared one is still the fallback.
    const probe = probeFor(`probe-${taskId}`);
    await waitForTask(
      { stub: runner, access: { taskId, principal: "alice" } },
      async () => (await probe.count("started")) === 1,
    );
    expect(await setAlarmCalls(runner)).toBe(0);
    expect((await storageOf(runner)).alarm).toBe(prepared);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    expect([await probe.count("started"), await probe.count("finished")]).toEqual([1, 1]);
  });

  it("a create after the prepared alarm re-armed at the deadline arms FIRST_RUN_FALLBACK_MS ahead", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    expect(await runDurableObjectAlarm(runner)).toBe(true);
    const { deadline } = await deadlineOf(runner);
    expect((await storageOf(runner)).alarm).toBe(deadline);
    await countSetAlarm(runner);
    const before = Date.now();
    await runner.create(newTask(taskId, "alice", "hang", { ms: 300 }));
    const after = Date.now();
    expect(await setAlarmCalls(runner)).toBe(1);
    const { alarm } = await storageOf(runner);
    expect(alarm).toBeGreaterThanOrEqual(before + FIRST_RUN_FALLBACK_MS);
    expect(alarm).toBeLessThanOrEqual(after + FIRST_RUN_FALLBACK_MS);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
  });

  it("a create on a prepared runner evicted since prepare arms its own fallback", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.prepare();
    const { alarm: prepared } = await storageOf(runner);
    await evictDurableObject(runner);
    await countSetAlarm(runner);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const before = Date.now();
    await runner.create(newTask(taskId, "alice", "hang", { ms: 300 }));
    expect(await setAlarmCalls(runner)).toBe(1);
    const { alarm } = await storageOf(runner);
    expect(alarm).toBeGreaterThan(prepared!);
    expect(alarm).toBeGreaterThanOrEqual(before + FIRST_RUN_FALLBACK_MS);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
  });
});

describe("the first run", () => {
  it("starts right after create, without waiting for the alarm, which stays armed as the fallback", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    // Records, for each alarm delivery to this instance, whether a run was already under way or past its first step
    // then. A first run started by create is; one left to the alarm is not, at the first delivery. (Under a heavy
    // load the fallback alarm may fire during a slow first run: that delivery is one that finds it under way.)
    await runInDurableObject(runner, (instance, state) => {
      const target = instance as unknown as {
        alarm: () => Promise<void>;
        deliveries: boolean[];
        run: { running: boolean };
      };
      // A renamed field would make every delivery look like one that found no run under way.
      expect(typeof target.run.running).toBe("boolean");
      const alarm = target.alarm.bind(target);
      target.deliveries = [];
      target.alarm = () => {
        const napped = state.storage.sql.exec("SELECT state FROM steps WHERE name = 'nap'").toArray().length > 0;
        target.deliveries.push(target.run.running || napped);
        return alarm();
      };
    });
    await runner.create(newTask(taskId, "alice", "sleeper", { ms: 60_000 }));
    // The run reaches the sleep, and no alarm delivery came before a run was under way.
    await waitForTask(
      { stub: runner, access: { taskId, principal: "alice" } },
      async () =>
        (
          await runInDurableObject(runner, (_, state) =>
            state.storage.sql.exec("SELECT state FROM steps WHERE name = 'nap'").toArray(),
          )
        ).length === 1,
    );
    const deliveries = await runInDurableObject(
      runner,
      (instance) => (instance as unknown as { deliveries: boolean[] }).deliveries,
    );
    expect(deliveries.filter((foundRunUnderWay) => !foundRunUnderWay)).toEqual([]);
  });

  it("never runs twice at once: an alarm delivered during the first run does not start a second", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.create(newTask(taskId, "alice", "hang", { ms: 300 }));
    const probe = probeFor(`probe-${taskId}`);
    await waitForTask(
      { stub: runner, access: { taskId, principal: "alice" } },
      async () => (await probe.count("started")) === 1,
    );
    // The fallback alarm, delivered now, while the first run is inside its step.
    await runDurableObjectAlarm(runner);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    expect(await probe.count("started")).toBe(1);
    expect(await probe.count("finished")).toBe(1);
  });

  it("keeps an alarm armed through a long first run, so that a crash mid-run is still resumed", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    const access = { taskId, principal: "alice" };
    await runner.create(newTask(taskId, "alice", "hang", { ms: FIRST_RUN_FALLBACK_MS * 2 }));
    const probe = probeFor(`probe-${taskId}`);
    await waitForTask({ stub: runner, access }, async () => (await probe.count("started")) === 1);
    // Past the fallback alarm's time: it was delivered during the run (and consumed), the step still under way.
    await new Promise((resolve) => setTimeout(resolve, FIRST_RUN_FALLBACK_MS * 1.3));
    expect(await probe.count("finished")).toBe(0);
    expect(await runInDurableObject(runner, (_, state) => state.storage.getAlarm())).not.toBeNull();
    // (A crash now is resumed by that alarm: apps/task-server/e2e/crash-restart.test.ts kills the process mid-run.)
    const task = await waitForTask({ stub: runner, access }, isFinal, 15_000);
    expect(task.status).toBe("completed");
    expect([await probe.count("started"), await probe.count("finished")]).toEqual([1, 1]);
  });

  it("is left to the alarm when the instance is gone before it starts", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    await runner.create(newTask(taskId, "alice"));
    // Whatever the first run did before the eviction, the alarm finishes the task, and each step ran once.
    await evictDurableObject(runner);
    await runDurableObjectAlarm(runner);
    const task = await waitForTask({ stub: runner, access: { taskId, principal: "alice" } }, isFinal);
    expect(task.status).toBe("completed");
    const probe = probeFor(`probe-${taskId}`);
    expect([await probe.count("a"), await probe.count("b"), await probe.count("c")]).toEqual([1, 1, 1]);
  });

  it("on a prepared runner, is resumed by the prepared alarm when the instance dies before the run commits", async () => {
    const taskId = newTaskId();
    const runner = runnerFor(taskId);
    const access = { taskId, principal: "alice" };
    await runner.prepare();
    const { alarm: prepared } = await storageOf(runner);
    const createdAt = Date.now();
    await runner.create(newTask(taskId, "alice", "hang", { ms: 400 }));
    // The fallback is the alarm prepare armed, no later than FIRST_RUN_FALLBACK_MS after the create.
    expect((await storageOf(runner)).alarm).toBe(prepared);
    expect(prepared).toBeLessThanOrEqual(createdAt + FIRST_RUN_FALLBACK_MS);
    // The instance dies (as on a crash) inside its first run, before the run has committed its step (400 ms).
    const probe = probeFor(`probe-${taskId}`);
    await waitForTask({ stub: runner, access }, async () => (await probe.count("started")) === 1);
    const killed = await runInDurableObject(runner, (_, state) => {
      state.abort("test: killed before the first run commits");
    }).then(
      () => "survived",
      () => "killed",
    );
    expect(killed).toBe("killed");
    // (A stub to an aborted instance stays broken: a new one reaches the object's next instance.)
    const after = runnerFor(taskId);
    expect(await after.get(access)).toMatchObject({ status: "working" });
    expect((await storageOf(after)).alarm).toBe(prepared);
    // Nothing drives the task now but that alarm, firing by itself: the step runs again and the task completes.
    const task = await waitForTask({ stub: after, access }, isFinal, FIRST_RUN_FALLBACK_MS + 5_000);
    expect(task.status).toBe("completed");
    expect(Date.now()).toBeGreaterThanOrEqual(prepared!);
    expect(await probe.count("started")).toBe(2);
  });

  it("builds the author's server once per isolate, not once per task object", async () => {
    expect((await runToEnd()).status).toBe("completed");
    const before = registriesBuilt.count;
    const tasks = await Promise.all([runToEnd(), runToEnd(), runToEnd()]);
    expect(tasks.map((task) => task.status)).toEqual(["completed", "completed", "completed"]);
    expect(registriesBuilt.count).toBe(before);
  });
});
