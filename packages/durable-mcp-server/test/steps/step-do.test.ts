import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

/** Kills the object while attempt `attempt` of step `work` holds in its body; returns a stub to its next instance. */
const killMidBody = async (started: StartedTask, attempt: number): Promise<StartedTask> => {
  await waitForTask(started, async () => (await started.probe.count("started")) === attempt);
  const killed = await runInDurableObject(started.stub, (_, state) => state.abort("test: killed mid-body")).then(
    () => "survived",
    () => "killed",
  );
  expect(killed).toBe("killed");
  const stub = fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(started.taskId));
  // The platform retries an alarm run a crash cut short; here the retry runs now (not awaited: it holds in the
  // body). runDurableObjectAlarm took the alarm away before running it, so the second kill finds none to run.
  const scheduled = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
  const retry =
    scheduled !== null
      ? runDurableObjectAlarm(stub)
      : runInDurableObject(stub, (instance) =>
          (instance as unknown as { alarm(info: AlarmInvocationInfo): Promise<void> }).alarm({
            retryCount: 1,
            isRetry: true,
            scheduledTime: Date.now(),
          }),
        );
  void retry.catch(() => undefined);
  return { ...started, stub: stub as unknown as StartedTask["stub"] };
};

describe("step.do", () => {
  it("retries with exponential backoff, waiting durably between attempts", async () => {
    const started = await startTask("flaky", { failures: 2, limit: 3, delayMs: 40, backoff: "exponential" });
    const task = await waitForTask(started, isFinal);
    expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "ok after 3" }] });
    expect(await started.probe.count("runs")).toBe(3);
    const [t1, t2, t3] = await Promise.all(
      [1, 2, 3].map((n) => started.probe.value(`attempt-${n}-at`) as Promise<number>),
    );
    expect(t2! - t1!).toBeGreaterThanOrEqual(40);
    expect(t3! - t2!).toBeGreaterThanOrEqual(80);
  });

  it("keeps retrying across an eviction during the backoff", async () => {
    const started = await startTask("flaky", { failures: 1, limit: 2, delayMs: 200, backoff: "constant" });
    await waitForTask(started, async () => (await started.probe.count("runs")) >= 1);
    await evictDurableObject(started.stub);
    const task = await waitForTask(started, isFinal);
    expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "ok after 2" }] });
    expect(await started.probe.count("runs")).toBe(2);
  });

  it("fails the step once retries are exhausted and the task ends with a tool error", async () => {
    const started = await startTask("flaky", { failures: 10, limit: 1, delayMs: 10, backoff: "linear" });
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "step_failed",
          message: "boom 2",
          retryable: true,
          recoveryHint: expect.stringMatching(/failed 2 times/),
          details: { step: "flaky", attempts: 2, cause: "Error" },
        },
      },
    });
    expect(await started.probe.count("runs")).toBe(2);
  });

  it("fails at once on NonRetryableError", async () => {
    const started = await startTask("non_retryable");
    const task = await waitForTask(started, isFinal);
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: "step_failed", retryable: false, details: { cause: "NonRetryableError" } } },
    });
    expect(await started.probe.count("runs")).toBe(1);
  });

  it.each([
    ["workflows", "NonRetryableError", "from cloudflare:workflows"],
    ["workflowsNamed", "AuthError", "named by Workflows"],
    ["subclass", "PaymentDeclined", "card declined"],
  ])("fails at once on a NonRetryableError whatever its class or name (%s)", async (kind, cause, message) => {
    const started = await startTask("error_classes", { kind });
    const task = await waitForTask(started, isFinal);
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "step_failed",
          message,
          retryable: false,
          recoveryHint: expect.stringMatching(/cannot succeed with this input/),
          details: { step: "once", attempts: 1, cause },
        },
      },
    });
    expect(await started.probe.count("runs")).toBe(1);
  });

  it("retries an unrelated error that only calls itself NonRetryableError", async () => {
    const started = await startTask("error_classes", { kind: "nameOnly" });
    const task = await waitForTask(started, isFinal);
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: { code: "step_failed", retryable: true, details: { attempts: 3, cause: "NonRetryableError" } },
      },
    });
    expect(await started.probe.count("runs")).toBe(3);
  });

  it("lets the handler catch a failed step, and replays the same failure", async () => {
    const started = await startTask("caught_failure");
    const task = await waitForTask(started, isFinal);
    expect(task.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "recovered from StepFailedError: nope" }],
    });
  });

  it("aborts an attempt at its timeout and counts it as a failed attempt", async () => {
    const started = await startTask("timeout");
    const task = await waitForTask(started, isFinal);
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: { code: "step_failed", details: { step: "slow", attempts: 2, cause: "StepTimeoutError" } },
      },
    });
  });

  it("fails a step whose result is too large for the journal, without retrying or corrupting it", async () => {
    const started = await startTask("too_large");
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    const text = (task.result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(text).toMatch(/returned 2000002 bytes of JSON; a step result may be at most 1048576 bytes/);
    // The step's policy allows 2 retries; an oversized result is permanent, so the body ran exactly once.
    expect(await started.probe.count("runs")).toBe(1);
    const row = await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec<{ state: string; attempts: number }>("SELECT state, attempts FROM steps").toArray(),
    );
    expect(row).toEqual([{ state: "failed", attempts: 1 }]);
  });

  it("hands off to a fresh alarm at the run budget and still runs each body once", async () => {
    const started = await startTask("many_steps", { count: 6 }, { namespace: fixtureEnv.HANDOFF_RUNNER });
    const task = await waitForTask(started, isFinal);
    expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "15" }] });
    for (let i = 0; i < 6; i++) expect(await started.probe.count(`s${i}`)).toBe(1);
    // A zero budget lets each run finish one new step, then hand off.
    expect(await started.probe.count("handler-runs")).toBe(6);
  });

  // docs/how-it-works.md rule 5: an attempt cut short by a crash counts against the limit, so that a body that keeps
  // killing its object cannot loop forever; the attempt after the last fails the step as interrupted.
  describe("an attempt interrupted by a crash", () => {
    it("is the step's next attempt when one is left", async () => {
      const started = await startTask("interruptible", { limit: 1 });
      const revived = await killMidBody(started, 1);
      await waitForTask(revived, async () => (await started.probe.count("started")) === 2);
      await started.probe.set("open", true);
      const task = await waitForTask(revived, isFinal);
      expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "done at attempt 2" }] });
    });

    it("fails the step as interrupted on its last attempt, without running its body again", async () => {
      const started = await startTask("interruptible", { limit: 1 });
      const revived = await killMidBody(await killMidBody(started, 1), 2);
      const task = await waitForTask(revived, isFinal);
      await started.probe.set("open", true);
      expect(task.result).toMatchObject({
        isError: true,
        structuredContent: {
          error: {
            code: "step_failed",
            message: 'step "work" was interrupted on its last attempt',
            details: { step: "work", attempts: 2, cause: "StepInterruptedError" },
          },
        },
      });
      expect(await started.probe.count("started")).toBe(2);
    });
  });
});
