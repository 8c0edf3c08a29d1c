import { backoffDelayMs, equalJitter } from "../util/backoff.js";
import { catalogListPage } from "../catalog/task-list.js";
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
  type LifecycleOutcome,
  type RestartPlan,
  type RestartRequest,
  type RestartSeed,
  type ChildEntry,
  type TaskLimits,
} from "../runner/index.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 40 };

/**
 * Where a deployment's 2025-11-25 `tasks/list` comes from, and whose lists it keeps: each principal's, or each 2025
 * session's (only creates made in a session). With a task `catalog` (D1), lists are read from it and nothing is
 * written at create (the runner files its row, and its session, off the reply's path); without one, from the
 * TaskIndex `namespace`, written before every create.
 */
export interface TaskIndexBinding {
  namespace?: DurableObjectNamespace;
  catalog?: D1Database;
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
    const index = this.index;
    return index && (index.catalog || index.namespace) ? index.scope : undefined;
  }

  /** Whether lists are read from the task catalog (nothing indexed at create; a listed id is a row the runner wrote). */
  get listsFromCatalog(): boolean {
    return this.index?.catalog !== undefined;
  }

  /**
   * Creates the task. With lists from the catalog, that is all: the runner files the task's row (and, for a
   * per-session list, `session`) off the reply's path, so a new task is listed a moment after its create returns.
   * With a TaskIndex, indexes the task first: a task a client was told about is always listed (a listing skips an
   * entry whose task does not exist yet, and drops it only once its create can no longer land: INDEX_PENDING_MS).
   * Indexed under its principal, or, when lists are per session, under `session` (not at all without one). Throws
   * RateLimitedError when a rate limit (the task's `limits`, the deployment's per principal) refuses it.
   */
  async create(task: NewTask, session?: IndexScope["session"], limits?: TaskLimits): Promise<Task | null> {
    // Counted before anything is written: a refused create (RateLimitedError) leaves no trace but its count.
    await countCreate(this.createLimits, limits?.rateLimit, task);
    const index = this.index;
    if (index?.catalog) {
      const filed: NewTask =
        index.scope === "session" && session
          ? { ...task, listSession: { id: session.id, expiresAt: session.expiresAt } }
          : task;
      return this.call(task.taskId, (runner) => runner.create(filed));
    }
    const namespace = index?.namespace;
    const scope: IndexScope | undefined =
      index?.scope === "principal"
        ? { principal: task.principal }
        : session
          ? { principal: task.principal, session }
          : undefined;
    if (namespace && scope) {
      await this.retrying(task.taskId, () =>
        taskIndexOf(namespace, scope).add(task.taskId, Date.now(), scope.session?.expiresAt),
      );
    }
    return this.call(task.taskId, (runner) => runner.create(task));
  }

  /**
   * A page of one list, newest first (`indexedAt`: when indexed, or from the catalog, when created); empty without
   * a list.
   */
  async indexPage(scope: IndexScope, after: IndexCursor | null, limit: number): Promise<IndexEntry[]> {
    const catalog = this.index?.catalog;
    if (catalog) {
      const entries = await catalogListPage(
        catalog,
        { principal: scope.principal, ...(scope.session ? { sessionId: scope.session.id } : {}) },
        after && { createdAt: after.indexedAt, taskId: after.taskId },
        limit,
        Date.now(),
      );
      return entries.map((entry) => ({ taskId: entry.taskId, indexedAt: entry.createdAt }));
    }
    const namespace = this.index?.namespace;
    if (!namespace) return [];
    return this.retrying(scope.principal, () => taskIndexOf(namespace, scope).page(after, limit));
  }

  async unindex(scope: IndexScope, taskId: string): Promise<void> {
    const namespace = this.index?.namespace;
    if (namespace && !this.index?.catalog)
      await this.retrying(taskId, () => taskIndexOf(namespace, scope).remove(taskId));
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

  pause(access: TaskAccess): Promise<LifecycleOutcome | null> {
    return this.call(access.taskId, (runner) => runner.pause(access));
  }

  resume(access: TaskAccess): Promise<LifecycleOutcome | null> {
    return this.call(access.taskId, (runner) => runner.resume(access));
  }

  /** Retrying is safe: the same request key finds the same link and the same new task id. */
  planRestart(access: TaskAccess, request: RestartRequest): Promise<RestartPlan | null> {
    return this.call(access.taskId, (runner) => runner.planRestart(access, request));
  }

  /**
   * Seeded as `create` creates: with lists from the catalog the runner files its row; with a per-principal TaskIndex,
   * indexed first. A repeat joins the task seeded already.
   */
  async seedRestart(seed: RestartSeed): Promise<Task | null> {
    const namespace = this.index?.catalog ? undefined : this.index?.namespace;
    if (namespace && this.index?.scope === "principal") {
      const scope = { principal: seed.task.principal };
      await this.retrying(seed.task.taskId, () => taskIndexOf(namespace, scope).add(seed.task.taskId, Date.now()));
    }
    return this.call(seed.task.taskId, (runner) => runner.seedRestart(seed));
  }

  confirmRestart(access: TaskAccess, restartedAs: string): Promise<boolean> {
    return this.call(access.taskId, (runner) => runner.confirmRestart(access, restartedAs));
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

  /** The children task `taskId` started (`step.invoke`), as its runner keeps them; null when unknown or foreign. */
  children(taskId: string, principal?: string): Promise<ChildEntry[] | null> {
    return this.call(taskId, (runner) => runner.children(taskId, principal));
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
