// step.invoke across a crash at each boundary, on real objects: before the child starts, after it starts but before
// the parent journals it, with the child mid-run, and with the child final but its parent not told yet. Each time
// exactly one child runs and the parent gets its result once. Also: a replay returns the journaled result without
// the child (which is gone), and a fan-out of 100 children costs far fewer replays than children.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { NewTask } from "../../src/runner/task-store.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { sendTaskEvent } from "../../src/tasks/send-event.js";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";
import { childOf, journalOf, outboxOf, textOf } from "./invoke-helpers.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);
const send = (taskId: string, type: string, payload: unknown = null) =>
  sendTaskEvent(runners, taskId, { type, payload }, { principal: "alice" });

/** What the parent fixture's invoke creates for step "child" of `parent` (test/fixtures/invoke-tasks.ts). */
function childTask(parent: StartedTask, taskId: string): NewTask {
  return {
    taskId,
    principal: "alice",
    tool: "child_echo",
    input: JSON.stringify({ probe: parent.probeName, value: 1 }),
    ttlMs: 60_000,
    pollIntervalMs: 100,
    parent: { taskId: parent.taskId, step: "child", depth: 1 },
  };
}

const invokeDone = (parent: StartedTask) => async () =>
  (await journalOf(parent.stub)).some((row) => row.kind === "invoke" && row.state === "done");

describe("step.invoke across crashes", () => {
  it("before the child starts: the parent's replay starts it once", async () => {
    const parent = await startTask("parent_gated");
    await waitForTask(parent, async () => (await journalOf(parent.stub)).length === 1);
    const child = await childOf(parent);
    // The parent had written its child's link and died before the create.
    await runInDurableObject(parent.stub, (_, state) =>
      state.storage.sql.exec(
        "INSERT INTO children (child_id, step, task, policy, started_at) VALUES (?, 'child', 'child_echo', 'cancel', ?)",
        child.taskId,
        Date.now(),
      ),
    );
    await evictDurableObject(parent.stub);
    await send(parent.taskId, "gate");
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { echo: 1 } });
    expect(await parent.probe.count("child-runs")).toBe(1);
    expect(await parent.probe.count("parent-got")).toBe(1);
  });

  it("after the child started, before the parent journaled it: the same child, its early notice kept", async () => {
    const parent = await startTask("parent_gated");
    await waitForTask(parent, async () => (await journalOf(parent.stub)).length === 1);
    const child = await childOf(parent);
    // The create reached the child, then the parent died: the child runs, ends and tells a parent with no invoke row.
    await child.stub.create(childTask(parent, child.taskId));
    await waitForTask(child, isFinal);
    await waitForTask(parent, async () => (await parent.stub.children(parent.taskId))![0]?.status === "completed");
    expect(await journalOf(parent.stub)).toEqual([{ name: "gate", kind: "event", state: "waiting" }]);
    await evictDurableObject(parent.stub);
    await send(parent.taskId, "gate");
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { echo: 1 } });
    expect(await parent.probe.count("child-runs")).toBe(1);
    expect(await parent.probe.count("parent-got")).toBe(1);
    expect(await parent.stub.children(parent.taskId)).toHaveLength(1);
  });

  it("with the child mid-run: both evicted, the child goes on and the parent gets its result once", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait" });
    const child = await childOf(parent);
    await waitForTask(child, async () => (await parent.probe.count("child-begun")) === 1);
    await waitForTask(parent, async () => (await journalOf(parent.stub)).some((row) => row.state === "waiting"));
    await evictDurableObject(parent.stub);
    await evictDurableObject(child.stub);
    await send(child.taskId, "go", "late");
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { child: "late" } });
    expect(await parent.probe.count("child-begun")).toBe(1);
    expect(await parent.probe.count("child-ended")).toBe(1);
    expect(await parent.probe.count("parent-got")).toBe(1);
  });

  it("with the child final and its parent not told: the child's alarm tells it, and a repeat changes nothing", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait" });
    const child = await childOf(parent);
    await waitForTask(child, async () => (await parent.probe.count("child-begun")) === 1);
    // The child's final state and its notice commit together; the child dies before delivering it.
    await runInDurableObject(child.stub, (instance) => {
      const run = (instance as unknown as { run: { finish(ending: unknown): boolean } }).run;
      run.finish({ status: "completed", result: { content: [{ type: "text", text: '{"child":"direct"}' }] } });
    });
    await evictDurableObject(child.stub);
    expect(await outboxOf(child.stub)).toEqual([{ target: parent.taskId, kind: "notice" }]);
    expect((await parent.stub.get(parent.access))!.status).toBe("working");
    const owed = await runInDurableObject(child.stub, (_, state) =>
      state.storage.sql.exec<{ body: string }>("SELECT body FROM outbox").one(),
    );
    await runDurableObjectAlarm(child.stub);
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { child: "direct" } });
    expect(await outboxOf(child.stub)).toEqual([]);
    // The same notice again (a retry whose acknowledgement was lost): recorded once, nothing replayed.
    await runInDurableObject(child.stub, (_, state) =>
      state.storage.sql.exec(
        "INSERT INTO outbox (target, kind, body, next_at) VALUES (?, 'notice', ?, 0)",
        parent.taskId,
        owed.body,
      ),
    );
    await runDurableObjectAlarm(child.stub);
    expect(await outboxOf(child.stub)).toEqual([]);
    expect(await parent.probe.count("parent-got")).toBe(1);
    expect(await parent.probe.count("child-ended")).toBe(0);
  });

  it("replays a journaled result without the child, which is gone", async () => {
    const parent = await startTask("parent_then_wait");
    await waitForTask(parent, invokeDone(parent));
    const child = await childOf(parent);
    await runInDurableObject(child.stub, (_, state) => state.storage.deleteAll());
    await evictDurableObject(child.stub);
    await send(parent.taskId, "after");
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { echo: 1 } });
    expect(await child.stub.get(child.access)).toBeNull();
    expect(await parent.probe.count("child-runs")).toBe(1);
  });

  it("drops a notice to a parent that is gone", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait", policy: "abandon" });
    const child = await childOf(parent);
    await waitForTask(child, async () => (await parent.probe.count("child-begun")) === 1);
    await runInDurableObject(parent.stub, (_, state) => state.storage.deleteAll());
    await evictDurableObject(parent.stub);
    await send(child.taskId, "go");
    expect((await waitForTask(child, isFinal)).status).toBe("completed");
    await waitForTask(child, async () => (await outboxOf(child.stub)).length === 0);
  });

  it("fans out 100 children with Promise.all; their notices share replays", async () => {
    const parent = await startTask("fan_out", { n: 100 });
    const done = await waitForTask(parent, isFinal, 60_000);
    expect(textOf(done)).toEqual({ n: 100, sum: 4950 });
    expect(await parent.probe.count("child-runs")).toBe(100);
    const children = (await parent.stub.children(parent.taskId))!;
    expect(children.filter((c) => c.status === "completed")).toHaveLength(100);
    const runs = await parent.probe.count("parent-runs");
    console.log(`fan-out of 100: ${runs} runs of the parent`);
    // One per child would be 101; coalesced wakes keep it to a handful.
    expect(runs).toBeLessThanOrEqual(20);
  }, 90_000);
});
