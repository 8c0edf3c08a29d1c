import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../helpers.js";

const text = (task: { result?: unknown }) => (task.result as { content: Array<{ text: string }> }).content[0]!.text;

describe("replay without a clock", () => {
  it("completes parallel branches whose non-step await is slower on the replay than on the first run", async () => {
    // Branch 1: "a" (30 ms), a 300 ms sleep, then "c". Branch 2: a timer of 5 ms on the first run and 60 ms on
    // every replay, then "b". The replay after the sleep reaches "c" while "b" is journaled and not yet claimed.
    const tasks = await Promise.all(Array.from({ length: 4 }, () => startTask("two_branches")));
    for (const started of tasks) {
      const task = await waitForTask(started, isFinal);
      expect(task.error).toBeUndefined();
      expect(task.status).toBe("completed");
      expect(text(task)).toBe("c,b");
      for (const name of ["a", "b", "c"]) expect(await started.probe.count(name)).toBe(1);
      expect(await started.probe.count("handler-runs")).toBeGreaterThanOrEqual(2);
    }
  });
});
