import type { CatalogRow } from "./catalog-row.js";
import { ensureCatalogSchema } from "./catalog-schema.js";

// Writes to the catalog. Every write is an upsert guarded by the row's version: delivered twice, late or out of order,
// the row ends as the newest change left it (a write whose version is not newer changes nothing).

const UPSERT = `INSERT INTO durable_mcp_tasks (task_id, tool, principal, status, status_message, progress, created_at,
    updated_at, finished_at, duration_ms, current_step, step_state, step_updated_at, attempts, retries, next_wake_at,
    error_code, tags, purge_at, version, written_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
  ON CONFLICT (task_id) DO UPDATE SET tool = excluded.tool, principal = excluded.principal, status = excluded.status,
    status_message = excluded.status_message, progress = excluded.progress, created_at = excluded.created_at,
    updated_at = excluded.updated_at, finished_at = excluded.finished_at, duration_ms = excluded.duration_ms,
    current_step = excluded.current_step, step_state = excluded.step_state, step_updated_at = excluded.step_updated_at,
    attempts = excluded.attempts, retries = excluded.retries, next_wake_at = excluded.next_wake_at,
    error_code = excluded.error_code, tags = excluded.tags, purge_at = excluded.purge_at, version = excluded.version,
    written_at = excluded.written_at
  WHERE excluded.version > durable_mcp_tasks.version`;

/** The row without the time it is written at: what a runner hands over. */
export type CatalogChange = Omit<CatalogRow, "writtenAt">;

/** The 2025-11-25 session a task was created in, for per-session `tasks/list` (task-list.ts). */
export interface TaskSessionEntry {
  taskId: string;
  sessionId: string;
  principal: string;
  createdAt: number;
  /** When the session expires: nobody can list it after that, and the sweep removes the entry. */
  expiresAt: number;
}

/** A task's tags, filed in the tag side table (a task's tags never change: filing them again adds nothing). */
const FILE_TAGS = `INSERT OR IGNORE INTO durable_mcp_task_tags (key, value, task_id)
  SELECT key, value, ?1 FROM json_each(?2)`;

/**
 * Upserts each change, files its tags in the tag table (unless `fileTags` is false: a writer that filed them
 * already) and each session entry (first one wins), in one batch; returns how many task rows it changed (an older
 * version changes none).
 */
export async function writeCatalogRows(
  db: D1Database,
  changes: readonly CatalogChange[],
  sessions: readonly TaskSessionEntry[] = [],
  fileTags = true,
): Promise<number> {
  if (changes.length === 0 && sessions.length === 0) return 0;
  await ensureCatalogSchema(db);
  const now = Date.now();
  const statements = changes.map((change) => upsertStatement(db, change, now));
  if (fileTags) {
    for (const change of changes) {
      if (Object.keys(change.tags).length > 0) {
        statements.push(db.prepare(FILE_TAGS).bind(change.taskId, JSON.stringify(change.tags)));
      }
    }
  }
  for (const entry of sessions) {
    statements.push(
      db
        .prepare(
          `INSERT OR IGNORE INTO durable_mcp_task_sessions (task_id, session_id, principal, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?)`,
        )
        .bind(entry.taskId, entry.sessionId, entry.principal, entry.createdAt, entry.expiresAt),
    );
  }
  const results = await db.batch(statements);
  return results.slice(0, changes.length).reduce((sum, result) => sum + (result.meta.changes ?? 0), 0);
}

function upsertStatement(db: D1Database, change: CatalogChange, now: number): D1PreparedStatement {
  return db
    .prepare(UPSERT)
    .bind(
      change.taskId,
      change.tool,
      change.principal,
      change.status,
      change.statusMessage,
      change.progress,
      change.createdAt,
      change.updatedAt,
      change.finishedAt,
      change.durationMs,
      change.currentStep,
      change.stepState,
      change.stepUpdatedAt,
      change.attempts,
      change.retries,
      change.nextWakeAt,
      change.errorCode,
      JSON.stringify(change.tags),
      change.purgeAt,
      change.version,
      now,
    );
}

/** Removes a purged task's row. A straggling older write cannot bring it back visibly: its purge_at has passed. */
export async function deleteCatalogRow(db: D1Database, taskId: string): Promise<void> {
  await ensureCatalogSchema(db);
  await db.batch([
    db.prepare("DELETE FROM durable_mcp_tasks WHERE task_id = ?").bind(taskId),
    db.prepare("DELETE FROM durable_mcp_task_sessions WHERE task_id = ?").bind(taskId),
    db.prepare("DELETE FROM durable_mcp_task_tags WHERE task_id = ?").bind(taskId),
  ]);
}

/**
 * Deletes rows whose purge time has passed (rows a runner could not remove itself), and the session entries of
 * expired sessions; returns how many task rows.
 */
export async function sweepPurgedRows(db: D1Database, now: number): Promise<number> {
  await ensureCatalogSchema(db);
  const [tasks] = await db.batch([
    db.prepare("DELETE FROM durable_mcp_tasks WHERE purge_at IS NOT NULL AND purge_at <= ?").bind(now),
    db.prepare("DELETE FROM durable_mcp_task_sessions WHERE expires_at <= ?").bind(now),
    // Tags of rows gone (swept now, or deleted by a purge whose tag delete failed).
    db.prepare(
      `DELETE FROM durable_mcp_task_tags WHERE NOT EXISTS
         (SELECT 1 FROM durable_mcp_tasks t WHERE t.task_id = durable_mcp_task_tags.task_id)`,
    ),
  ]);
  return tasks!.meta.changes ?? 0;
}
