import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { toolErrorResult } from "../errors/envelope.js";
import { limiterOf } from "../limiter/index.js";
import { LimitRefusal, rateKeyOf, type TaskLimits } from "../runner/index.js";
import type { NewTask } from "../runner/index.js";

// Rate limits on creating tasks: a task's own `rateLimit` and the deployment's `perPrincipal.createsPerMinute`, each
// counted by the TaskLimiter of its key in a sliding window (one limiter call per limit that applies).

/** What a create is counted against besides the task's own `rateLimit`. */
export interface CreateLimits {
  /** The TaskLimiter binding's namespace (undefined: not bound in this env). */
  namespace: DurableObjectNamespace | undefined;
  /** Creates per minute per principal, over all task tools (null: none). */
  createsPerMinute: number | null;
}

/** A create refused by a rate limit: repairable by waiting `retryAfterMs`. */
export class RateLimitedError extends Error {
  constructor(
    readonly limitKey: string,
    readonly retryAfterMs: number,
  ) {
    super(`Too many tasks created: ${limitKey} allows no more for ${Math.ceil(retryAfterMs / 1000)} s`);
  }

  /** `retryAfter` in whole seconds (rounded up, as HTTP's Retry-After), and in milliseconds. */
  get data(): { reason: "rate_limited"; limit: string; retryAfter: number; retryAfterMs: number } {
    const retryAfter = Math.ceil(this.retryAfterMs / 1000);
    return { reason: "rate_limited", limit: this.limitKey, retryAfter, retryAfterMs: this.retryAfterMs };
  }

  /** For a client that declares the Tasks extension: a JSON-RPC error carrying the wait. */
  toProtocolError(): ProtocolError {
    return new ProtocolError(ProtocolErrorCode.InvalidRequest, this.message, this.data);
  }

  /** For the fallback (no Tasks extension): the repairable envelope as an `isError` result. */
  toToolResult(): ReturnType<typeof toolErrorResult> {
    const { retryAfter } = this.data;
    return toolErrorResult({
      code: "rate_limited",
      message: this.message,
      retryable: true,
      recoveryHint: `Call the tool again in ${retryAfter} s.`,
      details: this.data,
    });
  }
}

/** Counts a create against every rate limit that applies; throws RateLimitedError when one is full. */
export async function countCreate(
  limits: CreateLimits | undefined,
  own: TaskLimits["rateLimit"] | undefined,
  task: Pick<NewTask, "tool" | "principal" | "input">,
): Promise<void> {
  const counted: { key: string; limit: number; periodMs: number }[] = [];
  // A queued rate limit counts starts, on the runner (runner/rate-start.ts), not creates.
  if (own && !own.queue) {
    let key: string;
    try {
      key = rateKeyOf(own, task);
    } catch (error) {
      if (!(error instanceof LimitRefusal)) throw error;
      throw new ProtocolError(ProtocolErrorCode.InternalError, error.message, { reason: error.reason });
    }
    counted.push({ key, limit: own.limit, periodMs: own.periodMs });
  }
  if (limits?.createsPerMinute) {
    counted.push({ key: `rate:principal:${task.principal}`, limit: limits.createsPerMinute, periodMs: 60_000 });
  }
  if (counted.length === 0) return;
  const namespace = limits?.namespace;
  if (!namespace) {
    throw new ProtocolError(ProtocolErrorCode.InternalError, "rate limits need a TaskLimiter binding", {
      reason: "limits_unbound",
    });
  }
  // In order, the task's own first: a create refused by a later limit still counts in an earlier one (docs/limits.md).
  for (const { key, limit, periodMs } of counted) {
    const answer = await limiterOf(namespace, key).take(limit, periodMs);
    if (!answer.taken) throw new RateLimitedError(key, answer.retryAfterMs);
  }
}
