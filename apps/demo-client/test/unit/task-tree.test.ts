// A task's tree as the page reads it (shared/task-tree.ts): its parent from the child's `_meta`, its children from
// the `invoke` steps of its timeline, which children the agent follows, what the home list shows, and the invoke
// step's bar in the waterfall (src/waterfall.ts). Plain functions, no browser.
import { describe, expect, it } from "vitest";
import { STEPS_META, type TaskSnapshot, type TimelineStep } from "../../shared/mcp.ts";
import {
  childrenOf,
  childrenToFollow,
  descendantsOf,
  PARENT_TASK_META,
  parentOf,
  rootsOf,
} from "../../shared/task-tree.ts";
import { barsOf, KIND_LABEL, KNOWN_KINDS } from "../../src/waterfall.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

const invoke = (name: string, child: TimelineStep["child"], fields: Partial<TimelineStep> = {}): TimelineStep => ({
  name,
  kind: "invoke",
  state: "waiting",
  attempts: 1,
  startedAt: at(0),
  updatedAt: at(100),
  durationMs: 100,
  child,
  ...fields,
});

/** The agent follows only task "b" so far. */
const onlyB = (id: string) => id === "b";

const withSteps = (steps: TimelineStep[]): TaskSnapshot => ({
  taskId: "parent",
  status: "working",
  _meta: { [STEPS_META]: { total: steps.length, steps: steps as never } },
});

describe("a task's parent", () => {
  it("is read from the child's _meta, with the invoke step's label", () => {
    const child: TaskSnapshot = {
      taskId: "c1",
      status: "working",
      _meta: { [PARENT_TASK_META]: { taskId: "p1", step: "export 2" } },
    };
    expect(parentOf(child)).toEqual({ taskId: "p1", step: "export 2" });
  });

  it("is absent for a task the client started, and for a malformed key", () => {
    expect(parentOf({ taskId: "t", status: "working" })).toBeUndefined();
    expect(parentOf(undefined)).toBeUndefined();
    expect(parentOf({ taskId: "t", status: "working", _meta: { [PARENT_TASK_META]: "p1" } })).toBeUndefined();
    expect(parentOf({ taskId: "t", status: "working", _meta: { [PARENT_TASK_META]: { taskId: "" } } })).toBeUndefined();
    expect(parentOf({ taskId: "t", status: "working", _meta: { [PARENT_TASK_META]: { taskId: "p" } } })).toEqual({
      taskId: "p",
      step: "",
    });
  });
});

describe("a task's children", () => {
  it("are the invoke steps' children in step order, with tool, step label and status as the timeline says", () => {
    const snapshot = withSteps([
      { name: "prepare", kind: "do", state: "done", attempts: 1, startedAt: at(0), updatedAt: at(5), durationMs: 5 },
      invoke("export 1", { taskId: "c1", task: "export_contacts", status: "completed" }, { state: "done" }),
      invoke("export 2", { taskId: "c2", task: "export_contacts", status: "working" }),
      invoke("export 2", { taskId: "c3", task: "export_contacts", status: "failed" }, { occurrence: 2 }),
    ]);
    expect(childrenOf(snapshot)).toEqual([
      { taskId: "c1", tool: "export_contacts", step: "export 1", status: "completed" },
      { taskId: "c2", tool: "export_contacts", step: "export 2", status: "working" },
      { taskId: "c3", tool: "export_contacts", step: "export 2#2", status: "failed" },
    ]);
  });

  it("skip an invoke step without a child (refused before it started one) and tasks without a timeline", () => {
    expect(childrenOf(withSteps([invoke("bad", undefined, { state: "failed" })]))).toEqual([]);
    expect(childrenOf({ taskId: "t", status: "working" })).toEqual([]);
    expect(childrenOf(undefined)).toEqual([]);
  });

  it("are followed up to the limit, counting those followed already", () => {
    const children = ["a", "b", "c", "d"].map((id) => ({ taskId: id, tool: "t", step: id, status: "working" }));
    expect(childrenToFollow(children, onlyB, 3).map((c) => c.taskId)).toEqual(["a", "c"]);
    expect(childrenToFollow(children, onlyB, 1)).toEqual([]);
    expect(childrenToFollow(children, () => true, 10)).toEqual([]);
  });
});

describe("the agent's list as a tree", () => {
  const records = [
    { taskId: "g1", parent: { taskId: "c1", step: "x" } },
    { taskId: "c1", parent: { taskId: "p", step: "export 1" } },
    { taskId: "c2", parent: { taskId: "p", step: "export 2" } },
    { taskId: "p" },
    { taskId: "other" },
    { taskId: "orphan", parent: { taskId: "dropped", step: "s" } },
  ];

  it("removes a task with everything followed under it", () => {
    expect(descendantsOf(records, "p").toSorted()).toEqual(["c1", "c2", "g1"]);
    expect(descendantsOf(records, "other")).toEqual([]);
  });

  it("shows on the home list the started tasks, and children whose parent is no longer listed", () => {
    const views = records.map((record) => ({ record }));
    expect(rootsOf(views).map((v) => v.record.taskId)).toEqual(["p", "other", "orphan"]);
  });
});

describe("an invoke step in the waterfall", () => {
  it("is its own kind, labelled child task, drawn as one bar while the parent waits", () => {
    expect(KNOWN_KINDS.has("invoke")).toBe(true);
    expect(KIND_LABEL.invoke).toBe("child task");
    const step = invoke("export 1", { taskId: "c1", task: "export_contacts", status: "working" });
    expect(barsOf(step, T0 + 400)).toEqual([
      { key: "span", from: T0, to: T0 + 400, className: "bar-invoke", title: "child task: 400 ms" },
    ]);
  });
});
