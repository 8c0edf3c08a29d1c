import type { DurableObject } from "cloudflare:workers";

// The TaskLimiter's contract (task-limiter.ts implements it): one object per limit key holds that key's slot leases,
// its queue of waiting tasks and, for a rate limit, its window of recent creates. Runners and the create path hold a
// LimiterRpc stub; nothing else of the object is reached from outside.

/** What a runner asks for before a run executes. */
export interface SlotRequest {
  taskId: string;
  /** How many runs may hold a slot of this key at once (from the code; the latest request's value is used). */
  limit: number;
  /** Whose turn it is inside the key: principals (or a declared fairness key) take turns. */
  fairKey: string;
  /** Higher first, inside a fairness key's turn. */
  priority: number;
  /** How long a granted slot lasts without a renewal. */
  leaseMs: number;
  /** The TaskRunner binding the limiter wakes the task through when a slot frees. */
  runnerBinding: string;
}

/** A slot granted (held until `release`, or until its lease lapses unrenewed), or the task's place in the queue. */
export type SlotAnswer = { granted: true } | { granted: false; ahead: number };

/** A rate limit's answer: taken, or refused with how long until a create would be taken. */
export type RateAnswer = { taken: true } | { taken: false; retryAfterMs: number };

/** A queued rate limit's answer to a task about to start: counted (provisionally), or when to ask again. */
export type StartAnswer = { taken: true } | { taken: false; retryAfterMs: number; ahead: number };

/** What the operator API shows of one limit key. */
export interface LimiterStatus {
  /** The concurrency limit last requested (null: the key was used only as a rate limit). */
  limit: number | null;
  /** Slots held by running tasks, plus slots granted to a waiting task that has not claimed it yet. */
  inUse: number;
  queued: number;
  /** Tasks that had to wait for a slot, since the key was first used. */
  waits: number;
  /** How long the oldest waiting task has waited (null: none waits). */
  oldestWaitMs: number | null;
  /** Creates (or, for a queued rate limit, starts) counted in the rate window now (null: not a rate limit). */
  windowCount: number | null;
  /** Tasks waiting for a queued rate limit's window (0 for other keys). */
  rateWaiting: number;
}

export interface LimiterRpc {
  /** Takes a slot for a run, or queues the task (idempotent: asking again keeps its place and renews a held slot). */
  acquire(request: SlotRequest): Promise<SlotAnswer>;
  /** Extends a held slot's lease; false when the task holds none (it lapsed and went to another). */
  renew(taskId: string, leaseMs: number): Promise<boolean>;
  /** Gives the slot back and leaves the queue (a run ended, the task slept, finished or was cancelled). */
  release(taskId: string): Promise<void>;
  /** Counts one create against a rate limit of `limit` per `periodMs` (a sliding window: exact over any period). */
  take(limit: number, periodMs: number): Promise<RateAnswer>;
  /**
   * A queued rate limit: counts the start of `taskId` if fewer than `limit` started in the last `periodMs`, as a
   * provisional start leased for `leaseMs` (the task confirms when its first step began); else when to ask again.
   */
  startRate(request: { taskId: string; limit: number; periodMs: number; leaseMs: number }): Promise<StartAnswer>;
  /** Extends a provisional start's lease; false when it lapsed (the run must start no step). */
  renewStart(taskId: string, leaseMs: number): Promise<boolean>;
  /** Records when the task's first step began: its start leaves the window a period after that. */
  confirmStart(taskId: string, at: number): Promise<void>;
  status(): Promise<LimiterStatus>;
}

/** What a limiter calls on a TaskRunner when it grants a waiting task its slot: false when the task no longer wants it. */
export interface LimiterWakeRpc {
  limiterWake(taskId: string): Promise<boolean>;
}

/**
 * The TaskLimiter Durable Object class `durableMcp` returns (`mcp.TaskLimiter`): export it from the Worker under the
 * `class_name` of the binding `limits.binding` names (default "TASK_LIMITER"), as a SQLite class.
 * @example
 * ```ts
 * import { durableMcp, McpServer, type TaskLimiterClass } from "durable-mcp-server";
 *
 * const mcp = durableMcp(() => new McpServer({ name: "crawler", version: "1.0.0" }), {
 *   limits: { named: { "crawl-api": { concurrent: 5 } } },
 * });
 * export const TaskLimiter: TaskLimiterClass<unknown> = mcp.TaskLimiter;
 * ```
 */
export type TaskLimiterClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & LimiterRpc;

/** The limiter of a key: one object per key, named by it. */
export function limiterOf(namespace: DurableObjectNamespace, key: string): LimiterRpc {
  return namespace.get(namespace.idFromName(key)) as unknown as LimiterRpc;
}
