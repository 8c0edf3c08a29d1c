// A task's place in its tree, read from what durable-mcp-server sends: its parent from the child's `_meta`
// (PARENT_TASK_META: the parent's id and the invoke step's label), its children from the `invoke` steps of its step
// timeline (each step's `child`: the child's id, tool and status as the parent knows it). Pure: the agent uses it
// to follow the children, the page (components/TaskTree.tsx) to draw the tree.
import { timelineOf, type TaskSnapshot, type TimelineStep } from "./mcp.ts";

/** On a child task's `_meta`: `{ taskId, step }` of the parent whose `step.invoke` started it. */
export const PARENT_TASK_META = "durable-mcp-server/parent-task";

/** The step kind of `step.invoke` in the timeline. */
export const INVOKE_KIND = "invoke";

/** The children the agent follows per task (their pages, polled); the tree lists any further ones from the timeline. */
export const CHILDREN_FOLLOWED = 20;

export interface ParentLink {
  taskId: string;
  /** The label of the parent's invoke step that started this task. */
  step: string;
}

export interface ChildLink {
  taskId: string;
  /** The registered task (tool) the child runs. */
  tool: string;
  /** The invoke step's label (with `#n` from its second use on). */
  step: string;
  /** As the parent's timeline reports it: `working` until the child told its parent it ended. */
  status: string;
}

/** The task's parent, when it is a child task. */
export function parentOf(snapshot: TaskSnapshot | undefined): ParentLink | undefined {
  const value = snapshot?._meta?.[PARENT_TASK_META];
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { taskId, step } = value;
  return typeof taskId === "string" && taskId !== ""
    ? { taskId, step: typeof step === "string" ? step : "" }
    : undefined;
}

/** An invoke step's child, when the step carries a well-formed one. */
export function childOfStep(step: TimelineStep): Omit<ChildLink, "step"> | undefined {
  if (step.kind !== INVOKE_KIND) return undefined;
  const child = step.child;
  if (!child || typeof child.taskId !== "string" || child.taskId === "") return undefined;
  return {
    taskId: child.taskId,
    tool: typeof child.task === "string" ? child.task : "",
    status: typeof child.status === "string" ? child.status : "working",
  };
}

/** The children the task's timeline names, in step order, each once (a repeated id keeps its latest step). */
export function childrenOf(snapshot: TaskSnapshot | undefined): ChildLink[] {
  const timeline = snapshot ? timelineOf(snapshot) : undefined;
  if (!timeline) return [];
  const byId = new Map<string, ChildLink>();
  for (const step of timeline.steps) {
    const child = childOfStep(step);
    if (!child) continue;
    byId.delete(child.taskId);
    const label = (step.occurrence ?? 1) > 1 ? `${step.name}#${step.occurrence}` : step.name;
    byId.set(child.taskId, { ...child, step: label });
  }
  return [...byId.values()];
}

/** Children not yet followed (`known` says which ids are), at most `limit` in all counting those followed already. */
export function childrenToFollow(
  children: ChildLink[],
  known: (taskId: string) => boolean,
  limit: number,
): ChildLink[] {
  const followed = children.filter((c) => known(c.taskId)).length;
  return children.filter((c) => !known(c.taskId)).slice(0, Math.max(0, limit - followed));
}

/** The ids of the tasks followed under `taskId` (children, their children, …), from the records' `parent`. */
export function descendantsOf(records: { taskId: string; parent?: ParentLink }[], taskId: string): string[] {
  const found: string[] = [];
  const queue = [taskId];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const id = queue.shift();
    for (const record of records) {
      if (record.parent?.taskId !== id || seen.has(record.taskId)) continue;
      seen.add(record.taskId);
      found.push(record.taskId);
      queue.push(record.taskId);
    }
  }
  return found;
}

/** The tasks the home list shows: those the agent started, and any child whose parent is no longer in the list. */
export function rootsOf<T extends { record: { taskId: string; parent?: ParentLink } }>(tasks: T[]): T[] {
  const ids = new Set(tasks.map((t) => t.record.taskId));
  return tasks.filter((t) => !t.record.parent || !ids.has(t.record.parent.taskId));
}
