import type { JsonRpcErrorObject } from "../errors/errors.js";
import type { StepRecord } from "../steps/journal.js";
import type { TaskRecord, TaskStatus } from "../runner/task-store.js";

/** The flat `Task` of SEP-2663. */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  _meta?: Record<string, unknown>;
}

export interface InputRequestEntry {
  method: string;
  params: Record<string, unknown>;
}

/** A Task plus what its status carries: input requests, the tool result, or the error. */
export interface DetailedTask extends Task {
  inputRequests?: Record<string, InputRequestEntry>;
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
}

export type CreateTaskResult = Task & { resultType: "task" };
export type GetTaskResult = DetailedTask & { resultType: "complete" };

/** Progress reported by `step.status(..., { progress })`, carried in `_meta` under this key. */
export const PROGRESS_META = "durable-mcp-server/progress";
/**
 * A `tasks/get` whose `_meta` sets this to true gets the step timeline back under the same key of the result's
 * `_meta`: `{ total, steps: [{ name, kind, state, attempts, startedAt, updatedAt, durationMs }] }` (the last 500).
 */
export const STEPS_META = "durable-mcp-server/steps";
export const TIMELINE_LIMIT = 500;

export function toTask(record: TaskRecord): Task {
  const task: Task = {
    taskId: record.taskId,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    ttlMs: record.ttlMs,
  };
  if (record.statusMessage !== null) task.statusMessage = record.statusMessage;
  if (record.pollIntervalMs !== null) task.pollIntervalMs = record.pollIntervalMs;
  if (record.progress !== null) task._meta = { [PROGRESS_META]: record.progress };
  return task;
}

export function toDetailedTask(record: TaskRecord, pendingInputs: readonly StepRecord[]): DetailedTask {
  const task: DetailedTask = toTask(record);
  if (record.status === "input_required") {
    task.inputRequests = Object.fromEntries(
      pendingInputs.map((step) => [step.name, JSON.parse(step.request ?? "{}") as InputRequestEntry]),
    );
  } else if (record.status === "completed" && record.result !== null) {
    // The inlined result is the complete 2026-07-28 CallToolResult, resultType included.
    task.result = { ...(JSON.parse(record.result) as Record<string, unknown>), resultType: "complete" };
  } else if (record.status === "failed" && record.error !== null) {
    task.error = JSON.parse(record.error) as JsonRpcErrorObject;
  }
  return task;
}
