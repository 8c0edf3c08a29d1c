// The cap on children per task (MAX_CHILDREN_PER_TASK, 1,000, docs/limits.md): past it, step.invoke throws InvokeError
// too_many_children at the call, journaled, and nothing is started.
//
// Why the 1,000 earlier children are seeded rather than run: the cap counts the parent's `children` rows (one per
// child ever started, written by ChildLinks.begin before the child's create), and 1,000 real children, each its own
// TaskRunner object with a run, a notice and a wake of the parent, did not finish within 150 s on the 2-core CI-like
// machine under load. So the rows are written by the runner's own ChildLinks, in the parent's own storage, as a
// parent that had started (and heard back from) that many children holds them; the invoke under test then runs the
// real path on a real TaskRunner: at 999 earlier children the 1,000th starts and returns, at 1,000 the next is refused.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_CHILDREN_PER_TASK } from "../../src/limits.js";
import { ChildLinks, childIdFor } from "../../src/runner/child-tasks.js";
import { sendTaskEvent } from "../../src/tasks/send-event.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";
import { childOf, journalOf, textOf } from "./invoke-helpers.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);

/** A gated parent (waiting for "gate") that has started `count` children already, each of them completed. */
async function parentWithChildren(count: number): Promise<StartedTask> {
  const parent = await startTask("gated_invoke", { childInput: { value: 9 } });
  await waitForTask(parent, async () => (await journalOf(parent.stub)).some((row) => row.kind === "event"));
  const ids = await Promise.all(Array.from({ length: count }, (_, i) => childIdFor(parent.taskId, `earlier ${i}`)));
  await runInDurableObject(parent.stub, (_, state) => {
    const links = new ChildLinks(state.storage.sql);
    const now = Date.now();
    ids.forEach((childId, i) => {
      const step = `earlier ${i}`;
      links.begin(childId, { label: step, task: "child_echo", input: {}, onParentCancel: "cancel" }, now);
      links.record({ parentId: parent.taskId, step, childId, status: "completed", result: null, error: null }, now);
    });
  });
  expect((await parent.stub.children(parent.taskId))!).toHaveLength(count);
  return parent;
}

const openGate = (parent: StartedTask) =>
  sendTaskEvent(runners, parent.taskId, { type: "gate", payload: null }, { principal: "alice" });

describe("children per task", () => {
  it(`the ${MAX_CHILDREN_PER_TASK}th child starts; past it, InvokeError at the call and nothing started`, async () => {
    const last = await parentWithChildren(MAX_CHILDREN_PER_TASK - 1);
    await openGate(last);
    expect(textOf(await waitForTask(last, isFinal, 20_000))).toEqual({ result: { echo: 9 } });
    const allowed = await childOf(last);
    expect((await allowed.stub.get(allowed.access))?.status).toBe("completed");
    expect((await last.stub.children(last.taskId))!).toHaveLength(MAX_CHILDREN_PER_TASK);

    const over = await parentWithChildren(MAX_CHILDREN_PER_TASK);
    await openGate(over);
    expect(textOf(await waitForTask(over, isFinal, 20_000))).toEqual({
      caught: "InvokeError",
      reason: "too_many_children",
      message: `a task starts at most ${MAX_CHILDREN_PER_TASK} child tasks`,
    });
    // Nothing started: no task under the child's id, no new row, no probe hit; the refusal is journaled, so a replay
    // throws it again rather than asking anew.
    const refused = await childOf(over);
    expect(await refused.stub.get(refused.access)).toBeNull();
    expect((await over.stub.children(over.taskId))!).toHaveLength(MAX_CHILDREN_PER_TASK);
    expect(await over.probe.count("child-runs")).toBe(0);
    expect((await journalOf(over.stub)).map((row) => [row.name, row.kind])).toEqual([
      ["gate", "event"],
      ["child", "invoke"],
    ]);
  });
});
