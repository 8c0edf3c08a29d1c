import type { ConcurrencyLimit, LimitFunction, TaskLimits } from "../runner/index.js";
import { toMilliseconds, type Duration } from "../steps/duration.js";

// `registerTask`'s fair-share options checked once, at registration: what can be known then is a TypeError naming the
// task; what depends on the input (a key function's answer) fails the task, or refuses the create, when it is used.

interface DeclaredConcurrency {
  limit: number | string;
  key?: unknown;
}

interface DeclaredLimits {
  concurrency?: DeclaredConcurrency | readonly DeclaredConcurrency[];
  rateLimit?: { limit: number; period: Duration; key?: unknown; queue?: unknown };
  priority?: unknown;
}

/** The most concurrency limits one task may be under (a run takes a slot of each, one limiter call apiece). */
export const MAX_CONCURRENCY_LIMITS = 4;

/** The shared limits each server's tasks name, by task: checked against the deployment's once both are known. */
const namedBy = new WeakMap<object, { task: string; name: string }[]>();

/**
 * A TypeError when a task of `server` names a shared limit that `named` (the deployment's `limits.named`) does not
 * declare. Called where the server is built, the first place both are visible (a task's registration does not know
 * the deployment).
 */
export function checkNamedLimits(server: object, named: Readonly<Record<string, unknown>>): void {
  for (const { task, name } of namedBy.get(server) ?? []) {
    if (!Object.hasOwn(named, name)) {
      const declared = Object.keys(named);
      throw new TypeError(
        `task "${task}": concurrency names limit "${name}", which durableMcp's limits.named does not declare ` +
          `(${declared.length === 0 ? "it declares none" : `declared: ${declared.map((n) => `"${n}"`).join(", ")}`})`,
      );
    }
  }
}

/** The task's limits as the runtime applies them; undefined when it declares none. */
export function taskLimitsOf(name: string, config: DeclaredLimits, server?: object): TaskLimits | undefined {
  const { concurrency, rateLimit, priority } = config;
  if (concurrency === undefined && rateLimit === undefined && priority === undefined) return undefined;
  const limits: TaskLimits = {};
  if (concurrency !== undefined) {
    const list = Array.isArray(concurrency) ? concurrency : [concurrency as DeclaredConcurrency];
    if (list.length === 0 || list.length > MAX_CONCURRENCY_LIMITS) {
      throw new TypeError(
        `task "${name}": concurrency lists 1 to ${MAX_CONCURRENCY_LIMITS} limits, got ${list.length}`,
      );
    }
    const parsed = list.map((one, i) =>
      concurrencyLimitOf(name, Array.isArray(concurrency) ? `concurrency[${i}]` : "concurrency", one),
    );
    limits.concurrency = Array.isArray(concurrency) ? parsed : parsed[0];
    if (server) {
      const names = parsed.flatMap((one) => ("named" in one ? [{ task: name, name: one.named }] : []));
      if (names.length > 0) namedBy.set(server, [...(namedBy.get(server) ?? []), ...names]);
    }
  }
  if (rateLimit !== undefined) {
    let periodMs: number;
    try {
      periodMs = toMilliseconds(rateLimit.period);
    } catch (error) {
      throw new TypeError(`task "${name}": rateLimit.period: ${(error as Error).message}`, { cause: error });
    }
    if (periodMs <= 0) throw new TypeError(`task "${name}": rateLimit.period must be longer than 0 ms`);
    if (rateLimit.queue !== undefined && typeof rateLimit.queue !== "boolean") {
      throw new TypeError(`task "${name}": rateLimit.queue must be true or false`);
    }
    limits.rateLimit = {
      limit: positiveInteger(name, "rateLimit.limit", rateLimit.limit),
      periodMs,
      key: optionalFunction(name, "rateLimit.key", rateLimit.key),
      queue: rateLimit.queue === true,
    };
  }
  limits.priority = optionalFunction(name, "priority", priority);
  return limits;
}

function concurrencyLimitOf(name: string, option: string, declared: DeclaredConcurrency): ConcurrencyLimit {
  if (typeof declared !== "object" || declared === null) {
    throw new TypeError(`task "${name}": ${option} must be { limit, key? }`);
  }
  const key = optionalFunction(name, `${option}.key`, declared.key);
  if (typeof declared.limit === "string" && declared.limit.length > 0) return { named: declared.limit, key };
  return { limit: positiveInteger(name, `${option}.limit`, declared.limit), key };
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
