import { backoffDelayMs, type Backoff } from "../util/backoff.js";
import { toMilliseconds, type Duration } from "./duration.js";

export type { Backoff };

/**
 * Per-step configuration, shaped like Cloudflare Workflows' `WorkflowStepConfig`.
 * @example
 * ```ts
 * import type { StepConfig } from "durable-mcp-server";
 *
 * const config: StepConfig = {
 *   retries: { limit: 5, delay: "1 second", backoff: "exponential" },
 *   timeout: "30 seconds",
 * };
 * ```
 */
export interface StepConfig {
  retries?: { limit: number; delay: Duration; backoff?: Backoff };
  timeout?: Duration;
}

/** Workflows' documented defaults: 5 retries, 10 s, exponential; 10-minute attempt timeout. */
export const DEFAULT_STEP_CONFIG = {
  retries: { limit: 5, delay: 10_000, backoff: "exponential" },
  timeout: 600_000,
} as const satisfies StepConfig;

export interface ResolvedStepConfig {
  limit: number;
  delayMs: number;
  backoff: Backoff;
  timeoutMs: number;
}

/** The defaults resolved once: most steps pass no config, and this runs for every step. */
let defaultResolved: ResolvedStepConfig | undefined;

export function resolveStepConfig(config: StepConfig | undefined): ResolvedStepConfig {
  if (config === undefined) return (defaultResolved ??= resolve(undefined));
  return resolve(config);
}

function resolve(config: StepConfig | undefined): ResolvedStepConfig {
  const retries = config?.retries ?? DEFAULT_STEP_CONFIG.retries;
  if (!Number.isInteger(retries.limit) || retries.limit < 0) {
    throw new RangeError(`retries.limit must be a non-negative integer, got ${retries.limit}`);
  }
  return {
    limit: retries.limit,
    delayMs: toMilliseconds(retries.delay),
    backoff: retries.backoff ?? "exponential",
    timeoutMs: toMilliseconds(config?.timeout ?? DEFAULT_STEP_CONFIG.timeout),
  };
}

/** Wait before attempt `failedAttempt + 1`, where attempts count from 1. */
export function retryDelayMs(config: ResolvedStepConfig, failedAttempt: number): number {
  return backoffDelayMs(config.backoff, config.delayMs, failedAttempt);
}
