import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask } from "../helpers.js";

describe("step.sleep", () => {
  it("sleeps durably across an eviction and nothing runs before the wake time", async () => {
    const started = await startTask("sleeper", { ms: 300 });
    const begun = Date.now();
    await runDurableObjectAlarm(started.stub);
    await evictDurableObject(started.stub);
    expect(await started.probe.count("after")).toBe(0);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(Date.now() - begun).toBeGreaterThanOrEqual(300);
    expect(await started.probe.count("after")).toBe(1);
  });
});

const accept = (content: Record<string, unknown>) => ({ action: "accept", content });

describe("input steps", () => {
  it("asks several questions at once and resumes across evictions once all are answered", async () => {
    const started = await startTask("asks");
    const waiting = await waitForTask(started, (task) => task.status === "input_required");
    expect(Object.keys(waiting.inputRequests ?? {})).toEqual(["name", "color"]);
    expect(waiting.inputRequests?.name).toMatchObject({
      method: "elicitation/create",
      params: { message: "Your name?" },
    });

    await evictDurableObject(started.stub);
    // A partial answer, plus keys never asked: only the pending key remains.
    expect(await started.stub.update(started.access, { name: accept({ name: "Ada" }), bogus: accept({}) })).toEqual({
      accepted: ["name"],
    });
    const partial = await started.stub.get(started.access);
    expect(partial?.status).toBe("input_required");
    expect(Object.keys(partial?.inputRequests ?? {})).toEqual(["color"]);

    await evictDurableObject(started.stub);
    // Answering an already-answered key again is ignored (retries are safe).
    expect(
      await started.stub.update(started.access, { name: accept({ name: "Eve" }), color: accept({ color: "teal" }) }),
    ).toEqual({ accepted: ["color"] });
    const task = await waitForTask(started, isFinal);
    expect(JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({
      name: accept({ name: "Ada" }),
      color: accept({ color: "teal" }),
    });
  });

  it("resolves an unanswered input at its timeout, and a late answer changes nothing", async () => {
    const started = await startTask("asks", { timeoutMs: 150 });
    await waitForTask(started, (task) => task.status === "input_required");
    const task = await waitForTask(started, isFinal);
    expect(JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({
      name: "InputTimeoutError",
      color: "InputTimeoutError",
    });
    expect(await started.stub.update(started.access, { name: accept({ name: "late" }) })).toEqual({ accepted: [] });
  });
});

describe("step.sleepUntil", () => {
  it("wakes at the given time", async () => {
    const started = await startTask("sleep_until", { until: Date.now() + 150 });
    const task = await waitForTask(started, isFinal);
    expect(task.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "true" }] });
  });
});
