import type { TaskStatus } from "../wire/task-shapes.js";

/** One task as the catalog holds it: what its TaskRunner handed over after its last change. */
export interface CatalogRow {
  taskId: string;
  tool: string;
  principal: string;
  status: TaskStatus;
  statusMessage: string | null;
  progress: number | null;
  createdAt: number;
  updatedAt: number;
  /** When the task reached a final status; null while live. */
  finishedAt: number | null;
  /** finishedAt − createdAt; null while live. */
  durationMs: number | null;
  /** The label of the newest journaled step, its state and when it last changed. */
  currentStep: string | null;
  stepState: string | null;
  stepUpdatedAt: number | null;
  /** Attempts of the current step; retries over the whole task (attempts past each step's first). */
  attempts: number;
  retries: number;
  /** When the task's next timed wake (sleep, retry, timeout) is due; null when none. */
  nextWakeAt: number | null;
  /** A failed task's reason or JSON-RPC code, or a tool error's envelope code; null otherwise. */
  errorCode: string | null;
  tags: Record<string, string>;
  /** When the runner purges the task; the catalog hides the row from then on. */
  purgeAt: number | null;
  /** Per task, increasing with every change: a write older than the row's is dropped (the newest wins). */
  version: number;
  /** When the catalog row was written (lag = writtenAt − updatedAt of the change it carries). */
  writtenAt: number;
}

export interface CatalogRowSql extends Record<string, unknown> {
  task_id: string;
  tool: string;
  principal: string;
  status: string;
  status_message: string | null;
  progress: number | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  current_step: string | null;
  step_state: string | null;
  step_updated_at: number | null;
  attempts: number;
  retries: number;
  next_wake_at: number | null;
  error_code: string | null;
  tags: string;
  purge_at: number | null;
  version: number;
  written_at: number;
}

export function fromCatalogSql(row: CatalogRowSql): CatalogRow {
  return {
    taskId: row.task_id,
    tool: row.tool,
    principal: row.principal,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    progress: row.progress,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    currentStep: row.current_step,
    stepState: row.step_state,
    stepUpdatedAt: row.step_updated_at,
    attempts: row.attempts,
    retries: row.retries,
    nextWakeAt: row.next_wake_at,
    errorCode: row.error_code,
    tags: JSON.parse(row.tags) as Record<string, string>,
    purgeAt: row.purge_at,
    version: row.version,
    writtenAt: row.written_at,
  };
}
