// How a task's snapshot reads on its card (shared/outcome.ts): a `completed` task whose result has `isError` is a
// failure (a tool error), a `failed` task a protocol failure; durations; retries in words. Pure functions, no server.
import { describe, expect, it } from "vitest";
import type { TaskSnapshot, TimelineStep } from "../../shared/mcp.ts";
import { durationOf, formatDuration, outcomeOf, retriesOf } from "../../shared/outcome.ts";

const snap = (fields: Partial<TaskSnapshot>): TaskSnapshot => ({ taskId: "t", status: "working", ...fields });

const step = (name: string, kind: string, attempts: number): TimelineStep => ({
  name,
  kind,
  attempts,
  state: "done",
  startedAt: null,
  updatedAt: "2026-01-01T00:00:00.000Z",
  durationMs: null,
});

describe("task outcome", () => {
  it("shows a completed task with an isError result as failed: a tool error", () => {
    const outcome = outcomeOf(
      snap({ status: "completed", result: { isError: true, content: [{ type: "text", text: "boom" }] } }),
    );
    expect(outcome).toMatchObject({ state: "failed", failure: "tool-error" });
    expect(outcome.detail).toMatch(/^tool error/);
  });

  it("shows a failed task as failed: a protocol failure, with its JSON-RPC code", () => {
    const outcome = outcomeOf(snap({ status: "failed", error: { code: -32603, message: "expired" } }));
    expect(outcome).toMatchObject({ state: "failed", failure: "protocol" });
    expect(outcome.detail).toBe("protocol failure: the task failed (JSON-RPC error -32603)");
  });

  it("keeps a completed task without isError completed, and live states as they are", () => {
    expect(outcomeOf(snap({ status: "completed", result: { content: [] } }))).toEqual({ state: "completed" });
    expect(outcomeOf(snap({ status: "input_required" }))).toEqual({ state: "input_required" });
    expect(outcomeOf(undefined)).toEqual({ state: "unknown" });
  });

  it("measures a final task to its last update and a live one to now", () => {
    const createdAt = "2026-01-01T00:00:00.000Z";
    const lastUpdatedAt = "2026-01-01T00:00:01.250Z";
    expect(durationOf(snap({ status: "completed", createdAt, lastUpdatedAt }), Date.parse(createdAt) + 9e6)).toBe(1250);
    expect(durationOf(snap({ status: "working", createdAt, lastUpdatedAt }), Date.parse(createdAt) + 3000)).toBe(3000);
    expect(formatDuration(1250)).toBe("1.25 s");
    expect(formatDuration(42)).toBe("42 ms");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
  });

  it("says which steps were retried and how often", () => {
    expect(
      retriesOf([step("profile", "do", 1), step("statistics", "do", 2), step("x", "do", 3), step("y", "do", 5)]),
    ).toEqual(["statistics retried once", "x retried twice", "y retried 4 times"]);
    expect(retriesOf([step("nap", "sleep", 0)])).toEqual([]);
  });
});
