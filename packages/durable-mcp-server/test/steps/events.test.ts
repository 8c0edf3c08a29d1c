// step.waitForEvent and the event inbox on real TaskRunner objects: delivery to a waiting step, buffering before the
// wait (across an eviction), FIFO per type, the timeout, the inbox's bounds, and every refusal of sendEvent.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EventRefusedError } from "../../src/errors/event-errors.js";
import { newTaskId } from "../../src/ids.js";
import { MAX_BUFFERED_EVENTS, MAX_BUFFERED_EVENTS_PER_TYPE, MAX_EVENT_PAYLOAD_BYTES } from "../../src/limits.js";
import { EventInbox } from "../../src/runner/event-inbox.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { sendTaskEvent, type SendEventInput } from "../../src/tasks/send-event.js";
import { STEPS_META } from "../../src/wire/meta-keys.js";
import type { StepTimelineEntry } from "../../src/steps/step-record.js";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);

function send(started: Pick<StartedTask, "taskId">, event: SendEventInput, principal: string | undefined = "alice") {
  return sendTaskEvent(
    runners,
    started.taskId,
    event,
    principal === undefined ? { trustedSender: true } : { principal },
  );
}

async function stepsOf(started: StartedTask): Promise<StepTimelineEntry[]> {
  const task = await started.stub.get(started.access, { steps: true });
  return (task?._meta?.[STEPS_META] as { steps: StepTimelineEntry[] } | undefined)?.steps ?? [];
}

function waitForStep(started: StartedTask, name: string, state: string) {
  return waitForTask(started, async () => (await stepsOf(started)).some((s) => s.name === name && s.state === state));
}

function textOf(task: { result?: unknown }): unknown {
  return JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
}

function buffered(started: StartedTask): Promise<Record<string, number>> {
  return runInDurableObject(started.stub, (_, state) => new EventInbox(state.storage.sql).counts());
}

async function refusal(promise: Promise<unknown>): Promise<{ name: string; reason: string }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EventRefusedError);
  return { name: (error as EventRefusedError).name, reason: (error as EventRefusedError).reason };
}

describe("step.waitForEvent", () => {
  it("waits `working` with a status naming the wait, across an eviction, until sendEvent delivers", async () => {
    const started = await startTask("event_wait");
    await waitForStep(started, "approval", "waiting");
    const waiting = (await started.stub.get(started.access))!;
    expect(waiting.status).toBe("working");
    expect(waiting.statusMessage).toBe('waiting for event "approved" (step "approval")');
    expect(await stepsOf(started)).toMatchObject([{ name: "approval", kind: "event", state: "waiting" }]);

    await evictDurableObject(started.stub);
    expect(await started.probe.count("after")).toBe(0);
    expect(await send(started, { type: "approved", payload: { by: "ada" } })).toEqual({
      outcome: "delivered",
      step: "approval",
    });
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(textOf(task)).toEqual({ type: "approved", payload: { by: "ada" }, isDate: true });
    expect(await started.probe.count("after")).toBe(1);
    expect(await stepsOf(started)).toMatchObject([
      { name: "approval", kind: "event", state: "done" },
      { name: "after", kind: "do", state: "done" },
    ]);
  });

  it("keeps an event sent before the wait, across an eviction, and the wait takes it", async () => {
    const started = await startTask("event_wait", { sleepMs: 400 });
    await waitForStep(started, "before", "waiting");
    expect(await send(started, { type: "approved", payload: "early" })).toEqual({ outcome: "buffered" });
    expect(await buffered(started)).toEqual({ approved: 1 });
    await evictDurableObject(started.stub);

    const task = await waitForTask(started, isFinal);
    expect(textOf(task)).toEqual({ type: "approved", payload: "early", isDate: true });
    expect(await buffered(started)).toEqual({});
  });

  it("gives buffered events of a type to later waits oldest first; other types stay buffered", async () => {
    const started = await startTask("event_fifo");
    await waitForStep(started, "hold", "waiting");
    for (const payload of [1, 2, 3])
      expect(await send(started, { type: "tick", payload })).toEqual({ outcome: "buffered" });
    expect(await send(started, { type: "other" })).toEqual({ outcome: "buffered" });
    await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'hold'", Date.now()),
    );
    await runDurableObjectAlarm(started.stub);
    const task = await waitForTask(started, isFinal);
    expect(textOf(task)).toEqual([1, 2]);
  });

  it("throws EventTimeoutError at its timeout; a later event is buffered for the next wait, not given to it", async () => {
    const started = await startTask("event_timeout", { timeoutMs: 150 });
    await waitForStep(started, "cool-off", "waiting");
    // Replayed after an eviction, the timed-out wait stays timed out.
    await evictDurableObject(started.stub);
    expect(await send(started, { type: "approved", payload: "late" })).toEqual({ outcome: "buffered" });
    expect(await stepsOf(started)).toMatchObject([
      { name: "approval", kind: "event", state: "failed" },
      { name: "cool-off", kind: "sleep", state: "waiting" },
    ]);
    await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'cool-off'", Date.now()),
    );
    await runDurableObjectAlarm(started.stub);
    const task = await waitForTask(started, isFinal);
    expect(textOf(task)).toEqual({
      outcome: 'EventTimeoutError: no event "approved" arrived for step "approval" before its timeout',
      late: "late",
    });
  });

  it("an event arriving after the deadline but before the alarm ran is buffered; the wait times out", async () => {
    const started = await startTask("event_timeout", { timeoutMs: 60_000 });
    await waitForStep(started, "approval", "waiting");
    // The deadline has passed; the alarm that would journal the timeout has not run yet.
    await runInDurableObject(started.stub, (_, state) => {
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'approval'", Date.now() - 1);
    });
    expect(await send(started, { type: "approved", payload: "too late" })).toEqual({ outcome: "buffered" });
    await runDurableObjectAlarm(started.stub);
    await waitForStep(started, "cool-off", "waiting");
    expect((await stepsOf(started))[0]).toMatchObject({ name: "approval", state: "failed" });
    expect(await buffered(started)).toEqual({ approved: 1 });
  });
});

describe("sendEvent refusals", () => {
  it("refuses past the per-type bound and past the task's bound, and keeps what it had", async () => {
    const started = await startTask("event_fifo");
    await waitForStep(started, "hold", "waiting");
    for (let i = 0; i < MAX_BUFFERED_EVENTS_PER_TYPE; i++) await send(started, { type: "tick", payload: i });
    expect(await refusal(send(started, { type: "tick", payload: "one too many" }))).toEqual({
      name: "EventRefusedError",
      reason: "buffer_full",
    });
    // Other types still fit, up to the task's bound: one more through sendEvent, the rest through the inbox itself
    // (the same code, without a thousand calls).
    expect(await send(started, { type: "t1", payload: 0 })).toEqual({ outcome: "buffered" });
    await runInDurableObject(started.stub, (_, state) => {
      const inbox = new EventInbox(state.storage.sql);
      let added = 1;
      for (let t = 1; added < MAX_BUFFERED_EVENTS - MAX_BUFFERED_EVENTS_PER_TYPE; t++) {
        for (let i = t === 1 ? 1 : 0; i < MAX_BUFFERED_EVENTS_PER_TYPE; i++, added++) {
          expect(inbox.add({ type: `t${t}`, payload: String(i), sentAt: Date.now() })).toBe(true);
        }
      }
    });
    expect(await refusal(send(started, { type: "fresh" }))).toMatchObject({ reason: "buffer_full" });
    const counts = await buffered(started);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(MAX_BUFFERED_EVENTS);
    expect(counts.fresh).toBeUndefined();
    // The oldest of a type is still the one a wait takes.
    await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = ? WHERE name = 'hold'", Date.now()),
    );
    await runDurableObjectAlarm(started.stub);
    expect(textOf(await waitForTask(started, isFinal))).toEqual([0, 1]);
  });

  it("refuses an unknown, a foreign and a malformed task id alike, creating nothing", async () => {
    const started = await startTask("event_wait");
    await waitForStep(started, "approval", "waiting");
    expect(await refusal(send(started, { type: "approved" }, "mallory"))).toMatchObject({ reason: "unknown_task" });
    const unknown = { taskId: newTaskId() };
    expect(await refusal(send(unknown, { type: "approved" }))).toMatchObject({ reason: "unknown_task" });
    expect(await refusal(send(unknown, { type: "approved" }, undefined))).toMatchObject({ reason: "unknown_task" });
    expect(await refusal(send({ taskId: "not a task id" }, { type: "approved" }))).toMatchObject({
      reason: "unknown_task",
    });
    // The unknown id's object has no tables; the foreign principal's event reached nothing.
    const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(unknown.taskId));
    expect(
      await runInDurableObject(stub, (_, state) =>
        state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name NOT LIKE '\\_%' ESCAPE '\\'").toArray(),
      ),
    ).toEqual([]);
    expect(await buffered(started)).toEqual({});
    expect((await stepsOf(started))[0]).toMatchObject({ name: "approval", state: "waiting" });
    // As a trusted sender, server-side code reaches any task.
    expect(await send(started, { type: "approved", payload: 1 }, undefined)).toMatchObject({ outcome: "delivered" });
    expect((await waitForTask(started, isFinal)).status).toBe("completed");
  });

  it("needs whose task it may reach: a principal, or the explicit trustedSender opt-out", async () => {
    const started = await startTask("event_wait");
    await waitForStep(started, "approval", "waiting");
    const event = { type: "approved", payload: 1 };
    // @ts-expect-error -- the choice is required: a call without it does not compile
    const withoutChoice = sendTaskEvent(runners, started.taskId, event);
    // @ts-expect-error -- an empty choice neither
    const emptyChoice = sendTaskEvent(runners, started.taskId, event, {});
    // @ts-expect-error -- nor both at once
    const bothChoices = sendTaskEvent(runners, started.taskId, event, { principal: "alice", trustedSender: true });
    // @ts-expect-error -- the opt-out is `true` only
    const notTrusted = sendTaskEvent(runners, started.taskId, event, { trustedSender: false });
    for (const refused of [withoutChoice, emptyChoice, bothChoices, notTrusted]) {
      const error = await refused.then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(EventRefusedError);
      expect(error).toMatchObject({ reason: "invalid_event", message: /\{ principal \}.*\{ trustedSender: true \}/ });
    }
    // Nothing reached the task.
    expect(await buffered(started)).toEqual({});
    expect((await stepsOf(started))[0]).toMatchObject({ name: "approval", state: "waiting" });
    expect(await sendTaskEvent(runners, started.taskId, event, { principal: "alice" })).toMatchObject({
      outcome: "delivered",
    });
  });

  it("refuses a finished task, an oversized payload and an invalid event", async () => {
    const started = await startTask("event_wait");
    await waitForStep(started, "approval", "waiting");
    const big = "x".repeat(MAX_EVENT_PAYLOAD_BYTES);
    expect(await refusal(send(started, { type: "approved", payload: big }))).toMatchObject({
      reason: "payload_too_large",
    });
    expect(await refusal(send(started, { type: "" }))).toMatchObject({ reason: "invalid_event" });
    expect(await refusal(send(started, { type: "x".repeat(101) }))).toMatchObject({ reason: "invalid_event" });
    // A bigint is not JSON: sendEvent refuses it.
    expect(await refusal(send(started, { type: "approved", payload: 10n }))).toMatchObject({
      reason: "invalid_event",
    });
    expect((await stepsOf(started))[0]).toMatchObject({ name: "approval", state: "waiting" });

    await started.stub.cancel(started.access);
    expect(await refusal(send(started, { type: "approved" }))).toMatchObject({ reason: "task_finished" });
    expect(await buffered(started)).toEqual({});
  });

  it("refuses a payload nested 100,000 levels deep (about 200 KB) on every path, and the task is unharmed", async () => {
    const started = await startTask("event_wait");
    await waitForStep(started, "approval", "waiting");
    const levels = 100_000;
    const deepText = "[".repeat(levels) + "]".repeat(levels);
    expect(deepText.length).toBeLessThan(MAX_EVENT_PAYLOAD_BYTES);
    let deepValue: unknown = null;
    for (let i = 0; i < levels; i++) deepValue = [deepValue];
    // mcp.sendEvent (and every route over it, the demo's POST /events/<taskId> among them).
    expect(await refusal(send(started, { type: "approved", payload: deepValue }))).toMatchObject({
      reason: "invalid_event",
    });
    // The TaskRunner itself, whoever calls it: an event, and a webhook delivery.
    const sent = await started.stub.sendEvent(started.taskId, { type: "approved", payload: deepText }, "alice");
    expect(sent).toMatchObject({ refused: "invalid_event", message: /nests deeper than 64 levels/ });
    const hook = { hookId: "deep", type: "approved", payload: deepText };
    expect(await started.stub.deliverWebhook(started.taskId, hook)).toMatchObject({
      status: 400,
      body: { error: "invalid_event" },
    });
    // 64 levels are still an event.
    const deepest = "[".repeat(63) + "{}" + "]".repeat(63);
    expect(await started.stub.sendEvent(started.taskId, { type: "other", payload: deepest }, "alice")).toEqual({
      outcome: "buffered",
    });
    expect(await buffered(started)).toEqual({ other: 1 });
    expect((await stepsOf(started))[0]).toMatchObject({ name: "approval", state: "waiting" });
    expect(await send(started, { type: "approved", payload: { by: "ada" } })).toEqual({
      outcome: "delivered",
      step: "approval",
    });
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(textOf(task)).toMatchObject({ type: "approved", payload: { by: "ada" } });
  });
});
