// The console's waterfall geometry in plain Node: one axis from creation to the end (or now, while live); a `do`
// step's attempts as timed, failed ones apart, with the back-off between them; sleeps and waits as one wait bar;
// the label restart takes (`name#n` from a name's second use).
import { describe, expect, it } from "vitest";
import { axisOf, barsOf, stepLabel, stepsOf, type Step, type TaskSnapshot } from "./waterfall.ts";

const T0 = Date.parse("2026-12-05T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const format = (ms: number) => `${ms}ms`;
const step = (fields: Partial<Step>): Step => ({
  name: "s",
  kind: "do",
  state: "done",
  attempts: 1,
  startedAt: at(0),
  updatedAt: at(100),
  durationMs: 100,
  ...fields,
});

describe("the console's waterfall", () => {
  it("draws each attempt as timed, a failed one apart, and the back-off between attempts", () => {
    const retried = step({
      attempts: 2,
      startedAt: at(100),
      updatedAt: at(1500),
      attemptHistory: [
        { n: 1, startedAt: at(100), endedAt: at(300), error: { message: "boom" } },
        { n: 2, startedAt: at(1300), endedAt: at(1500) },
      ],
    });
    expect(
      barsOf(retried, T0 + 9999, format).map(({ key, kind, from, to }) => [key, kind, from - T0, to - T0]),
    ).toEqual([
      ["a1", "failed", 100, 300],
      ["b1", "backoff", 300, 1300],
      ["a2", "work", 1300, 1500],
    ]);
    expect(barsOf(retried, T0, format)[0]!.title).toBe("attempt 1: 200ms · boom");
  });

  it("draws a live attempt to now, an attempt cut short by the next as failed, and waits apart from work", () => {
    const running = step({
      state: "running",
      attemptHistory: [
        { n: 1, startedAt: at(0), endedAt: null },
        { n: 2, startedAt: at(500), endedAt: null },
      ],
    });
    expect(barsOf(running, T0 + 800, format).map(({ kind, from, to }) => [kind, from - T0, to - T0])).toEqual([
      ["failed", 0, 0],
      ["work", 500, 800],
    ]);
    for (const kind of ["sleep", "input", "event", "webhook"]) {
      const [bar] = barsOf(step({ kind, state: "waiting", updatedAt: at(50) }), T0 + 700, format);
      expect([bar!.kind, bar!.to - T0]).toEqual(["wait", 700]);
    }
    expect(barsOf(step({ kind: "patch" }), T0, format)[0]!.kind).toBe("other");
    expect(barsOf(step({ state: "failed" }), T0, format)[0]!.kind).toBe("failed");
    expect(barsOf(step({ startedAt: null }), T0, format)).toEqual([]);
  });

  it("spans the axis from creation to the end of a final task, or to now while live", () => {
    const steps = [step({ startedAt: at(100), updatedAt: at(400) })];
    const done: TaskSnapshot = { taskId: "t", status: "completed", createdAt: at(0), lastUpdatedAt: at(1000) };
    const axis = axisOf(done, steps, T0 + 5000);
    expect([axis.start - T0, axis.end - T0, axis.at(T0 + 500)]).toEqual([0, 1000, 50]);
    const live = axisOf({ ...done, status: "working" }, steps, T0 + 2000);
    expect(live.end - T0).toBe(2000);
  });

  it("labels a repeated name as restart names it, and reads the timeline from the task's _meta", () => {
    expect(stepLabel(step({ name: "page" }))).toBe("page");
    expect(stepLabel(step({ name: "page", occurrence: 3 }))).toBe("page#3");
    const task: TaskSnapshot = {
      taskId: "t",
      status: "working",
      _meta: { "durable-mcp-server/steps": { total: 1, steps: [step({})] } },
    };
    expect(stepsOf(task)?.total).toBe(1);
    expect(stepsOf({ taskId: "t", status: "working" })).toBeUndefined();
  });
});
