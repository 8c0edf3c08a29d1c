import type { TaskStatus } from "../wire/task-shapes.js";
import { fromCatalogSql, type CatalogRow, type CatalogRowSql } from "./catalog-row.js";
import { ensureCatalogSchema } from "./catalog-schema.js";

// The catalog's reads: every query hides rows whose purge time has passed (their tasks are gone, or going).

export interface CatalogFilter {
  status?: TaskStatus[];
  tool?: string[];
  principal?: string[];
  /** Every tag given must match (key = value). */
  tags?: Array<[string, string]>;
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
  updatedBefore?: number;
  /** Text within the task id or the status message (case-sensitive). */
  text?: string;
}

export type SortKey = "created" | "updated";
export interface CatalogSort {
  key: SortKey;
  descending: boolean;
}

/** Where the next page starts: the sort value and task id of the last row of this one. */
export interface CatalogCursor {
  value: number;
  taskId: string;
}

interface Clause {
  sql: string;
  params: unknown[];
}

const COLUMN: Record<SortKey, string> = { created: "created_at", updated: "updated_at" };

export function whereClause(filter: CatalogFilter, now: number): Clause {
  const parts = ["(purge_at IS NULL OR purge_at > ?)"];
  const params: unknown[] = [now];
  const anyOf = (column: string, values: readonly string[] | undefined) => {
    if (!values || values.length === 0) return;
    parts.push(`${column} IN (${values.map(() => "?").join(", ")})`);
    params.push(...values);
  };
  anyOf("status", filter.status);
  anyOf("tool", filter.tool);
  anyOf("principal", filter.principal);
  for (const [key, value] of filter.tags ?? []) {
    // The tag side table (catalog-writer.ts files each task's tags there): an index search, not a scan of the rows.
    parts.push("task_id IN (SELECT task_id FROM durable_mcp_task_tags WHERE key = ? AND value = ?)");
    params.push(key, value);
  }
  const range = (column: string, op: string, value: number | undefined) => {
    if (value === undefined) return;
    parts.push(`${column} ${op} ?`);
    params.push(value);
  };
  range("created_at", ">=", filter.createdAfter);
  range("created_at", "<", filter.createdBefore);
  range("updated_at", ">=", filter.updatedAfter);
  range("updated_at", "<", filter.updatedBefore);
  if (filter.text !== undefined) {
    // instr, not LIKE: no pattern characters to escape, and no LIKE pattern length limit.
    parts.push("(instr(task_id, ?) > 0 OR instr(COALESCE(status_message, ''), ?) > 0)");
    params.push(filter.text, filter.text);
  }
  return { sql: parts.join(" AND "), params };
}

/** One page of rows and the cursor of the next (null on the last page). */
export async function listRows(
  db: D1Database,
  filter: CatalogFilter,
  sort: CatalogSort,
  limit: number,
  after: CatalogCursor | null,
  now: number,
): Promise<{ rows: CatalogRow[]; next: CatalogCursor | null }> {
  await ensureCatalogSchema(db);
  const where = whereClause(filter, now);
  const column = COLUMN[sort.key];
  const direction = sort.descending ? "DESC" : "ASC";
  let sql = `SELECT * FROM durable_mcp_tasks WHERE ${where.sql}`;
  const params = [...where.params];
  if (after) {
    sql += ` AND (${column}, task_id) ${sort.descending ? "<" : ">"} (?, ?)`;
    params.push(after.value, after.taskId);
  }
  sql += ` ORDER BY ${column} ${direction}, task_id ${direction} LIMIT ?`;
  params.push(limit + 1);
  const result = await db
    .prepare(sql)
    .bind(...params)
    .all<CatalogRowSql>();
  const rows = result.results.slice(0, limit).map(fromCatalogSql);
  const last = rows.at(-1);
  const next =
    result.results.length > limit && last
      ? { value: sort.key === "created" ? last.createdAt : last.updatedAt, taskId: last.taskId }
      : null;
  return { rows, next };
}

/** How many rows match. */
export async function countMatching(db: D1Database, filter: CatalogFilter, now: number): Promise<number> {
  await ensureCatalogSchema(db);
  const where = whereClause(filter, now);
  const row = await db
    .prepare(`SELECT COUNT(*) AS n FROM durable_mcp_tasks WHERE ${where.sql}`)
    .bind(...where.params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Counts by status and tool. */
export async function countByStatusAndTool(
  db: D1Database,
  filter: CatalogFilter,
  now: number,
): Promise<Array<{ status: TaskStatus; tool: string; count: number }>> {
  await ensureCatalogSchema(db);
  const where = whereClause(filter, now);
  const result = await db
    .prepare(
      `SELECT status, tool, COUNT(*) AS count FROM durable_mcp_tasks WHERE ${where.sql}
       GROUP BY status, tool ORDER BY tool, status`,
    )
    .bind(...where.params)
    .all<{ status: TaskStatus; tool: string; count: number }>();
  return result.results;
}

export interface StuckThresholds {
  /** Working with no step progress (and no timed wake ahead) for longer than this. */
  workingMs: number;
  /** Waiting for an answer for longer than this. */
  inputMs: number;
  /** A timed wake (sleep, retry, timeout) this far past due. */
  alarmGraceMs: number;
}

export type StuckReason = "no_progress" | "alarm_overdue" | "input_unanswered";

/** Live tasks that look stuck, each with why; oldest progress first. */
export async function stuckRows(
  db: D1Database,
  thresholds: StuckThresholds,
  limit: number,
  now: number,
): Promise<Array<CatalogRow & { reasons: StuckReason[] }>> {
  await ensureCatalogSchema(db);
  const progressed = "MAX(updated_at, COALESCE(step_updated_at, 0))";
  const noProgress = `(status = 'working' AND ${progressed} < ?1 AND (next_wake_at IS NULL OR next_wake_at < ?4))`;
  const overdue = "(status IN ('working', 'input_required') AND next_wake_at IS NOT NULL AND next_wake_at < ?2)";
  const unanswered = "(status = 'input_required' AND updated_at < ?3)";
  // Live rows only, in the order of the partial index on their progress: the walk stops at the limit instead of
  // sorting every live task. Named (INDEXED BY), since with the OR below SQLite's planner picks the status index and
  // sorts: 311 ms against 18 ms on 40,000 rows (docs/performance.md). ensureCatalogSchema has created the index.
  const result = await db
    .prepare(
      `SELECT *, ${noProgress} AS no_progress, ${overdue} AS alarm_overdue, ${unanswered} AS input_unanswered
       FROM durable_mcp_tasks INDEXED BY durable_mcp_tasks_live_progress WHERE status IN ('working', 'input_required') AND (purge_at IS NULL OR purge_at > ?4)
       AND (${noProgress} OR ${overdue} OR ${unanswered})
       ORDER BY ${progressed} ASC, task_id LIMIT ?5`,
    )
    .bind(now - thresholds.workingMs, now - thresholds.alarmGraceMs, now - thresholds.inputMs, now, limit)
    .all<CatalogRowSql & { no_progress: number; alarm_overdue: number; input_unanswered: number }>();
  return result.results.map((row) => ({
    ...fromCatalogSql(row),
    reasons: (["no_progress", "alarm_overdue", "input_unanswered"] as const).filter((reason) => row[reason] === 1),
  }));
}

/** The row of one task, if the catalog has it (purged rows included: the caller decides). */
export async function rowOf(db: D1Database, taskId: string): Promise<CatalogRow | null> {
  await ensureCatalogSchema(db);
  const row = await db.prepare("SELECT * FROM durable_mcp_tasks WHERE task_id = ?").bind(taskId).first<CatalogRowSql>();
  return row ? fromCatalogSql(row) : null;
}
