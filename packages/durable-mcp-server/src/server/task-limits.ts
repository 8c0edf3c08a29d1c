import type { LimitFunction, TaskLimits } from "../runner/index.js";
import { toMilliseconds, type Duration } from "../steps/duration.js";

// `registerTask`'s fair-share options checked once, at registration: what can be known then is a TypeError naming the
// task; what depends on the input (a key function's answer) fails the task, or refuses the create, when it is used.

interface DeclaredLimits {
  concurrency?: { limit: number | string; key?: unknown };
  rateLimit?: { limit: number; period: Duration; key?: unknown };
  priority?: unknown;
}

/** The task's limits as the runtime applies them; undefined when it declares none. */
export function taskLimitsOf(name: string, config: DeclaredLimits): TaskLimits | undefined {
  const { concurrency, rateLimit, priority } = config;
  if (concurrency === undefined && rateLimit === undefined && priority === undefined) return undefined;
  const limits: TaskLimits = {};
  if (concurrency !== undefined) {
    const key = optionalFunction(name, "concurrency.key", concurrency.key);
    limits.concurrency =
      typeof concurrency.limit === "string" && concurrency.limit.length > 0
        ? { named: concurrency.limit, key }
        : { limit: positiveInteger(name, "concurrency.limit", concurrency.limit), key };
  }
  if (rateLimit !== undefined) {
    let periodMs: number;
    try {
      periodMs = toMilliseconds(rateLimit.period);
    } catch (error) {
      throw new TypeError(`task "${name}": rateLimit.period: ${(error as Error).message}`, { cause: error });
    }
    if (periodMs <= 0) throw new TypeError(`task "${name}": rateLimit.period must be longer than 0 ms`);
    limits.rateLimit = {
      limit: positiveInteger(name, "rateLimit.limit", rateLimit.limit),
      periodMs,
      key: optionalFunction(name, "rateLimit.key", rateLimit.key),
    };
  }
  limits.priority = optionalFunction(name, "priority", priority);
  return limits;
}

/** A count of a limit: a positive integer, else a TypeError naming the task and the option. */
export function positiveInteger(owner: string, option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new TypeError(
      `${owner.startsWith("durableMcp") ? owner : `task "${owner}"`}: ${option} must be a positive integer, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function optionalFunction(name: string, option: string, value: unknown): LimitFunction | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") throw new TypeError(`task "${name}": ${option} must be a function`);
  return value as LimitFunction;
}
