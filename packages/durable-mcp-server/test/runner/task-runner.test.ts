import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../helpers.js";

describe("TaskRunner", () => {
  it("runs a task to completion and keeps its record readable", async () => {
    const started = await startTask("three_steps");
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "total 4" }] });
    expect(task.statusMessage).toBe("after b");
    expect(await started.probe.count("a")).toBe(1);
  });

  it("runs each step body once when evicted at every point of the task", async () => {
    const started = await startTask("three_steps", { pauseMs: 20 });
    // Evict after every run of the alarm (each run ends at a sleep between two steps) until the task ends.
    for (let round = 0; round < 50; round++) {
      await runDurableObjectAlarm(started.stub);
      await evictDurableObject(started.stub);
      await new Promise((resolve) => setTimeout(resolve, 25));
      const task = await started.stub.get(started.access);
      if (task && isFinal(task)) break;
    }
    const task = await started.stub.get(started.access);
    expect(task?.status).toBe("completed");
    for (const key of ["a", "b", "c"]) expect(await started.probe.count(key)).toBe(1);
  });
});
