// Benchmark (prints measured numbers; asserts only correctness): step.invoke of a one-step child, from the parent's
// call to its returned result, next to the floor of the same run — a one-step task's round trip (create → completed)
// of that very child task — and a 100-child fan-out's total time. Run: pnpm --filter durable-mcp-server bench:invoke
// workerd advances its clock only at I/O, so figures are at millisecond granularity.
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../test/helpers.js";

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;
const textOf = (task: { result?: unknown }) =>
  JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text) as Record<string, unknown>;

const RUNS = 15;

describe("benchmark: step.invoke", () => {
  it("one-step child: invoke → result against the one-step round trip", async () => {
    const floor: number[] = [];
    const invoke: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      // The floor: the child task alone, created → completed (awaitSettled resolves at its final state).
      const begin = performance.now();
      const alone = await startTask("child_echo", { value: i });
      const settled = await alone.stub.awaitSettled(alone.access, 10_000);
      const floorMs = performance.now() - begin;
      expect(settled?.status).toBe("completed");
      // The parent measures its own invoke: from before the call to the step after it.
      const parent = await startTask("parent_timed", { childInput: { value: i } });
      const done = await parent.stub.awaitSettled(parent.access, 10_000);
      expect(done?.status).toBe("completed");
      if (i < 2) continue; // warm-up
      floor.push(floorMs);
      invoke.push(Number(textOf(done!).ms));
    }
    const f = median(floor);
    const v = median(invoke);
    console.log(
      `[bench] one-step round trip (floor) p50 ${f.toFixed(1)} ms; step.invoke → result p50 ${v.toFixed(1)} ms ` +
        `(${(v / f).toFixed(2)}× the floor; target ≤ 2×), ${RUNS} runs each`,
    );
  });

  it("fan-out: 100 children with Promise.all, total time and parent runs", async () => {
    const totals: number[] = [];
    for (let i = 0; i < 3; i++) {
      const begin = performance.now();
      const parent = await startTask("fan_out", { n: 100 });
      const done = await waitForTask(parent, isFinal, 60_000);
      totals.push(performance.now() - begin);
      expect(textOf(done)).toEqual({ n: 100, sum: 4950 });
      console.log(
        `[bench] fan-out of 100: ${totals.at(-1)!.toFixed(0)} ms, ${await parent.probe.count("parent-runs")} runs of the parent`,
      );
    }
    console.log(`[bench] fan-out of 100: median ${median(totals).toFixed(0)} ms of 3`);
  });
});
