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

/** Upserts each change (one batch); returns how many rows it changed (an older version changes none). */
export async function writeCatalogRows(db: D1Database, changes: readonly CatalogChange[]): Promise<number> {
  if (changes.length === 0) return 0;
  await ensureCatalogSchema(db);
  const now = Date.now();
  const results = await db.batch(changes.map((change) => upsertStatement(db, change, now)));
  return results.reduce((sum, result) => sum + (result.meta.changes ?? 0), 0);
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
  await db.prepare("DELETE FROM durable_mcp_tasks WHERE task_id = ?").bind(taskId).run();
}

/** Deletes rows whose purge time has passed (rows a runner could not remove itself); returns how many. */
export async function sweepPurgedRows(db: D1Database, now: number): Promise<number> {
  await ensureCatalogSchema(db);
  const result = await db
    .prepare("DELETE FROM durable_mcp_tasks WHERE purge_at IS NOT NULL AND purge_at <= ?")
    .bind(now)
    .run();
  return result.meta.changes ?? 0;
}
