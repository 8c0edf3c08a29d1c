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
  | "run_queued"
  | "slot_lost"
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
  | "task_paused"
  | "task_resumed"
  | "task_finished"
  | "task_expired"
  | "task_purged"
  | "replay_diverged"
  | "catalog_write_failed"
  | "catalog_tags_refused"
  | "replay_out_of_order"
  | "replay_unclaimed"
  | "replay_divergence_ignored"
  | "invoke_waiting"
  | "invoke_finished"
  | "invoke_timed_out"
  | "invoke_refused"
  | "child_notice_received"
  | "child_notice_dropped"
  | "child_cancel_dropped"
  | "outbox_retry";

/**
 * How much a TaskRunner logs. "problems" (the default): what an operator must act on or look into — every warning
 * and error line, and the end of a task that failed or returned a tool error; a task that goes well writes nothing.
 * "task": plus the lifecycle (created, each run's start and stop, the end of every task) and input; "all": plus
 * every step's start and finish; "none": nothing.
 * @example
 * ```ts
 * import type { TaskEventLevel } from "durable-mcp-server";
 *
 * const events: TaskEventLevel = "task";
 * ```
 */
export type TaskEventLevel = "all" | "task" | "problems" | "none";

/** The level a TaskRunner logs at when its options name none (docs/observability.md says why). */
export const DEFAULT_TASK_EVENT_LEVEL: TaskEventLevel = "problems";

const STEP_DETAIL: ReadonlySet<TaskEventName> = new Set([
  "step_started",
  "step_finished",
  "sleep_started",
  "sleep_finished",
]);
const ERRORS: ReadonlySet<TaskEventName> = new Set(["replay_diverged", "run_failed"]);
const WARNINGS: ReadonlySet<TaskEventName> = new Set([
  "slot_lost",
  "step_retry_scheduled",
  "step_failed",
  "input_timed_out",
  "event_timed_out",
  "event_refused",
  "input_unavailable",
  "task_expired",
  "catalog_write_failed",
  "catalog_tags_refused",
  "replay_out_of_order",
  "replay_unclaimed",
  "replay_divergence_ignored",
  "invoke_timed_out",
  "invoke_refused",
  "child_notice_dropped",
  "child_cancel_dropped",
  "outbox_retry",
]);

export type TaskEventFields = Record<string, string | number | boolean | null | undefined>;
export type TaskEventSink = (event: TaskEventName, fields?: TaskEventFields) => void;

/** Whether `level` writes this event: "problems" keeps warnings, errors and a task's end when it went wrong. */
function logged(level: TaskEventLevel, event: TaskEventName, fields: TaskEventFields): boolean {
  switch (level) {
    case "all":
      return true;
    case "task":
      return !STEP_DETAIL.has(event);
    case "problems":
      return (
        ERRORS.has(event) ||
        WARNINGS.has(event) ||
        (event === "task_finished" && (fields.status === "failed" || fields.isError === true))
      );
    case "none":
      return false;
  }
}

/** A sink that writes one JSON line per event for this task, at the given level. */
export function taskEventLog(level: TaskEventLevel, context: { taskId: string; tool: string }): TaskEventSink {
  return (event, fields = {}) => {
    if (!logged(level, event, fields)) return;
    const line = JSON.stringify({ event, taskId: context.taskId, tool: context.tool, ...fields });
    if (ERRORS.has(event)) console.error(line);
    else if (WARNINGS.has(event)) console.warn(line);
    else console.log(line);
  };
}
