import type { JsonRpcErrorObject } from "../errors/jsonrpc.js";
import { stepLabel, type StepRecord } from "../steps/step-record.js";
import { LINKS_META, PROGRESS_META } from "../wire/meta-keys.js";
import type { DetailedTask, InputRequestEntry, Task } from "../wire/task-shapes.js";
import { linksView } from "./task-links.js";
import type { TaskRecord } from "./task-store.js";

// The runner's durable record as the wire's Task (tasks/get, tasks/update, tasks/cancel, the create answer). It
// lives beside the record it reads; wire/ holds only the shapes. (The handle a client without the extension sees
// is built from this DetailedTask by fallback/task-view.ts.)

export function toTask(record: TaskRecord): Task {
  const task: Task = {
    taskId: record.taskId,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    ttlMs: record.ttlMs,
  };
  // A paused task reads `working` with a message that says so; input_required stays as it is.
  const message = liveMessage(record);
  if (message !== null) task.statusMessage = message;
  if (record.pollIntervalMs !== null) task.pollIntervalMs = record.pollIntervalMs;
  if (record.progress !== null) task._meta = { [PROGRESS_META]: record.progress };
  if (record.links !== null) task._meta = { ...task._meta, [LINKS_META]: linksView(record.links) };
  return task;
}

export function toDetailedTask(record: TaskRecord, pendingInputs: readonly StepRecord[]): DetailedTask {
  const task: DetailedTask = toTask(record);
  if (record.status === "input_required") {
    task.inputRequests = Object.fromEntries(
      pendingInputs.map((step) => [
        stepLabel(step.name, step.occurrence),
        JSON.parse(step.request ?? "{}") as InputRequestEntry,
      ]),
    );
  } else if (record.status === "completed" && record.result !== null) {
    // The inlined result is the complete 2026-07-28 CallToolResult, resultType included.
    task.result = { ...(JSON.parse(record.result) as Record<string, unknown>), resultType: "complete" };
  } else if (record.status === "failed" && record.error !== null) {
    task.error = JSON.parse(record.error) as JsonRpcErrorObject;
  }
  return task;
}

/**
 * A task as JSON text, for the `tasks/get` fast path to pass through without parsing: `body` is the task without
 * its `_meta`, `meta` that `_meta` (or null). Split so that the router can add the server's own `_meta` entries
 * to the answer's `_meta` by joining text, not by parsing the task back.
 */
export interface TaskText {
  body: string;
  meta: string | null;
}

export function toTaskText(task: DetailedTask): TaskText {
  const { _meta, ...rest } = task;
  const meta = _meta && Object.keys(_meta).length > 0 ? JSON.stringify(_meta) : null;
  return { body: JSON.stringify(rest), meta };
}

/** What a live task's status message reads: "paused" while an operator holds it (a final task's is its own). */
export function liveMessage(record: TaskRecord): string | null {
  if (record.pausedAt === null || record.status !== "working") return record.statusMessage;
  return record.statusMessage === null ? PAUSED_MESSAGE : `${PAUSED_MESSAGE} (was: ${record.statusMessage})`;
}

export const PAUSED_MESSAGE = "paused by an operator";
