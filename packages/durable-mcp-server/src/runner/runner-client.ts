import { backoffDelayMs, equalJitter } from "../util/backoff.js";
import type { EventOutcome, WebhookAnswer } from "./event-inbox.js";
import type { TaskAccess, TaskRunnerRpc, UpdateOutcome } from "./task-runner.js";
import type { NewTask } from "./task-store.js";
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
  ) {}

  create(task: NewTask): Promise<Task | null> {
    return this.call(task.taskId, (runner) => runner.create(task));
  }

  get(access: TaskAccess, options?: { steps?: boolean }): Promise<DetailedTask | null> {
    return this.call(access.taskId, (runner) => runner.get(access, options));
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

  private async call<T>(taskId: string, fn: (runner: TaskRunnerRpc) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const runner = this.namespace.get(this.namespace.idFromName(taskId)) as unknown as TaskRunnerRpc;
      try {
        return await fn(runner);
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
