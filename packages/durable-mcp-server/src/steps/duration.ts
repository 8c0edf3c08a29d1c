/**
 * A duration as Cloudflare Workflows accepts it: milliseconds, or "<n> <unit>" such as "10 seconds" (or "50 ms").
 * @example
 * ```ts
 * import type { Duration } from "durable-mcp-server";
 *
 * const short: Duration = 500;
 * const long: Duration = "2 hours";
 * ```
 */
export type Duration = number | `${number} ${DurationUnit}`;

export type DurationUnit =
  | "ms"
  | "millisecond"
  | "milliseconds"
  | "second"
  | "seconds"
  | "minute"
  | "minutes"
  | "hour"
  | "hours"
  | "day"
  | "days"
  | "week"
  | "weeks"
  | "month"
  | "months"
  | "year"
  | "years";

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
  // Workflows treats a month as 30 days and a year as 365 days.
  month: 2_592_000_000,
  year: 31_536_000_000,
};

/** Converts a Duration to milliseconds; throws a RangeError on anything it cannot read. */
export function toMilliseconds(duration: Duration): number {
  if (typeof duration === "number") {
    if (!Number.isFinite(duration) || duration < 0) {
      throw new RangeError(`duration must be a non-negative number of milliseconds, got ${duration}`);
    }
    return Math.floor(duration);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(String(duration));
  const name = match?.[2]!.toLowerCase() ?? "";
  // A unit as named ("ms"), or its plural ("seconds").
  const singular = name.endsWith("s") && name !== "ms" ? name.slice(0, -1) : undefined;
  const unit = UNIT_MS[name] ?? (singular && singular !== "ms" ? UNIT_MS[singular] : undefined);
  if (!match || unit === undefined) {
    throw new RangeError(`cannot read duration ${JSON.stringify(duration)}; use ms or e.g. "10 seconds"`);
  }
  return Math.floor(Number(match[1]) * unit);
}
