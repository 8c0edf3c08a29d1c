import type { ClientCapabilities } from "@modelcontextprotocol/server";
import type { JsonRpcErrorObject } from "../errors/jsonrpc.js";
import { MAX_KEPT_RESULT_CHARS } from "../limits.js";
import { newStepKeySalt } from "../steps/step-keys.js";
import { questionCapabilities } from "../wire/input-capabilities.js";
import type { TaskStatus } from "../wire/task-shapes.js";
import type { TaskLinks } from "./task-links.js";

export type { TaskStatus };
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** Settled: nothing more happens without the client (final, or waiting for an answer). */
export function settled(status: TaskStatus): boolean {
  return status === "input_required" || FINAL_STATUSES.has(status);
}

/** The durable record of one task, as its TaskRunner holds it. */
export interface TaskRecord {
  taskId: string;
  principal: string;
  tool: string;
  /** JSON text of the validated tool arguments. */
  input: string;
  status: TaskStatus;
  statusMessage: string | null;
  progress: number | null;
  /** JSON text of the CallToolResult, once completed. */
  result: string | null;
  /** JSON text of the JSON-RPC error, once failed. */
  error: string | null;
  createdAt: number;
  updatedAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  purgeAt: number | null;
  /** Origin of the request that created the task: the base of the file URLs its results link to. */
  origin: string | null;
  /** The secret its steps' idempotency keys are derived from (see steps/step-keys.ts); set at creation. */
  stepKeySalt: string | null;
  /**
   * The client capabilities the creating request declared: the kinds of question the task may ask (see
   * wire/input-capabilities.ts). Null: its questions are answered through the facade tools, so any kind may be asked.
   */
  clientCapabilities: ClientCapabilities | null;
  /** When an operator paused the task (task-lifecycle.ts); null when it is not paused. */
  pausedAt: number | null;
  /** The tasks this one was restarted or retried from or as (task-links.ts); null when none. */
  links: TaskLinks | null;
  /** The task that started this one with `step.invoke`; null for a task a client started. */
  parent: ParentLink | null;
}

/** A child task's link to its parent: the parent's id, the invoke step's label, and how deep the child is (1 up). */
export interface ParentLink {
  taskId: string;
  step: string;
  depth: number;
}

export type NewTask = Pick<TaskRecord, "taskId" | "principal" | "tool" | "input" | "ttlMs" | "pollIntervalMs"> & {
  /** Set for a child task (`step.invoke`): the parent it tells when it ends. */
  parent?: ParentLink | null;
  origin?: string | null;
  /**
   * What the creating client declared it can answer: a 2026-07-28 request's `_meta` envelope capabilities, or a
   * 2025-11-25 session's. Omitted or null for a client served through the facade tools (the model answers).
   */
  clientCapabilities?: ClientCapabilities | null;
  /**
   * The 2025-11-25 session the task is created in, when `tasks/list` is per session and answered from the catalog:
   * the runner files it with the task's catalog row (catalog-feed.ts).
   */
  listSession?: { id: string; expiresAt: number } | null;
};

export type Ending =
  | { status: "completed"; result: unknown }
  | { status: "failed"; error: JsonRpcErrorObject }
  | { status: "cancelled" };

interface TaskRow extends Record<string, SqlStorageValue> {
  task_id: string;
  principal: string;
  tool: string;
  input: string;
  status: string;
  status_message: string | null;
  progress: number | null;
  result: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  purge_at: number | null;
  origin: string | null;
  step_key_salt: string | null;
  client_capabilities: string | null;
  paused_at: number | null;
  links: string | null;
  parent: string | null;
}

const LIVE = "status IN ('working', 'input_required')";

/**
 * Reads and writes the single task row. Every change to a final task is a no-op: the first ending wins.
 *
 * The row is read from SQLite once and then kept (a `tasks/get` is the hot path, and its SELECT cost as much as the
 * RPC around it, docs/performance.md). Every write to the row goes through this class and drops the copy, so the
 * next read is SQLite's again; whoever changes the table another way (a migration, `deleteAll`) calls `forget()`.
 * An eviction or a failed commit (which resets the object) takes the copy with the instance. The record handed
 * out is frozen: it is shared by every reader until the next write, and its identity changes with every write
 * (what the runner's serialised answer is keyed by).
 */
export class TaskStore {
  constructor(private readonly sql: SqlStorage) {}

  /** The row as last read; undefined: not read since the last write. */
  private cached: TaskRecord | null | undefined;

  read(): TaskRecord | null {
    if (this.cached !== undefined) return this.cached;
    const row = this.sql.exec<TaskRow>("SELECT * FROM task WHERE singleton = 1").toArray()[0];
    if (!row) return (this.cached = null);
    const record = Object.freeze(fromRow(row));
    // A large result or error is read afresh each time rather than held by every resident object (docs/limits.md).
    if ((row.result?.length ?? 0) + (row.error?.length ?? 0) <= MAX_KEPT_RESULT_CHARS) this.cached = record;
    return record;
  }

  /** Drops the kept row: the table was changed other than through this class. */
  forget(): void {
    this.cached = undefined;
  }

  /** `links`: a restarted or retried task's link to its original (task-restart.ts). */
  insert(task: NewTask, now: number, links: TaskLinks | null = null): void {
    this.cached = undefined;
    this.sql.exec(
      `INSERT INTO task (singleton, task_id, principal, tool, input, status, created_at, updated_at, ttl_ms,
         poll_interval_ms, origin, step_key_salt, client_capabilities, links, parent)
       VALUES (1, ?, ?, ?, ?, 'working', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      task.taskId,
      task.principal,
      task.tool,
      task.input,
      now,
      now,
      task.ttlMs,
      task.pollIntervalMs,
      task.origin ?? null,
      newStepKeySalt(),
      // Only what decides the questions is kept: a client's declaration may be large, the row must stay small.
      task.clientCapabilities ? JSON.stringify(questionCapabilities(task.clientCapabilities)) : null,
      links === null ? null : JSON.stringify(links),
      task.parent ? JSON.stringify(task.parent) : null,
    );
  }

  /** Pauses (`pausedAt`) or resumes (null) a live task; returns whether anything changed. */
  setPaused(pausedAt: number | null, now: number): boolean {
    this.cached = undefined;
    const cursor = this.sql.exec(
      `UPDATE task SET paused_at = ?, updated_at = ? WHERE singleton = 1 AND ${LIVE} AND (paused_at IS NULL) <> (? IS NULL)`,
      pausedAt,
      now,
      pausedAt,
    );
    return cursor.rowsWritten > 0;
  }

  /** Replaces the task's links; final or not (a link is not a change of the task's outcome). */
  setLinks(links: TaskLinks): void {
    this.cached = undefined;
    this.sql.exec("UPDATE task SET links = ? WHERE singleton = 1", JSON.stringify(links));
  }

  /** Writes a final status if the task is still live; returns whether this call was the one that ended it. */
  end(ending: Ending, now: number, purgeAt: number | null): boolean {
    const result = ending.status === "completed" ? JSON.stringify(ending.result) : null;
    const error = ending.status === "failed" ? JSON.stringify(ending.error) : null;
    this.cached = undefined;
    const cursor = this.sql.exec(
      `UPDATE task SET status = ?, result = ?, error = ?, updated_at = ?, purge_at = ? WHERE singleton = 1 AND ${LIVE}`,
      ending.status,
      result,
      error,
      now,
      purgeAt,
    );
    return cursor.rowsWritten > 0;
  }

  /** Moves a live task between working and input_required; returns whether anything changed. */
  setLiveStatus(status: "working" | "input_required", now: number): boolean {
    this.cached = undefined;
    const cursor = this.sql.exec(
      `UPDATE task SET status = ?, updated_at = ? WHERE singleton = 1 AND ${LIVE} AND status <> ?`,
      status,
      now,
      status,
    );
    return cursor.rowsWritten > 0;
  }

  /** Sets the status message of a live task; returns whether anything changed. */
  setMessage(message: string, progress: number | null, now: number): boolean {
    this.cached = undefined;
    const cursor = this.sql.exec(
      `UPDATE task SET status_message = ?, progress = ?, updated_at = ?
       WHERE singleton = 1 AND ${LIVE} AND (status_message IS NOT ? OR progress IS NOT ?)`,
      message,
      progress,
      now,
      message,
      progress,
    );
    return cursor.rowsWritten > 0;
  }

  /** Clears a status message that starts with `prefix` (a limiter's "queued: …" once the task runs). */
  clearMessage(prefix: string, now: number): boolean {
    this.cached = undefined;
    const cursor = this.sql.exec(
      `UPDATE task SET status_message = NULL, updated_at = ? WHERE singleton = 1 AND ${LIVE} AND status_message LIKE ?`,
      now,
      `${prefix}%`,
    );
    return cursor.rowsWritten > 0;
  }

  setPurgeAt(purgeAt: number): void {
    this.cached = undefined;
    this.sql.exec("UPDATE task SET purge_at = ? WHERE singleton = 1", purgeAt);
  }
}

function fromRow(row: TaskRow): TaskRecord {
  return {
    taskId: row.task_id,
    principal: row.principal,
    tool: row.tool,
    input: row.input,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    progress: row.progress,
    result: row.result,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_interval_ms,
    purgeAt: row.purge_at,
    origin: row.origin ?? null,
    stepKeySalt: row.step_key_salt ?? null,
    clientCapabilities: row.client_capabilities ? (JSON.parse(row.client_capabilities) as ClientCapabilities) : null,
    pausedAt: row.paused_at ?? null,
    links: row.links ? (JSON.parse(row.links) as TaskLinks) : null,
    parent: row.parent ? (JSON.parse(row.parent) as ParentLink) : null,
  };
}

/** Every task has a salt (set at creation, or by the schema migration that introduced it). */
export function stepKeySaltOf(record: TaskRecord): string {
  if (record.stepKeySalt === null) throw new Error(`task ${record.taskId} has no step-key salt`);
  return record.stepKeySalt;
}
