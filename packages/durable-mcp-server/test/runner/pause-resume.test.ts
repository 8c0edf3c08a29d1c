// Pause and resume (issue 29): a pause takes effect at the next step boundary (a running body finishes), due alarms
// wait while paused, a paused task reads `working` with a message that says so (`input_required` stays), and the
// resume goes on exactly where the task stopped. Real TaskRunners, real alarms.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { migrate, schemaVersion, SCHEMA_VERSION } from "../../src/runner/schema.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { StepJournal } from "../../src/steps/journal.js";
import { fixtureEnv, isFinal, startTask, waitForTask } from "../helpers.js";

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stepsOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_, state) =>
    new StepJournal(state.storage.sql).load().map((step) => `${step.name}:${step.state}`),
  );

describe("pause and resume", () => {
  it("stops at the next step boundary: the running body finishes, no new step starts until the resume", async () => {
    const started = await startTask("gated");
    const { probe, stub, access } = started;
    while ((await probe.count("a")) === 0) await delay(10);

    const paused = await stub.pause(access);
    expect(paused).toMatchObject({
      changed: true,
      task: { status: "working", statusMessage: "paused by an operator" },
    });
    expect(await stub.pause(access)).toMatchObject({ changed: false });
    // The body under way finishes and is journaled; the step after it (the nap) is not started.
    await probe.set("open", true);
    await waitForTask(started, async () => (await stepsOf(stub)).includes("a:done"));
    await delay(300);
    expect(await stepsOf(stub)).toEqual(["a:done"]);
    expect(await probe.count("b")).toBe(0);
    const task = await stub.get(access);
    expect(task).toMatchObject({ status: "working", statusMessage: "paused by an operator" });

    const resumed = await stub.resume(access);
    expect(resumed).toMatchObject({ changed: true, task: { status: "working" } });
    expect((resumed as { task: { statusMessage?: string } }).task.statusMessage).toBeUndefined();
    const done = await waitForTask(started, isFinal);
    expect(done.status).toBe("completed");
    // Exactly where it stopped: `a` ran once, `b` once.
    expect(await probe.count("a")).toBe(1);
    expect(await probe.count("b")).toBe(1);
    expect(await stub.resume(access)).toMatchObject({ refused: "final" });
  });

  it("defers a due sleep while paused (the alarm waits for the TTL only), and re-arms it on resume", async () => {
    const started = await startTask("sleeper", { ms: 200 });
    const { stub, access, probe } = started;
    await waitForTask(started, async () => (await stepsOf(stub)).includes("nap:waiting"));
    const before = await stub.get(access);
    await stub.pause(access);
    const alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    // The TTL: a minute after creation, not the nap's 200 ms.
    expect(alarm).toBe(Date.parse(before!.createdAt) + 60_000);
    await delay(500);
    expect(await probe.count("after")).toBe(0);
    expect(await stepsOf(stub)).toEqual(["nap:waiting"]);

    await stub.resume(access);
    const done = await waitForTask(started, isFinal);
    expect(done.status).toBe("completed");
    expect(await probe.count("after")).toBe(1);
  });

  it("leaves input_required as it is, and refuses to pause a final task", async () => {
    const asking = await startTask("asks");
    await waitForTask(asking, (task) => task.status === "input_required");
    expect(await asking.stub.pause(asking.access)).toMatchObject({ changed: true, task: { status: "input_required" } });
    expect(await asking.stub.get(asking.access)).toMatchObject({ status: "input_required" });
    // An answer given while paused is kept; the run waits for the resume.
    await asking.stub.update(asking.access, { name: { action: "accept", content: { name: "Ada" } } });
    await asking.stub.update(asking.access, { color: { action: "accept", content: { color: "red" } } });
    await delay(200);
    expect((await asking.stub.get(asking.access))?.status).not.toBe("completed");
    await asking.stub.resume(asking.access);
    expect((await waitForTask(asking, isFinal)).status).toBe("completed");

    const final = await asking.stub.pause(asking.access);
    expect(final).toMatchObject({ refused: "final" });
    expect((final as { message: string }).message).toMatch(/completed/);
    expect(await asking.stub.pause({ ...asking.access, principal: "mallory" })).toBeNull();
  });
});

describe("schema 13", () => {
  it("adds paused_at and links to a task written at version 12: NULL, so it is neither paused nor linked", async () => {
    const taskId = newTaskId();
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId));
    const record = await runInDurableObject(stub, (_, state) => {
      migrate(state.storage, 0, 12);
      state.storage.sql.exec(
        `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
           poll_interval_ms, step_key_salt) VALUES (1, ?, 'alice', 'sleeper', '{}', 'working', 1, 1, NULL, 50, 'salt')`,
        taskId,
      );
      migrate(state.storage, 12);
      return { version: schemaVersion(state.storage.sql), record: new TaskStore(state.storage.sql).read() };
    });
    expect(record.version).toBe(SCHEMA_VERSION);
    expect(record.record).toMatchObject({ taskId, pausedAt: null, links: null });
  });
});
