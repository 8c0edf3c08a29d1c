// step.invoke on real TaskRunner objects: a child started once under the parent's principal and linked to it, its
// result journaled in the parent once, failures and timeouts as ChildTaskError, refusals as InvokeError with nothing
// started, and the parent's ending cancelling or abandoning the child by policy.
import { describe, expect, it } from "vitest";
import { PARENT_TASK_META, STEPS_META } from "../../src/wire/meta-keys.js";
import { isFinal, startTask, waitForTask } from "../helpers.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { sendTaskEvent } from "../../src/tasks/send-event.js";
import { fixtureEnv } from "../helpers.js";
import { childOf, journalOf, textOf } from "./invoke-helpers.js";
import { exportTaskHistory } from "../../src/tasks/export-history.js";
import { replayHistory } from "../../src/testing/replay-history.js";
import { taskDefinitionOf, type TaskRegistry } from "../../src/runner/task-definition.js";
import { invokeTasks } from "../fixtures/invoke-tasks.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);
const send = (taskId: string, type: string, payload: unknown = null) =>
  sendTaskEvent(runners, taskId, { type, payload }, { principal: "alice" });

describe("step.invoke", () => {
  it("starts the child under the parent's principal, linked to it, and returns its result once", async () => {
    const parent = await startTask("parent_invoke", { childInput: { value: 42 } });
    const done = await waitForTask(parent, isFinal);
    expect(done.status).toBe("completed");
    expect(textOf(done)).toEqual({ result: { echo: 42 } });
    const child = await childOf(parent);
    const got = (await child.stub.get(child.access))!;
    expect(got.status).toBe("completed");
    expect(got._meta?.[PARENT_TASK_META]).toEqual({ taskId: parent.taskId, step: "child" });
    // Another principal sees no child, as for any task.
    expect(await child.stub.get({ taskId: child.taskId, principal: "mallory" })).toBeNull();
    expect(await parent.probe.count("child-runs")).toBe(1);
    expect(await parent.probe.count("parent-got")).toBe(1);
    expect(await journalOf(parent.stub)).toEqual([
      { name: "child", kind: "invoke", state: "done" },
      { name: "got", kind: "do", state: "done" },
    ]);
    // The parent's step timeline names the child, for the task page's tree.
    const steps = (await parent.stub.get(parent.access, { steps: true }))!._meta?.[STEPS_META] as {
      steps: { kind: string; child?: unknown }[];
    };
    expect(steps.steps[0]).toMatchObject({
      kind: "invoke",
      child: { taskId: child.taskId, task: "child_echo", status: "completed" },
    });
    expect(await parent.stub.children(parent.taskId)).toMatchObject([
      { taskId: child.taskId, step: "child", task: "child_echo", onParentCancel: "cancel", status: "completed" },
    ]);
  });

  it("says in the parent's status what it waits for, and throws a failing child's error as ChildTaskError", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait" });
    const child = await childOf(parent);
    await waitForTask(child, async () => (await parent.probe.count("child-begun")) === 1);
    const waiting = await waitForTask(parent, (task) => task.statusMessage !== undefined);
    expect(waiting).toMatchObject({
      status: "working",
      statusMessage: 'waiting for child task "child_wait" (step "child")',
    });
    await send(child.taskId, "go", "now");
    expect(textOf(await waitForTask(parent, isFinal))).toEqual({ result: { child: "now" } });

    const failing = await startTask("parent_invoke", { child: "child_fail", childInput: { value: 7 } });
    const failed = await waitForTask(failing, isFinal);
    expect(textOf(failed)).toEqual({
      caught: "ChildTaskError",
      ending: "failed",
      code: "handler_error",
      message: "child broke on 7",
    });
  });

  it("times out as ChildTaskError timed_out; the child runs on", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait", timeout: 300 });
    const done = await waitForTask(parent, isFinal);
    expect(textOf(done)).toMatchObject({ caught: "ChildTaskError", ending: "timed_out", code: "timed_out" });
    const child = await childOf(parent);
    expect((await child.stub.get(child.access))!.status).toBe("working");
    await send(child.taskId, "go");
    expect((await waitForTask(child, isFinal)).status).toBe("completed");
  });

  it("refuses at the call, starting nothing: unknown task, invalid input, a timeout it cannot read, too deep", async () => {
    const unknown = await startTask("parent_invoke", { child: "no_such_task" });
    expect(textOf(await waitForTask(unknown, isFinal))).toMatchObject({
      caught: "InvokeError",
      reason: "unknown_task",
    });
    expect(await unknown.stub.children(unknown.taskId)).toEqual([]);

    const invalid = await startTask("parent_invoke", { child: "child_strict", childInput: { n: "seven" } });
    expect(textOf(await waitForTask(invalid, isFinal))).toEqual({
      caught: "InvokeError",
      reason: "invalid_input",
      message: 'input of task "child_strict" is invalid: n: expected a number',
    });
    expect(await invalid.stub.children(invalid.taskId)).toEqual([]);
    const strictChild = await childOf(invalid);
    expect(await strictChild.stub.get(strictChild.access)).toBeNull();

    const badTimeout = await startTask("parent_invoke", { timeout: "whenever" });
    expect(textOf(await waitForTask(badTimeout, isFinal))).toMatchObject({ caught: "RangeError" });
    expect(await badTimeout.stub.children(badTimeout.taskId)).toEqual([]);

    // Nine levels below the top: the eighth child is the deepest, its own invoke is refused.
    const top = await startTask("nest", { depth: 9 });
    let text = textOf(await waitForTask(top, isFinal, 20_000)) as Record<string, unknown>;
    let levels = 0;
    while (text.below) {
      levels++;
      text = text.below as Record<string, unknown>;
    }
    expect(levels).toBe(8);
    expect(text).toMatchObject({ depth: 1, caught: "InvokeError", reason: "too_deep" });
  });

  it("cancels a running child with the parent under onParentCancel: cancel, and leaves it under abandon", async () => {
    const parent = await startTask("parent_invoke", { child: "child_wait", policy: "cancel" });
    const child = await childOf(parent);
    await waitForTask(child, async () => (await parent.probe.count("child-begun")) === 1);
    await waitForTask(parent, async () => (await parent.stub.children(parent.taskId))!.length === 1);
    await parent.stub.cancel(parent.access);
    expect((await waitForTask(child, isFinal)).status).toBe("cancelled");

    const abandoning = await startTask("parent_invoke", { child: "child_wait", policy: "abandon" });
    const orphan = await childOf(abandoning);
    await waitForTask(orphan, async () => (await abandoning.probe.count("child-begun")) === 1);
    await abandoning.stub.cancel(abandoning.access);
    expect((await waitForTask(abandoning, isFinal)).status).toBe("cancelled");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await orphan.stub.get(orphan.access))!.status).toBe("working");
    await send(orphan.taskId, "go");
    expect((await waitForTask(orphan, isFinal)).status).toBe("completed");
    // Its notice reached the cancelled parent, which records it and stays cancelled.
    await waitForTask(
      abandoning,
      async () => (await abandoning.stub.children(abandoning.taskId))![0]!.status === "completed",
    );
    expect((await abandoning.stub.get(abandoning.access))!.status).toBe("cancelled");
  });

  it("exports a history with its invoke, which the replay check reads without starting a child", async () => {
    const parent = await startTask("parent_invoke", { childInput: { value: 5 } });
    await waitForTask(parent, isFinal);
    const history = await exportTaskHistory(runners, parent.taskId, { principal: "alice" });
    expect(history.steps.map((step) => [step.name, step.kind, step.state])).toEqual([
      ["child", "invoke", "done"],
      ["got", "do", "done"],
    ]);
    const probes = { hit: async () => 0 };
    const definitions = new Map(invokeTasks.map((make) => [make(() => probes).name, make(() => probes)]));
    const server: TaskRegistry = { [taskDefinitionOf]: (name) => definitions.get(name) };
    expect(await replayHistory(server, history)).toEqual({ compatible: true });
    expect(await parent.probe.count("child-runs")).toBe(1);
  });
});
