// Benchmark (prints measured numbers; asserts only correctness): step overhead and the cost of resuming a
// task with a long journal. Run: pnpm --filter durable-mcp-server bench
// workerd advances its clock only at I/O, so figures are at millisecond granularity.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../test/helpers.js";

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe("benchmark", () => {
  it("step.do overhead on a fresh task", async () => {
    for (const count of [100, 500]) {
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = await startTask("pure_steps", { count, tailMs: 0 });
        const begin = performance.now();
        await runDurableObjectAlarm(started.stub);
        const task = await waitForTask(started, isFinal);
        runs.push(performance.now() - begin);
        expect(task.status).toBe("completed");
      }
      const ms = median(runs);
      console.log(
        `[bench] ${count} new steps in one run: ${ms.toFixed(1)} ms median of 3 (${(ms / count).toFixed(3)} ms/step)`,
      );
    }
  });

  it("resuming a task replays its whole journal from one read", async () => {
    for (const count of [10, 100, 1000]) {
      const started = await startTask("pure_steps", { count, tailMs: 3_600_000 });
      await runDurableObjectAlarm(started.stub);
      await waitForTask(started, async () => {
        const rows = await runInDurableObject(
          started.stub,
          (_, state) => state.storage.sql.exec("SELECT COUNT(*) AS n FROM steps").one().n,
        );
        return rows === count + 1;
      });
      // Make the sleep due, then time one alarm run: it replays `count` journaled steps and completes.
      await runInDurableObject(started.stub, (_, state) =>
        state.storage.sql.exec("UPDATE steps SET wake_at = 0 WHERE name = 'tail'"),
      );
      const bytes = await runInDurableObject(started.stub, (_, state) => state.storage.sql.databaseSize);
      const begin = performance.now();
      await runDurableObjectAlarm(started.stub);
      const ms = performance.now() - begin;
      const task = await started.stub.get(started.access);
      expect(task?.status).toBe("completed");
      console.log(
        `[bench] resume after ${count} journaled steps: ${ms.toFixed(1)} ms (${((ms / count) * 1000).toFixed(1)} µs per replayed step; journal ${Math.round(bytes / 1024)} KiB)`,
      );
    }
  });
});
