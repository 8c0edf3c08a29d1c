import { afterEach, describe, expect, it, vi } from "vitest";
import { taskEventLog } from "../../src/task-events.js";
import { fixtureEnv, isFinal, startTask, waitForTask } from "../helpers.js";

afterEach(() => vi.restoreAllMocks());

/** Collects the JSON event lines written to the console, passing every line through. */
function recordEvents() {
  const lines: Array<Record<string, unknown>> = [];
  for (const method of ["log", "warn", "error"] as const) {
    const original = console[method].bind(console);
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].startsWith('{"event":'))
        lines.push({ ...JSON.parse(args[0]), via: method });
      original(...args);
    });
  }
  return (taskId: string) => lines.filter((line) => line.taskId === taskId);
}

describe("task events", () => {
  // The fixture's TaskRunner logs at "task": each task's lifecycle, besides its problems.
  it("logs one JSON line per task event, with task id, tool, step and attempt (level task)", async () => {
    const eventsOf = recordEvents();
    const started = await startTask("flaky", { failures: 1, limit: 2, delayMs: 10, backoff: "constant" });
    await waitForTask(started, isFinal);
    const events = eventsOf(started.taskId);
    expect(events.map((line) => line.event)).toEqual([
      "task_created",
      "run_started",
      "step_retry_scheduled",
      "run_suspended",
      "run_started",
      "task_finished",
    ]);
    expect(events.every((line) => line.tool === "flaky")).toBe(true);
    expect(events[2]).toMatchObject({ step: "flaky", attempt: 1, delayMs: 10, error: "boom 1", via: "warn" });
    expect(events[5]).toMatchObject({ status: "completed", durationMs: expect.any(Number), via: "log" });
  });

  it("adds per-step lines only at level all, only problems at level problems, and nothing at level none", () => {
    const eventsOf = recordEvents();
    for (const [level, taskId] of [
      ["all", "t-all"],
      ["task", "t-task"],
      ["problems", "t-problems"],
      ["none", "t-none"],
    ] as const) {
      const log = taskEventLog(level, { taskId, tool: "x" });
      log("task_created", { ttlMs: 1000 });
      log("run_started");
      log("step_started", { step: "a", attempt: 1 });
      log("step_retry_scheduled", { step: "a", attempt: 1, durationMs: 3, delayMs: 10, error: "boom" });
      log("step_finished", { step: "a", attempt: 2, durationMs: 3 });
      log("replay_diverged", { error: "boom" });
      log("task_finished", { status: "completed", durationMs: 5 });
      log("task_finished", { status: "completed", durationMs: 5, isError: true, code: "x", error: "tool error" });
      log("task_finished", { status: "failed", durationMs: 5 });
      log("task_cancelled", { status: "cancelled", durationMs: 5 });
    }
    const lines = (taskId: string) => eventsOf(taskId).map((line) => [line.event, line.status ?? null, line.via]);
    expect(lines("t-all")).toHaveLength(10);
    expect(lines("t-task").map(([event]) => event)).toEqual([
      "task_created",
      "run_started",
      "step_retry_scheduled",
      "replay_diverged",
      "task_finished",
      "task_finished",
      "task_finished",
      "task_cancelled",
    ]);
    expect(lines("t-problems")).toEqual([
      ["step_retry_scheduled", null, "warn"],
      ["replay_diverged", null, "error"],
      ["task_finished", "completed", "log"],
      ["task_finished", "failed", "log"],
    ]);
    expect(eventsOf("t-problems")[2]).toMatchObject({ isError: true, error: "tool error" });
    expect(eventsOf("t-none")).toEqual([]);
  });

  it("by default a task that goes well writes no line, and one that goes wrong writes its problems", async () => {
    const eventsOf = recordEvents();
    const namespace = fixtureEnv.PRODUCTION_RUNNER; // its TaskRunner names no level: the library's default
    const fine = await startTask("flaky", { failures: 0 }, { namespace });
    const retried = await startTask(
      "flaky",
      { failures: 1, limit: 2, delayMs: 10, backoff: "constant" },
      { namespace },
    );
    const failed = await startTask("flaky", { failures: 5, limit: 1, delayMs: 10, backoff: "constant" }, { namespace });
    for (const started of [fine, retried, failed]) await waitForTask(started, isFinal);
    expect((await fine.stub.get(fine.access))?.status).toBe("completed");
    expect(eventsOf(fine.taskId)).toEqual([]);
    expect(eventsOf(retried.taskId).map((line) => line.event)).toEqual(["step_retry_scheduled"]);
    const failedLines = eventsOf(failed.taskId);
    expect(failedLines.map((line) => [line.event, line.via])).toEqual([
      ["step_retry_scheduled", "warn"],
      ["step_failed", "warn"],
      ["task_finished", "log"],
    ]);
    // A step that ran out of retries ends the task with a tool error: completed, isError.
    expect(failedLines[2]).toMatchObject({ status: "completed", isError: true, tool: "flaky" });
  });
});
