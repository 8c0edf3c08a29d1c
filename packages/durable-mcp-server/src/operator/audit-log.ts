import { ensureCatalogSchema } from "../catalog/catalog-schema.js";

/** One operator action as the audit log keeps it. */
export interface AuditEntry {
  seq: number;
  at: number;
  actor: string;
  action: string;
  /** What the action was aimed at: a task id, or a bulk action's filter and job. */
  target: unknown;
  taskIds: string[];
  outcome: unknown;
}

export async function appendAudit(
  db: D1Database,
  entry: { actor: string; action: string; target: unknown; taskIds?: string[]; outcome: unknown },
): Promise<void> {
  await ensureCatalogSchema(db);
  await db
    .prepare("INSERT INTO durable_mcp_audit (at, actor, action, target, task_ids, outcome) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(
      Date.now(),
      entry.actor,
      entry.action,
      JSON.stringify(entry.target),
      JSON.stringify(entry.taskIds ?? []),
      JSON.stringify(entry.outcome),
    )
    .run();
}

/** Newest first; `before` is the seq the previous page ended at. */
export async function readAudit(db: D1Database, limit: number, before: number | null): Promise<AuditEntry[]> {
  await ensureCatalogSchema(db);
  const result = await db
    .prepare("SELECT * FROM durable_mcp_audit WHERE seq < ? ORDER BY seq DESC LIMIT ?")
    .bind(before ?? Number.MAX_SAFE_INTEGER, limit)
    .all<{
      seq: number;
      at: number;
      actor: string;
      action: string;
      target: string;
      task_ids: string;
      outcome: string;
    }>();
  return result.results.map((row) => ({
    seq: row.seq,
    at: row.at,
    actor: row.actor,
    action: row.action,
    target: JSON.parse(row.target),
    taskIds: JSON.parse(row.task_ids) as string[],
    outcome: JSON.parse(row.outcome),
  }));
}
