import { afterEach, describe, expect, it, vi } from "vitest";
import { isFinal, startTask, waitForTask } from "../helpers.js";

afterEach(() => vi.restoreAllMocks());

/** Collects the JSON event lines of one task, passing every line through to the real console. */
function recordEvents() {
  const lines: Array<Record<string, unknown>> = [];
  for (const method of ["log", "warn", "error"] as const) {
    const original = console[method].bind(console);
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].startsWith('{"event":')) lines.push(JSON.parse(args[0]));
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
      "step_started",
      "step_retry_scheduled",
      "run_suspended",
      "run_started",
      "step_started",
      "step_finished",
      "task_finished",
    ]);
    expect(events.every((line) => line.tool === "flaky")).toBe(true);
    expect(events[3]).toMatchObject({ step: "flaky", attempt: 1, delayMs: 10, error: "boom 1" });
    expect(events[7]).toMatchObject({ step: "flaky", attempt: 2, durationMs: expect.any(Number) });
    expect(events[8]).toMatchObject({ status: "completed", durationMs: expect.any(Number) });
  });
});
