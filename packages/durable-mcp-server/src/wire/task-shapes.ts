import type { JsonRpcErrorObject } from "../errors/jsonrpc.js";

// The SEP-2663 task shapes the wire carries: types and constants only. The runner's records are turned into
// these by runner/task-view.ts, so that this folder depends on nothing above errors/.

/** A task's status on the wire (and in the runner's record, which stores it as is). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/**
 * The flat `Task` of SEP-2663.
 * @example
 * ```ts
 * import type { Task } from "durable-mcp-server";
 *
 * const summary = (task: Task) => `${task.taskId}: ${task.status} ${task.statusMessage ?? ""}`;
 * ```
 */
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

/**
 * A Task plus what its status carries: input requests, the tool result, or the error.
 * @example
 * ```ts
 * import type { DetailedTask } from "durable-mcp-server";
 *
 * const questions = (task: DetailedTask) => Object.keys(task.inputRequests ?? {});
 * ```
 */
export interface DetailedTask extends Task {
  inputRequests?: Record<string, InputRequestEntry>;
  result?: Record<string, unknown>;
  error?: JsonRpcErrorObject;
}

/**
 * What a task-augmented `tools/call` answers: the new task, marked `resultType: "task"`.
 * @example
 * ```ts
 * import type { CreateTaskResult } from "durable-mcp-server";
 *
 * const isTask = (result: { resultType?: string }): result is CreateTaskResult => result.resultType === "task";
 * ```
 */
export type CreateTaskResult = Task & { resultType: "task" };
/**
 * What `tasks/get` answers: the task with what its status carries, marked `resultType: "complete"`.
 * @example
 * ```ts
 * import type { GetTaskResult } from "durable-mcp-server";
 *
 * const finished = (result: GetTaskResult) => result.status === "completed" || result.status === "failed";
 * ```
 */
export type GetTaskResult = DetailedTask & { resultType: "complete" };
