import { backoffDelayMs, equalJitter } from "../util/backoff.js";
import { newTaskId } from "../ids.js";
import type { RunnerPool } from "./runner-pool.js";
import { countCreate, type CreateLimits } from "./create-limits.js";
import {
  taskIndexOf,
  type IndexCursor,
  type IndexEntry,
  type IndexScope,
  type EventOutcome,
  type WebhookAnswer,
  type TaskAccess,
  type TaskRunnerRpc,
  type TooManyStreams,
  type UpdateOutcome,
  type NewTask,
  type TaskText,
  type HistoryExport,
  type TaskLimits,
} from "../runner/index.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 40 };

/**
 * The task index a deployment lists from (the 2025-11-25 `tasks/list`): its TaskIndex namespace, and whose lists it
 * keeps: each principal's (every create is indexed), or each 2025 session's (only creates made in a session).
 */
export interface TaskIndexBinding {
  namespace: DurableObjectNamespace;
  scope: "principal" | "session";
}

/**
 * Reaches the TaskRunner of a task id. Transient Durable Object errors the platform marks as such (see
 * `isTransient`) are retried with jittered exponential backoff on a fresh stub, since a
 * stub that threw may be broken. Nothing else is retried.
 */
export class RunnerClient {
  constructor(
    private readonly namespace: DurableObjectNamespace,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    /** The task index (TaskIndex), when the deployment binds one and serves `tasks/list`. */
    private readonly index?: TaskIndexBinding,
    /** The isolate's pre-created runners, when the request can refill them after its reply (routing/). */
    private readonly pool?: RunnerPool,
    /** What creates are counted against (rate limits), when the deployment declares limits. */
    private readonly createLimits?: CreateLimits,
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

  /** Whose lists the 2025-11-25 `tasks/list` reads: each principal's, each session's, or none (not served). */
  get listScope(): "principal" | "session" | undefined {
    return this.index?.scope;
  }

  /**
   * Indexes the task first, then creates it: a task a client was told about is always listed (a listing skips an
   * entry whose task does not exist yet, and drops it only once its create can no longer land: INDEX_PENDING_MS).
   * Indexed under its principal, or, when lists are per session, under `session` (not at all without one). Throws
   * RateLimitedError when a rate limit (the task's `limits`, the deployment's per principal) refuses it.
   */
  async create(task: NewTask, session?: IndexScope["session"], limits?: TaskLimits): Promise<Task | null> {
    // Counted before anything is written: a refused create (RateLimitedError) leaves no trace but its count.
    await countCreate(this.createLimits, limits?.rateLimit, task);
    const index = this.index;
    const scope: IndexScope | undefined =
      index?.scope === "principal"
        ? { principal: task.principal }
        : session
          ? { principal: task.principal, session }
          : undefined;
    if (index && scope) {
      await this.retrying(task.taskId, () =>
        taskIndexOf(index.namespace, scope).add(task.taskId, Date.now(), scope.session?.expiresAt),
      );
    }
    return this.call(task.taskId, (runner) => runner.create(task));
  }

  /** A page of one list, newest first; empty without an index. */
  async indexPage(scope: IndexScope, after: IndexCursor | null, limit: number): Promise<IndexEntry[]> {
    const index = this.index;
    if (!index) return [];
    return this.retrying(scope.principal, () => taskIndexOf(index.namespace, scope).page(after, limit));
  }

  async unindex(scope: IndexScope, taskId: string): Promise<void> {
    const index = this.index;
    if (index) await this.retrying(taskId, () => taskIndexOf(index.namespace, scope).remove(taskId));
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

  watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null | TooManyStreams> {
    return this.call(access.taskId, (runner) => runner.watch(access));
  }

  /**
   * Retried like every call: a delivery that landed before a transient error is then sent again, and buffered a
   * second time if no wait took the first (at-least-once, as the docs say of sendEvent).
   */
  sendEvent(taskId: string, event: { type: string; payload: string }, principal?: string): Promise<EventOutcome> {
    return this.call(taskId, (runner) => runner.sendEvent(taskId, event, principal));
  }

  /** A read: retried like every call. */
  exportHistory(taskId: string, principal?: string): Promise<HistoryExport> {
    return this.call(taskId, (runner) => runner.exportHistory(taskId, principal));
  }

  /** Retrying is safe here: the runner answers an identical repeat of a delivered body with its first answer. */
  deliverWebhook(taskId: string, hook: { hookId: string; type: string; payload: string }): Promise<WebhookAnswer> {
    return this.call(taskId, (runner) => runner.deliverWebhook(taskId, hook));
  }

  /** Writes the task's catalog row again from its runner (reconcile); "gone" when the runner holds no such task. */
  refreshCatalog(taskId: string): Promise<"refreshed" | "gone" | "off"> {
    return this.call(taskId, (runner) => runner.refreshCatalog(taskId));
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
