// How the agent follows its tasks: a tasks/get per task on the task's pollIntervalMs, each scheduled with the
// agent's schedules (alarms), so tasks are followed while no page is open and again after an eviction. Only the
// newest schedule of a task polls: an older one (e.g. of an earlier instance) does nothing when it fires.
import { errorText, FINAL_STATUSES, McpError, STEPS_META, type TaskSnapshot } from "../shared/mcp.ts";
import type { TaskView } from "../shared/watcher-state.ts";

/** Between polls after a failed tasks/get. */
const RETRY_MS = 3000;
/** Between polls of a task that names no pollIntervalMs. */
const DEFAULT_INTERVAL_MS = 1000;

export interface PollPayload {
  taskId: string;
  poll: string;
}

/** What the poller needs from the agent. */
export interface PollHost {
  view(taskId: string): TaskView | undefined;
  /** tasks/get on the task's server with these params, logged with the task. */
  getTask(view: TaskView, params: { taskId: string; _meta: { [STEPS_META]: true } }): Promise<TaskSnapshot>;
  patchTask(taskId: string, patch: (view: TaskView) => Partial<TaskView>): void;
  /** A snapshot arrived: the agent follows the child tasks it names (agent/task-watcher.ts). */
  followChildren?(view: TaskView, snapshot: TaskSnapshot): Promise<void>;
  /** Runs the agent's poll callback with `payload` in `delaySeconds`. */
  schedule(delaySeconds: number, payload: PollPayload): Promise<void>;
}

/** Whether the agent is done with a task: final, or gone from its server. */
export function isFinal(view: TaskView): boolean {
  return !!view.gone || (view.snapshot !== undefined && FINAL_STATUSES.has(view.snapshot.status));
}

/** At most `limit` tasks: the oldest final ones are dropped first (a live task is never dropped). */
export function trimTasks(tasks: TaskView[], limit: number): { kept: TaskView[]; dropped: string[] } {
  const drop = new Set<string>();
  for (let i = tasks.length - 1; i >= 0 && tasks.length - drop.size > limit; i--) {
    const view = tasks[i];
    if (view && isFinal(view)) drop.add(view.record.taskId);
  }
  return { kept: tasks.filter((t) => !drop.has(t.record.taskId)), dropped: [...drop] };
}

export class TaskPoller {
  /** Which scheduled poll of each task is the live one. */
  private readonly polls = new Map<string, string>();
  private readonly instanceId = crypto.randomUUID().slice(0, 8);
  private pollCount = 0;

  constructor(private readonly host: PollHost) {}

  /** A scheduled poll fired: only the task's newest schedule polls. */
  async due(payload: PollPayload): Promise<void> {
    if (this.polls.get(payload.taskId) !== payload.poll) return;
    this.polls.delete(payload.taskId);
    await this.poll(payload.taskId);
  }

  /** No more polls of `taskId` (a schedule already set does nothing when it fires). */
  forget(taskId: string): void {
    this.polls.delete(taskId);
  }

  /** tasks/get now, then the next poll on the task's interval until it is final or gone. */
  async poll(taskId: string): Promise<void> {
    const view = this.host.view(taskId);
    if (!view) return;
    try {
      // Ask for the step timeline too: the task page shows it (servers that do not know the key ignore it).
      const snapshot = await this.host.getTask(view, { taskId, _meta: { [STEPS_META]: true } });
      this.host.patchTask(taskId, () => ({
        snapshot,
        pollError: undefined,
        gone: undefined,
        polledAt: new Date().toISOString(),
      }));
      await this.host.followChildren?.(view, snapshot);
      if (!FINAL_STATUSES.has(snapshot.status))
        await this.after(taskId, snapshot.pollIntervalMs ?? DEFAULT_INTERVAL_MS);
      else this.polls.delete(taskId);
    } catch (error) {
      // -32602 for a task id: the server does not know it (any more), and never will again.
      if (error instanceof McpError && error.kind === "rpc" && error.rpcError?.code === -32602) {
        this.polls.delete(taskId);
        this.host.patchTask(taskId, () => ({
          gone: `The server does not know this task any more (${error.rpcError?.message}): it expired, or it belongs to another server or caller.`,
        }));
        return;
      }
      this.host.patchTask(taskId, () => ({ pollError: errorText(error) }));
      await this.after(taskId, RETRY_MS);
    }
  }

  /** The next poll of `taskId` in `delayMs` (whole seconds: the schedules' resolution), replacing any pending one. */
  async after(taskId: string, delayMs: number = DEFAULT_INTERVAL_MS): Promise<void> {
    const poll = `${this.instanceId}:${++this.pollCount}`;
    this.polls.set(taskId, poll);
    await this.host.schedule(Math.ceil(Math.max(0, delayMs) / 1000), { taskId, poll });
  }
}
