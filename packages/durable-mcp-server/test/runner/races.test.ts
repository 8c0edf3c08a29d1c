import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../helpers.js";

const accept = (content: Record<string, unknown>) => ({ action: "accept", content });

describe("races", () => {
  it("accepts exactly one of two concurrent answers for one key", async () => {
    const started = await startTask("asks");
    await waitForTask(started, (task) => task.status === "input_required");
    const [first, second] = await Promise.all([
      started.stub.update(started.access, { name: accept({ name: "Ada" }) }),
      started.stub.update(started.access, { name: accept({ name: "Eve" }) }),
    ]);
    expect([first!.accepted, second!.accepted].flat()).toEqual(["name"]);
    const winner = first!.accepted.length === 1 ? "Ada" : "Eve";
    await started.stub.update(started.access, { color: accept({ color: "teal" }) });
    const task = await waitForTask(started, isFinal);
    const text = (task.result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(JSON.parse(text).name).toEqual(accept({ name: winner }));
  });

  it("runs one replay when the alarm is delivered twice at once, so each step body runs once", async () => {
    const started = await startTask("hang", { ms: 50 });
    await waitForTask(started, async () => (await started.probe.count("started")) === 1);
    // A second delivery while the first run is inside the step body.
    await runInDurableObject(started.stub, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(await started.probe.count("started")).toBe(1);
    expect(await started.probe.count("finished")).toBe(1);
  });

  it("serialises many requests hitting one TaskRunner at once", async () => {
    const started = await startTask("asks");
    await waitForTask(started, (task) => task.status === "input_required");
    const calls = await Promise.all([
      ...Array.from({ length: 10 }, () => started.stub.get(started.access)),
      started.stub.update(started.access, { name: accept({ name: "Ada" }), color: accept({ color: "red" }) }),
      started.stub.cancel(started.access),
      ...Array.from({ length: 10 }, () => started.stub.get(started.access)),
    ]);
    expect(calls.every((result) => result !== null)).toBe(true);
    const task = await waitForTask(started, isFinal);
    // Whichever ending committed first, it is the one that stays.
    expect(["completed", "cancelled"]).toContain(task.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await started.stub.get(started.access)).toEqual(task);
  });
});
