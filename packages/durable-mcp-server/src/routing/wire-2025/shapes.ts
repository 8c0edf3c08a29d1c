import type { Task } from "../../wire/task-shapes.js";

/** `_meta` key tying a message to the task it belongs to (2025-11-25). */
export const RELATED_TASK_META = "io.modelcontextprotocol/related-task";

/** The 2025-11-25 `Task`: the same record as SEP-2663's, with `ttl`/`pollInterval` (ms) instead of `…Ms`. */
export interface LegacyTask {
  taskId: string;
  status: Task["status"];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

export function toLegacyTask(task: Task): LegacyTask {
  const legacy: LegacyTask = {
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttlMs,
  };
  if (task.statusMessage !== undefined) legacy.statusMessage = task.statusMessage;
  if (task.pollIntervalMs !== undefined) legacy.pollInterval = task.pollIntervalMs;
  return legacy;
}
