import { ensureCatalogSchema } from "./catalog-schema.js";

// `tasks/list` from the catalog (design/operations.md): the ids of one caller's list, newest first, one page at a
// time. Only ids and the order key: the listing reads each task from its runner (the truth), as it did from the
// TaskIndex. Rows whose purge time has passed are not listed.

/** Whose list: a principal's, or one 2025-11-25 session's (of that principal). */
export interface CatalogListScope {
  principal: string;
  sessionId?: string;
}

/** A listed task and its place in the order (its creation time). */
export interface CatalogListEntry {
  taskId: string;
  createdAt: number;
}

/** Where a page starts: after this entry, in newest-first order. */
export interface CatalogListCursor {
  createdAt: number;
  taskId: string;
}

/** Up to `limit` entries of the list after `after` (from the newest without). */
export async function catalogListPage(
  db: D1Database,
  scope: CatalogListScope,
  after: CatalogListCursor | null,
  limit: number,
  now: number,
): Promise<CatalogListEntry[]> {
  await ensureCatalogSchema(db);
  const live = "(t.purge_at IS NULL OR t.purge_at > ?)";
  let sql: string;
  const params: unknown[] = [];
  if (scope.sessionId !== undefined) {
    // The session's entries, joined to their tasks: an entry whose row is gone (purged) is not listed.
    sql = `SELECT s.task_id AS task_id, s.created_at AS created_at FROM durable_mcp_task_sessions s
      JOIN durable_mcp_tasks t ON t.task_id = s.task_id
      WHERE s.session_id = ? AND s.principal = ? AND s.expires_at > ? AND ${live}`;
    params.push(scope.sessionId, scope.principal, now, now);
    if (after) {
      sql += " AND (s.created_at, s.task_id) < (?, ?)";
      params.push(after.createdAt, after.taskId);
    }
    sql += " ORDER BY s.created_at DESC, s.task_id DESC LIMIT ?";
  } else {
    sql = `SELECT t.task_id AS task_id, t.created_at AS created_at FROM durable_mcp_tasks t
      WHERE t.principal = ? AND ${live}`;
    params.push(scope.principal, now);
    if (after) {
      sql += " AND (t.created_at, t.task_id) < (?, ?)";
      params.push(after.createdAt, after.taskId);
    }
    sql += " ORDER BY t.created_at DESC, t.task_id DESC LIMIT ?";
  }
  params.push(limit);
  const result = await db
    .prepare(sql)
    .bind(...params)
    .all<{ task_id: string; created_at: number }>();
  return result.results.map((row) => ({ taskId: row.task_id, createdAt: row.created_at }));
}
