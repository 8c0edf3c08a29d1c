// The run view's waterfall as numbers (src/waterfall.ts): the time axis and each step's bars, from the step
// timeline the server sends. Plain functions, no browser.
import { describe, expect, it } from "vitest";
import type { TaskSnapshot, TimelineStep } from "../../shared/mcp.ts";
import { axisOf, barsOf, pct, spanOf, stepKey } from "../../src/waterfall.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
/** An ISO time `ms` after T0. */
const at = (ms: number) => new Date(T0 + ms).toISOString();

const step = (fields: Partial<TimelineStep>): TimelineStep => ({
  name: "compute statistics",
  kind: "do",
  state: "done",
  attempts: 1,
  startedAt: at(0),
  updatedAt: at(100),
  durationMs: 100,
  ...fields,
});

const snapshot = (fields: Partial<TaskSnapshot>): TaskSnapshot => ({ taskId: "t", status: "working", ...fields });

describe("a step's bars", () => {
  it("draws each timed attempt, the failed one apart, with the back-off between them", () => {
    const retried = step({
      attempts: 2,
      startedAt: at(100),
      updatedAt: at(1500),
      attemptHistory: [
        { n: 1, startedAt: at(100), endedAt: at(300), error: { name: "Error", message: "simulated failure" } },
        { n: 2, startedAt: at(1300), endedAt: at(1500) },
      ],
    });
    expect(barsOf(retried, T0 + 9999)).toEqual([
      {
        key: "a1",
        from: T0 + 100,
        to: T0 + 300,
        n: 1,
        className: "bar-failed",
        title: "attempt 1: 200 ms · simulated failure",
      },
      { key: "b1", from: T0 + 300, to: T0 + 1300, className: "bar-backoff", title: "back-off 1.00 s" },
      { key: "a2", from: T0 + 1300, to: T0 + 1500, n: 2, className: "bar-do", title: "attempt 2: 200 ms" },
    ]);
  });

  it("runs the last attempt to now while it runs; one cut short before a later attempt is a failure", () => {
    const running = step({
      state: "running",
      attempts: 2,
      attemptHistory: [
        { n: 1, startedAt: at(0), endedAt: null },
        { n: 2, startedAt: at(500), endedAt: null },
      ],
    });
    const [first, second] = barsOf(running, T0 + 800);
    expect([first?.className, first?.from, first?.to]).toEqual(["bar-failed", T0, T0]);
    expect([second?.className, second?.from, second?.to]).toEqual(["bar-do", T0 + 500, T0 + 800]);
  });

  it("draws a step without history, a sleep, a question or an unknown kind as one span of its kind", () => {
    expect(barsOf(step({ startedAt: at(0), updatedAt: at(250) }), T0)).toEqual([
      { key: "span", from: T0, to: T0 + 250, className: "bar-do", title: "step: 250 ms" },
    ]);
    expect(barsOf(step({ kind: "sleep", updatedAt: at(2000) }), T0)[0]).toMatchObject({
      className: "bar-sleep",
      title: "sleep: 2.00 s",
    });
    // A question still waiting lasts until now.
    expect(barsOf(step({ kind: "input", state: "waiting", updatedAt: at(10) }), T0 + 4000)[0]).toMatchObject({
      to: T0 + 4000,
      className: "bar-input",
      title: "question: 4.00 s",
    });
    expect(barsOf(step({ kind: "saga", updatedAt: at(5) }), T0)[0]).toMatchObject({
      className: "bar-other",
      title: "saga: 5 ms",
    });
    expect(barsOf(step({ kind: "sleep", state: "failed" }), T0)[0]?.className).toBe("bar-failed");
    expect(barsOf(step({ startedAt: null }), T0)).toEqual([]);
  });

  it("names a step's second use with #n, as the server does", () => {
    expect(stepKey(step({ name: "fetch" }))).toBe("fetch");
    expect(stepKey(step({ name: "fetch", occurrence: 1 }))).toBe("fetch");
    expect(stepKey(step({ name: "fetch", occurrence: 3 }))).toBe("fetch#3");
  });
});

describe("the time axis", () => {
  it("runs from the task's creation to its last update once final", () => {
    const axis = axisOf(
      snapshot({ status: "completed", createdAt: at(0), lastUpdatedAt: at(2000) }),
      [step({ startedAt: at(500), updatedAt: at(1500) })],
      T0 + 60_000,
    );
    expect([axis.start, axis.end]).toEqual([T0, T0 + 2000]);
    expect(axis.at(T0 + 500)).toBe(25);
    expect(pct(axis.at(T0 + 2000))).toBe("100.000%");
  });

  it("runs to now while the task is live, and never shorter than its steps", () => {
    const live = axisOf(snapshot({ createdAt: at(0) }), [step({ state: "running", updatedAt: at(100) })], T0 + 4000);
    expect(live.end).toBe(T0 + 4000);
    // A step the server reports ending after the task's last update still fits.
    const late = axisOf(
      snapshot({ status: "completed", createdAt: at(0), lastUpdatedAt: at(1000) }),
      [step({ updatedAt: at(1200) })],
      T0,
    );
    expect(late.end).toBe(T0 + 1200);
  });

  it("clamps a bar's position to the track", () => {
    expect(pct(-3)).toBe("0.000%");
    expect(pct(33.33333)).toBe("33.333%");
    expect(pct(140)).toBe("100.000%");
    expect(spanOf(step({ state: "waiting", updatedAt: at(50) }), T0 + 20)).toEqual([T0, T0 + 50]);
  });
});
