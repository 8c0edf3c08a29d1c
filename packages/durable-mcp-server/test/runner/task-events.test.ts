import { afterEach, describe, expect, it, vi } from "vitest";
import { taskEventLog } from "../../src/task-events.js";
import { isFinal, startTask, waitForTask } from "../helpers.js";

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
  it("logs one JSON line per task event, with task id, tool, step and attempt", async () => {
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

  it("adds per-step lines only at level all, and nothing at level none", () => {
    const eventsOf = recordEvents();
    for (const [level, taskId] of [
      ["all", "t-all"],
      ["task", "t-task"],
      ["none", "t-none"],
    ] as const) {
      const log = taskEventLog(level, { taskId, tool: "x" });
      log("step_started", { step: "a", attempt: 1 });
      log("step_finished", { step: "a", attempt: 1, durationMs: 3 });
      log("replay_diverged", { error: "boom" });
    }
    expect(eventsOf("t-all").map((line) => line.event)).toEqual(["step_started", "step_finished", "replay_diverged"]);
    expect(eventsOf("t-task").map((line) => [line.event, line.via])).toEqual([["replay_diverged", "error"]]);
    expect(eventsOf("t-none")).toEqual([]);
  });
});
