import { DurableObject } from "cloudflare:workers";

/** One entry of a principal's task index: the id and when it was indexed (the listing order). */
export interface IndexEntry {
  taskId: string;
  indexedAt: number;
}

/** Where a page starts: after this entry, in newest-first order. */
export interface IndexCursor {
  indexedAt: number;
  taskId: string;
}

export interface TaskIndexRpc {
  add(taskId: string, indexedAt: number): Promise<void>;
  remove(taskId: string): Promise<void>;
  page(after: IndexCursor | null, limit: number): Promise<IndexEntry[]>;
}

export type TaskIndexClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & TaskIndexRpc;

/**
 * The per-principal task index behind the 2025-11-25 `tasks/list`: one small SQLite Durable Object per principal,
 * outside the TaskRunner (which holds one task each and cannot list). Ids only; the tasks stay on their runners.
 */
export function defineTaskIndex<Env = unknown>(): TaskIndexClass<Env> {
  return class TaskIndex extends DurableObject<Env> implements TaskIndexRpc {
    private readonly sql = this.ctx.storage.sql;

    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      this.sql.exec(
        `CREATE TABLE IF NOT EXISTS entries (task_id TEXT PRIMARY KEY, indexed_at INTEGER NOT NULL);
         CREATE INDEX IF NOT EXISTS entries_order ON entries (indexed_at DESC, task_id DESC);`,
      );
    }

    /** Idempotent: an id already indexed keeps its first position (a retried or repeated create joins it). */
    async add(taskId: string, indexedAt: number): Promise<void> {
      this.sql.exec("INSERT OR IGNORE INTO entries (task_id, indexed_at) VALUES (?, ?)", taskId, indexedAt);
    }

    async remove(taskId: string): Promise<void> {
      this.sql.exec("DELETE FROM entries WHERE task_id = ?", taskId);
    }

    async page(after: IndexCursor | null, limit: number): Promise<IndexEntry[]> {
      const rows = after
        ? this.sql.exec<{ task_id: string; indexed_at: number }>(
            `SELECT task_id, indexed_at FROM entries WHERE (indexed_at, task_id) < (?, ?)
             ORDER BY indexed_at DESC, task_id DESC LIMIT ?`,
            after.indexedAt,
            after.taskId,
            limit,
          )
        : this.sql.exec<{ task_id: string; indexed_at: number }>(
            "SELECT task_id, indexed_at FROM entries ORDER BY indexed_at DESC, task_id DESC LIMIT ?",
            limit,
          );
      return rows.toArray().map((row) => ({ taskId: row.task_id, indexedAt: row.indexed_at }));
    }
  };
}

/** The index object of one principal. */
export function taskIndexOf(namespace: DurableObjectNamespace, principal: string): TaskIndexRpc {
  return namespace.get(namespace.idFromName(`principal\u0000${principal}`)) as unknown as TaskIndexRpc;
}
