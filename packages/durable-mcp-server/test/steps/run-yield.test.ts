// A run of many steps that never do I/O yields to its object's event loop between steps (RUN_YIELD_STEPS /
// RUN_YIELD_MS), so a tasks/get sent meanwhile is answered during the run, not after it (issue 15).
import { describe, expect, it } from "vitest";
import type { StepTimelineEntry } from "../../src/steps/step-record.js";
import { STEPS_META } from "../../src/wire/meta-keys.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import { startTask } from "../helpers.js";

const COUNT = 5000;

function journaled(task: DetailedTask): number {
  return (task._meta![STEPS_META] as unknown as { total: number; steps: StepTimelineEntry[] }).total;
}

describe("a long run yields between steps", () => {
  it("answers a tasks/get sent during the run with the task still working and its steps partly journaled", async () => {
    // `pure_steps`: COUNT sequential step.do calls whose bodies return at once, then a zero sleep; its alarm is armed.
    const started = await startTask("pure_steps", { count: COUNT, tailMs: 0 });
    const seen: Array<{ status: string; steps: number }> = [];
    for (;;) {
      const task = (await started.stub.get(started.access, { steps: true })) as DetailedTask;
      seen.push({ status: task.status, steps: journaled(task) });
      if (task.status !== "working") break;
    }
    // The last answer is the end of the run; before it, some answer came while the run was half way through:
    // before yielding existed the first get after the run started waited for all of it and saw it completed.
    expect(seen.at(-1)).toEqual({ status: "completed", steps: COUNT + 1 });
    const during = seen.filter((s) => s.status === "working" && s.steps > 0 && s.steps < COUNT);
    expect(during.length).toBeGreaterThan(0);
    // Answers come in journal order: what a get saw never goes backwards.
    const counts = seen.map((s) => s.steps);
    expect(counts).toEqual(counts.toSorted((a, b) => a - b));
  });
});
