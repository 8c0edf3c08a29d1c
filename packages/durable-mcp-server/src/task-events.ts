/**
 * Structured task events: one JSON log line each, carrying the task id, tool, step and attempt, so that
 * `wrangler tail` or Workers Logs can follow one task (filter on `taskId`).
 */
export type TaskEventName =
  | "task_created"
  | "run_started"
  | "run_suspended"
  | "run_handed_off"
  | "run_failed"
  | "step_started"
  | "step_finished"
  | "step_retry_scheduled"
  | "step_failed"
  | "step_result_spilled"
  | "sleep_started"
  | "sleep_finished"
  | "input_requested"
  | "input_answered"
  | "input_timed_out"
  | "event_waiting"
  | "event_received"
  | "event_timed_out"
  | "event_delivered"
  | "event_buffered"
  | "event_refused"
  | "webhook_created"
  | "patch_applied"
  | "input_unavailable"
  | "task_cancelled"
  | "task_finished"
  | "task_expired"
  | "task_purged"
  | "replay_diverged";

/** "task" (default): lifecycle, retries, failures, input; "all": plus every step's start and finish; "none". */
export type TaskEventLevel = "all" | "task" | "none";

const STEP_DETAIL: ReadonlySet<TaskEventName> = new Set([
  "step_started",
  "step_finished",
  "sleep_started",
  "sleep_finished",
]);
const ERRORS: ReadonlySet<TaskEventName> = new Set(["replay_diverged", "run_failed"]);
const WARNINGS: ReadonlySet<TaskEventName> = new Set([
  "step_retry_scheduled",
  "step_failed",
  "input_timed_out",
  "event_timed_out",
  "event_refused",
  "input_unavailable",
  "task_expired",
]);

export type TaskEventFields = Record<string, string | number | boolean | null | undefined>;
export type TaskEventSink = (event: TaskEventName, fields?: TaskEventFields) => void;

/** A sink that writes one JSON line per event for this task, at the given level. */
export function taskEventLog(level: TaskEventLevel, context: { taskId: string; tool: string }): TaskEventSink {
  return (event, fields = {}) => {
    if (level === "none" || (level === "task" && STEP_DETAIL.has(event))) return;
    const line = JSON.stringify({ event, taskId: context.taskId, tool: context.tool, ...fields });
    if (ERRORS.has(event)) console.error(line);
    else if (WARNINGS.has(event)) console.warn(line);
    else console.log(line);
  };
}
