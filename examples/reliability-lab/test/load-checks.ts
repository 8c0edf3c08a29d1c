// The load suite's verdict on one step: do the counter's hits for it show every effect exactly once per attempt, with
// no crash? A pure function, so that load-checks.test.ts can show it failing on each record that breaks the rule.
import { COUNTER_REPORT_ERROR } from "../src/lab.ts";
import type { Task } from "@durable-mcp/test-harness";

/** One attempt of a `do` step as the task's step timeline shows it (AttemptHistoryEntry in the library). */
export interface AttemptEntry {
  n: number;
  startedAt: string;
  endedAt: string | null;
  error?: { name: string; message: string };
}

/** The timeline's `attemptHistory` of every `do` step of `task` (a tasks/get asked with `steps`), by step name. */
export function attemptHistories(task: Task | undefined): Map<string, AttemptEntry[]> {
  const timeline = task?._meta?.["durable-mcp-server/steps"] as
    | { steps?: { name: string; attemptHistory?: AttemptEntry[] }[] }
    | undefined;
  const byStep = new Map<string, AttemptEntry[]>();
  for (const step of timeline?.steps ?? []) if (step.attemptHistory) byStep.set(step.name, step.attemptHistory);
  return byStep;
}

/** An attempt history as a problem line shows it: `#1 ended "…" failed: CounterReportError: …; #2 ended`. */
export function describeHistory(history: AttemptEntry[] | undefined): string {
  if (!history) return "no attempt history in the timeline";
  if (history.length === 0) return "empty attempt history";
  return history
    .map((a) => {
      const end = a.endedAt === null ? "never ended (running when the run stopped)" : "ended";
      return `#${a.n} ${end}${a.error ? ` failed: ${a.error.name}: ${a.error.message}` : ""}`;
    })
    .join("; ");
}

/**
 * An attempt whose own report to the counter failed: it ended (it was not cut short) and failed with the error
 * report() throws exactly when the counter did not answer 2xx (COUNTER_REPORT_ERROR, by name; no other code throws
 * an error of that name). Its effect is absent from the counter, or there once when only the answer was lost.
 */
const reportFailed = (attempt: AttemptEntry) =>
  attempt.endedAt !== null && attempt.error?.name === COUNTER_REPORT_ERROR;

/**
 * Checks the attempts the counter recorded for one step (in arrival order) against `wanted`, the patterns its role
 * allows with no crash and no failed report (e.g. [[1]] for a plain step, [[1, 2]] for one that fails its first
 * attempt by design, [[], [1]] for one a cancel may come before). When the record is not one of them, it is right
 * only if the step's `history` explains it by failed reports (reportFailed) alone:
 * - the history is whole (attempts 1…n) and nothing in it was cut short: every attempt but the last ended, and the
 *   last did too unless the role allows the step not to run (a cancel may stop it mid-body);
 * - every attempt but the last failed (a step that succeeded never runs again);
 * - the counter saw exactly the attempts that did not fail their report, in order, and a failed report's hit at most
 *   once (its answer may be what was lost);
 * - the attempts that did not fail their report are no more than the longest wanted pattern, and those of them that
 *   failed no more than the failures it plans (a failed report uses up an attempt: a step that fails attempt 1 by
 *   design and whose attempt 1 lost its report succeeds as attempt 2).
 * Anything else, e.g. an attempt journaled `running` and then replayed without a kill, is a problem: returned as a
 * line with the step's attempt history. Null when the record is right.
 */
export function judgeStep(
  name: string,
  attempts: number[],
  wanted: number[][],
  history: AttemptEntry[] | undefined,
): string | null {
  const matches = (list: number[]) => wanted.some((want) => JSON.stringify(want) === JSON.stringify(list));
  if (matches(attempts)) return null;
  const problem = (why: string) =>
    `"${name}" ran as attempts ${JSON.stringify(attempts)}, expected ${JSON.stringify(wanted)}${why}; history: ` +
    describeHistory(history);
  const failedReports = (history ?? []).filter(reportFailed).map((a) => a.n);
  if (!history || failedReports.length === 0) return problem("");
  const excused = new Set(failedReports);
  const last = history.length - 1;
  const mayStopMidBody = wanted.some((want) => want.length === 0);
  const whole = history.every((a, i) => a.n === i + 1);
  const cut = history.some((a, i) => a.endedAt === null && (i < last || !mayStopMidBody));
  const rerun = history.some((a, i) => i < last && !a.error);
  const seen = attempts.filter((n) => excused.has(n));
  const rest = attempts.filter((n) => !excused.has(n));
  const reported = history.filter((a) => !excused.has(a.n));
  const longest = Math.max(...wanted.map((want) => want.length));
  const designFailures = reported.filter((a, i) => a.error && i < reported.length - 1).length;
  if (
    whole &&
    !cut &&
    !rerun &&
    new Set(seen).size === seen.length &&
    JSON.stringify(rest) === JSON.stringify(reported.map((a) => a.n)) &&
    reported.length <= longest &&
    designFailures <= Math.max(0, longest - 1)
  ) {
    return null;
  }
  return problem(` (not explained by the failed reports ${JSON.stringify(failedReports)})`);
}
