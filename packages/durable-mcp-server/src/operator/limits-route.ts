import { limiterOf, type LimiterStatus } from "../limiter/index.js";
import { MAX_LIMIT_KEY_LENGTH } from "../limits.js";
import { OperatorError } from "./operator-errors.js";

// GET <operator>/limits: queue depth, slots in use and waits of limit keys, read from their TaskLimiters. Keys cannot
// be listed (one object each, named by its key), so the answer covers the deployment's named limits plus the keys and
// principals the query names.

/** What the operator API knows of the deployment's limits. */
export interface OperatorLimits {
  /** The TaskLimiter namespace, or undefined when the env binds none. */
  namespace: DurableObjectNamespace | undefined;
  /** The shared named limits (their keys are `named:<name>`). */
  named: readonly string[];
}

/** Keys one request may read: each is one limiter call. */
export const MAX_LIMIT_KEYS_PER_READ = 50;

/** The limits view: `key=` (repeatable) and `principal=` (its `principal:` and `rate:principal:` keys). */
export async function serveLimits(params: URLSearchParams, limits: OperatorLimits | undefined): Promise<unknown> {
  for (const name of params.keys()) {
    if (name !== "key" && name !== "principal") {
      throw new OperatorError(
        400,
        "unknown_filter",
        `unknown parameter "${name.slice(0, 64)}" here`,
        name.slice(0, 64),
      );
    }
  }
  const namespace = limits?.namespace;
  if (!namespace) return { limiter: "off", limits: [] };
  const keys = new Set(limits.named.map((name) => `named:${name}`));
  for (const key of params.getAll("key")) keys.add(key);
  for (const principal of params.getAll("principal")) {
    keys.add(`principal:${principal}`);
    keys.add(`rate:principal:${principal}`);
  }
  for (const key of keys) {
    if (key.length === 0 || key.length > MAX_LIMIT_KEY_LENGTH + 64) {
      throw new OperatorError(400, "invalid_filter", "a limit key is 1 to 320 characters", "key");
    }
  }
  if (keys.size > MAX_LIMIT_KEYS_PER_READ) {
    throw new OperatorError(400, "page_too_large", `at most ${MAX_LIMIT_KEYS_PER_READ} keys per read`, "key");
  }
  const statuses = await Promise.all(
    [...keys].map(async (key): Promise<LimiterStatus & { key: string }> => ({
      key,
      ...(await limiterOf(namespace, key).status()),
    })),
  );
  return { limiter: "on", limits: statuses };
}
