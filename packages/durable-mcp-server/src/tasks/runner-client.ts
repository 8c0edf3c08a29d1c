import { backoffDelayMs, equalJitter } from "../util/backoff.js";
import { newTaskId } from "../ids.js";
import type { RunnerPool } from "./runner-pool.js";
import {
  taskIndexOf,
  type IndexCursor,
  type IndexEntry,
  type EventOutcome,
  type WebhookAnswer,
  type TaskAccess,
  type TaskRunnerRpc,
  type UpdateOutcome,
  type NewTask,
  type TaskText,
} from "../runner/index.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 40 };

/**
 * Reaches the TaskRunner of a task id. Transient Durable Object errors the platform marks as such (see
 * `isTransient`) are retried with jittered exponential backoff on a fresh stub, since a
 * stub that threw may be broken. Nothing else is retried.
 */
export class RunnerClient {
  constructor(
    private readonly namespace: DurableObjectNamespace,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    /** The per-principal task index (TaskIndex), when the deployment binds one. */
    private readonly index?: DurableObjectNamespace,
    /** The isolate's pre-created runners, when the request can refill them after its reply (routing/). */
    private readonly pool?: RunnerPool,
  ) {}

  /** Set once this client handed out a pre-created runner's id: the router refills the pool after the reply. */
  refillWanted = false;

  /** The id of a new task: a pre-created runner's when the pool has one, else a fresh one (ids.ts). */
  newTaskId(): string {
    const pooled = this.pool?.take();
    if (this.pool) this.refillWanted = true;
    return pooled ?? newTaskId();
  }

  /**
   * Tops up the pool this client takes from, a moment after the reply (see `refillWanted` and
   * RunnerPool.scheduleRefill); resolved at once when another request's refill is already on its way.
   */
  refill(): Promise<void> {
    return this.pool?.scheduleRefill(this.namespace) ?? Promise.resolve();
  }

  /** Whether tasks are indexed per principal (what the 2025-11-25 `tasks/list` reads). */
  get indexed(): boolean {
    return this.index !== undefined;
  }

  /**
   * Indexes the task under its principal first, then creates it: a task a client was told about is always listed
   * (an index entry whose create failed is dropped when a listing meets it).
   */
  async create(task: NewTask): Promise<Task | null> {
    const index = this.index;
    if (index) await this.retrying(task.taskId, () => taskIndexOf(index, task.principal).add(task.taskId, Date.now()));
    return this.call(task.taskId, (runner) => runner.create(task));
  }

  /** A page of the principal's index, newest first; empty without an index. */
  async indexPage(principal: string, after: IndexCursor | null, limit: number): Promise<IndexEntry[]> {
    const index = this.index;
    if (!index) return [];
    return this.retrying(principal, () => taskIndexOf(index, principal).page(after, limit));
  }

  async unindex(principal: string, taskId: string): Promise<void> {
    const index = this.index;
    if (index) await this.retrying(taskId, () => taskIndexOf(index, principal).remove(taskId));
  }

  get(access: TaskAccess, options?: { steps?: boolean }): Promise<DetailedTask | null> {
    return this.call(access.taskId, (runner) => runner.get(access, options));
  }

  getText(access: TaskAccess): Promise<TaskText | null> {
    return this.call(access.taskId, (runner) => runner.getText(access));
  }

  update(access: TaskAccess, responses: Record<string, unknown>): Promise<UpdateOutcome | null> {
    return this.call(access.taskId, (runner) => runner.update(access, responses));
  }

  cancel(access: TaskAccess): Promise<boolean> {
    return this.call(access.taskId, (runner) => runner.cancel(access));
  }

  inspect(access: TaskAccess): Promise<{ tool: string; task: DetailedTask } | null> {
    return this.call(access.taskId, (runner) => runner.inspect(access));
  }

  awaitSettled(access: TaskAccess, timeoutMs: number): Promise<DetailedTask | null> {
    return this.call(access.taskId, (runner) => runner.awaitSettled(access, timeoutMs));
  }

  watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null> {
    return this.call(access.taskId, (runner) => runner.watch(access));
  }

  /**
   * Retried like every call: a delivery that landed before a transient error is then sent again, and buffered a
   * second time if no wait took the first (at-least-once, as the docs say of sendEvent).
   */
  sendEvent(taskId: string, event: { type: string; payload: string }, principal?: string): Promise<EventOutcome> {
    return this.call(taskId, (runner) => runner.sendEvent(taskId, event, principal));
  }

  /** Retrying is safe here: the runner answers an identical repeat of a delivered body with its first answer. */
  deliverWebhook(taskId: string, hook: { hookId: string; type: string; payload: string }): Promise<WebhookAnswer> {
    return this.call(taskId, (runner) => runner.deliverWebhook(taskId, hook));
  }

  private call<T>(taskId: string, fn: (runner: TaskRunnerRpc) => Promise<T>): Promise<T> {
    return this.retrying(taskId, () =>
      fn(this.namespace.get(this.namespace.idFromName(taskId)) as unknown as TaskRunnerRpc),
    );
  }

  /** Runs `attempt` (which must get a fresh stub each time) again on transient errors. */
  private async retrying<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (!isTransient(error) || attempt >= this.retry.attempts) throw error;
        // An overloaded object gets four times the room to recover.
        const ceiling = backoffDelayMs("exponential", this.retry.baseDelayMs, attempt) * (isOverloaded(error) ? 4 : 1);
        const delay = equalJitter(ceiling);
        console.warn("TaskRunner call failed, retrying", {
          taskId,
          attempt,
          delayMs: Math.round(delay),
          error: String(error),
        });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

/**
 * The platform's transient-error markers on a Durable Object exception: `retryable` (e.g. the object was reset
 * by a deploy), `overloaded`, and `durableObjectReset` (what workerd sets when the object aborted mid-call).
 */
export function isTransient(error: unknown): boolean {
  const flags = error as { retryable?: unknown; overloaded?: unknown; durableObjectReset?: unknown } | null;
  return flags?.retryable === true || flags?.overloaded === true || flags?.durableObjectReset === true;
}

function isOverloaded(error: unknown): boolean {
  return (error as { overloaded?: unknown } | null)?.overloaded === true;
}
