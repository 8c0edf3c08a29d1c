/**
 * Back-off: how long to wait before trying again. The one formula behind a step's retry policy (`step.do` with
 * `retries`, shaped like Cloudflare Workflows') and the router's retries of transient Durable Object errors. The
 * platform has no back-off helper to use instead; Workflows applies the same three kinds to its own steps.
 */

/**
 * How the delay between retries grows: the same each time, by the delay each time, or doubling each time.
 * @example
 * ```ts
 * import type { Backoff } from "durable-mcp-server";
 *
 * const backoff: Backoff = "exponential";
 * ```
 */
export type Backoff = "constant" | "linear" | "exponential";

/**
 * The wait after failed attempt `attempt` (attempts count from 1): `baseMs`, `baseMs × attempt`, or
 * `baseMs × 2^(attempt − 1)`.
 */
export function backoffDelayMs(kind: Backoff, baseMs: number, attempt: number): number {
  switch (kind) {
    case "constant":
      return baseMs;
    case "linear":
      return baseMs * attempt;
    case "exponential":
      return baseMs * 2 ** (attempt - 1);
  }
}

/**
 * "Equal jitter": a uniform draw between ceiling / 2 and ceiling, so that callers retrying together spread out but
 * none retries at once. `random` is injectable for tests.
 */
export function equalJitter(ceilingMs: number, random: () => number = Math.random): number {
  return ceilingMs / 2 + random() * (ceilingMs / 2);
}
