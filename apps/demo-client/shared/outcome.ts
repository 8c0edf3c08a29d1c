// What a task's snapshot means for a person: its state (a `completed` task whose result has `isError` failed), the
// kind of failure, how long it ran, and which steps were retried. Plain functions, shared by the page's cards and
// the run view, unit-tested in test/unit/outcome.test.ts.
import { FINAL_STATUSES, timelineOf, type TaskSnapshot, type TimelineStep } from "./mcp.ts";

export type DisplayState = "working" | "input_required" | "completed" | "failed" | "cancelled" | "unknown";

export interface Outcome {
  state: DisplayState;
  /** For a failed task: the tool reported an error (`isError` result) or the task failed at the protocol level. */
  failure?: "tool-error" | "protocol";
  /** The sub-label a card shows under a failed state. */
  detail?: string;
}

export function outcomeOf(snapshot: TaskSnapshot | undefined): Outcome {
  const status = snapshot?.status;
  if (!snapshot || !status) return { state: "unknown" };
  if (status === "completed" && snapshot.result?.isError === true) {
    // On the wire the task completed: its tool ran to the end and answered with an error result.
    return { state: "failed", failure: "tool-error", detail: "tool error: the tool answered with an error result" };
  }
  if (status === "failed") {
    const code = snapshot.error?.code;
    return {
      state: "failed",
      failure: "protocol",
      detail: `protocol failure: the task failed${code !== undefined ? ` (JSON-RPC error ${code})` : ""}`,
    };
  }
  if (status === "working" || status === "input_required" || status === "completed" || status === "cancelled") {
    return { state: status };
  }
  return { state: "unknown" };
}

/** From creation to the last update (final) or to `now` (live); undefined without timestamps. */
export function durationOf(snapshot: TaskSnapshot | undefined, now: number): number | undefined {
  const created = snapshot?.createdAt ? Date.parse(snapshot.createdAt) : NaN;
  if (Number.isNaN(created)) return undefined;
  const final = FINAL_STATUSES.has(snapshot!.status);
  const end = final && snapshot!.lastUpdatedAt ? Date.parse(snapshot!.lastUpdatedAt) : now;
  return Math.max(0, end - created);
}

/** A duration at the precision a person reads: ms under a second, then s, then min and s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

const TIMES = ["", "once", "twice"];

/** "statistics retried once", one phrase per `do` step that needed more than one attempt. */
export function retriesOf(steps: readonly TimelineStep[]): string[] {
  return steps
    .filter((step) => step.kind === "do" && step.attempts > 1)
    .map((step) => {
      const retries = step.attempts - 1;
      return `${step.name} retried ${TIMES[retries] ?? `${retries} times`}`;
    });
}

/** The retry phrases of a snapshot's timeline (none without one). */
export function retriesOfSnapshot(snapshot: TaskSnapshot | undefined): string[] {
  const timeline = snapshot ? timelineOf(snapshot) : undefined;
  return timeline ? retriesOf(timeline.steps) : [];
}
