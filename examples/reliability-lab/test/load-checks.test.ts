// The load suite's per-step check on records that break the rule: judgeStep (load-checks.ts) accepts a missing
// attempt only when the step's history shows that attempt's own report to the counter failed.
import { describe, expect, it } from "vitest";
import { COUNTER_REPORT_ERROR } from "../src/lab.ts";
import { attemptHistories, judgeStep, type AttemptEntry } from "./load-checks.ts";
import type { Task } from "@durable-mcp/test-harness";

const ok = (n: number): AttemptEntry => ({ n, startedAt: "t0", endedAt: "t1" });
const failed = (n: number, name: string, message: string): AttemptEntry => ({
  n,
  startedAt: "t0",
  endedAt: "t1",
  error: { name, message },
});
const reportFailed = (n: number) => failed(n, COUNTER_REPORT_ERROR, "counter request failed: TypeError: reset");
/** Journaled `running`, never ended: the run stopped under it and a replay started the next attempt. */
const cut = (n: number): AttemptEntry => ({ n, startedAt: "t0", endedAt: null });

describe("load checks: judgeStep", () => {
  it("accepts the record its role wants, with or without a history", () => {
    expect(judgeStep("work 0", [1], [[1]], [ok(1)])).toBeNull();
    expect(judgeStep("work 0", [1], [[1]], undefined)).toBeNull();
    expect(judgeStep("flaky", [1, 2], [[1, 2]], [failed(1, "Error", "flaky: attempt 1 fails by design"), ok(2)])).toBe(
      null,
    );
    expect(judgeStep("work 1", [], [[]], undefined)).toBeNull();
  });

  it("accepts an attempt missing from the counter when it failed its own report", () => {
    expect(judgeStep("work 1", [2], [[1]], [reportFailed(1), ok(2)])).toBeNull();
    // Two failed reports in a row, then the attempt that reported.
    expect(judgeStep("work 1", [3], [[1]], [reportFailed(1), reportFailed(2), ok(3)])).toBeNull();
    // The flaky step (fails attempt 1 by design): attempt 1's report failed, so attempt 2 succeeds (seen in a loaded
    // run, task 384 of seed 1776970246).
    expect(judgeStep("flaky", [2], [[1, 2]], [reportFailed(1), ok(2)])).toBeNull();
    // Attempt 1 fails by design, attempt 2's report fails, attempt 3 completes (task 342 of the same run).
    const flaky = [failed(1, "Error", "flaky: attempt 1 fails by design"), reportFailed(2), ok(3)];
    expect(judgeStep("flaky", [1, 3], [[1, 2]], flaky)).toBeNull();
    // Cancelled mid-body in the attempt after a failed report: that last attempt never ended.
    expect(judgeStep("work 0", [2], [[], [1]], [reportFailed(1), cut(2)])).toBeNull();
    // Cancelled while it slept: work 0's failed report and its retry that reported.
    expect(judgeStep("work 0", [2], [[], [1]], [reportFailed(1), ok(2)])).toBeNull();
    // Cancelled during the retry wait after the failed report: nothing reached the counter.
    expect(judgeStep("work 0", [], [[], [1]], [reportFailed(1)])).toBeNull();
  });

  it("accepts a failed report whose hit arrived once (only the answer was lost)", () => {
    expect(judgeStep("work 1", [1, 2], [[1]], [reportFailed(1), ok(2)])).toBeNull();
  });

  it("refuses a missing attempt that was cut short (journaled running, never ended): a replay without a kill", () => {
    const problem = judgeStep("work 1", [2], [[1]], [cut(1), ok(2)]);
    expect(problem).toContain(`"work 1" ran as attempts [2], expected [[1]]`);
    expect(problem).toContain("#1 never ended");
    expect(judgeStep("work 0", [2], [[], [1]], [cut(1), ok(2)])).not.toBeNull();
  });

  it("refuses a missing attempt that failed with any other error, and says which", () => {
    const problem = judgeStep("work 1", [2], [[1]], [failed(1, "TypeError", "Network connection lost."), ok(2)]);
    expect(problem).toContain("#1 ended failed: TypeError: Network connection lost.");
    // The message alone does not make it a failed report: the name must be the one report() throws.
    expect(judgeStep("work 1", [2], [[1]], [failed(1, "Error", "counter answered HTTP 503"), ok(2)])).not.toBeNull();
    // A failed report that has not ended is no failed report.
    const running = { ...reportFailed(1), endedAt: null };
    expect(judgeStep("work 1", [2], [[1]], [running, ok(2)])).not.toBeNull();
  });

  it("refuses a missing attempt with no history to account for it", () => {
    expect(judgeStep("work 1", [2], [[1]], undefined)).toContain("no attempt history in the timeline");
    expect(judgeStep("work 1", [2], [[1]], [])).toContain("empty attempt history");
  });

  it("refuses repeats and missing effects even beside a failed report", () => {
    // The failed report's hit twice.
    expect(judgeStep("work 1", [1, 1, 2], [[1]], [reportFailed(1), ok(2)])).not.toBeNull();
    // A successful attempt's effect twice.
    expect(judgeStep("work 1", [2, 2], [[1]], [reportFailed(1), ok(2)])).not.toBeNull();
    // The retry that succeeded never reached the counter.
    expect(judgeStep("work 1", [], [[1]], [reportFailed(1), ok(2)])).not.toBeNull();
    // A failed report, then an attempt cut short, then one that reported: the cut one is not excused.
    expect(judgeStep("work 1", [3], [[1]], [reportFailed(1), cut(2), ok(3)])).toContain(
      "(not explained by the failed reports [1]); history: #1 ended failed: CounterReportError",
    );
    // Its last attempt cut short where no cancel could have stopped it.
    expect(judgeStep("work 1", [2], [[1]], [reportFailed(1), cut(2)])).not.toBeNull();
    // An attempt that succeeded, then another: a finished step ran again.
    expect(judgeStep("work 1", [2, 3], [[1]], [reportFailed(1), ok(2), ok(3)])).not.toBeNull();
    // More attempts reported than the role plans: a second failure besides the designed one.
    const twice = [failed(1, "Error", "by design"), failed(2, "Error", "unplanned"), reportFailed(3), ok(4)];
    expect(judgeStep("flaky", [1, 2, 4], [[1, 2]], twice)).not.toBeNull();
    // A history with a gap (attempt 2 not in it) explains nothing.
    expect(judgeStep("work 1", [3], [[1]], [reportFailed(1), ok(3)])).not.toBeNull();
    // A step that must not run (after a cancel) ran, failed report or not.
    expect(judgeStep("work 1", [2], [[]], [reportFailed(1), ok(2)])).not.toBeNull();
  });

  it("reads the attempt histories off a tasks/get with the step timeline", () => {
    const task = {
      taskId: "T",
      status: "completed",
      createdAt: "",
      lastUpdatedAt: "",
      _meta: {
        "durable-mcp-server/steps": {
          total: 3,
          steps: [
            { name: "work 0", kind: "do", attemptHistory: [reportFailed(1), ok(2)] },
            { name: "nap", kind: "sleep" },
            { name: "work 1", kind: "do", attemptHistory: [ok(1)] },
          ],
        },
      },
    } as unknown as Task;
    expect(attemptHistories(task)).toEqual(
      new Map([
        ["work 0", [reportFailed(1), ok(2)]],
        ["work 1", [ok(1)]],
      ]),
    );
    expect(attemptHistories(undefined)).toEqual(new Map());
  });
});
