import type { JsonRpcErrorObject } from "../errors/jsonrpc.js";

// The SEP-2663 task shapes the wire carries: types and constants only. The runner's records are turned into
// these by runner/task-view.ts, so that this folder depends on nothing above errors/.

/** A task's status on the wire (and in the runner's record, which stores it as is). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

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
