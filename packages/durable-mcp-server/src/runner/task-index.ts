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

/**
 * Whose list an entry is on: a principal's, or, with `session`, one 2025-11-25 session's (the per-session list of a
 * server without `authenticate`, where every caller is one principal).
 */
export interface IndexScope {
  principal: string;
  session?: { id: string; expiresAt: number };
}

export interface TaskIndexRpc {
  /** `dropAllAt`: when the whole index may go (a session's, at the session's expiry); once armed, kept. */
  add(taskId: string, indexedAt: number, dropAllAt?: number): Promise<void>;
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
    private dropped = false;

    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      this.createTables();
    }

    private createTables(): void {
      this.sql.exec(
        `CREATE TABLE IF NOT EXISTS entries (task_id TEXT PRIMARY KEY, indexed_at INTEGER NOT NULL);
         CREATE INDEX IF NOT EXISTS entries_order ON entries (indexed_at DESC, task_id DESC);`,
      );
    }

    /** A call that reaches this instance after its alarm dropped the index starts it again. */
    private ensureTables(): void {
      if (!this.dropped) return;
      this.createTables();
      this.dropped = false;
    }

    /** Idempotent: an id already indexed keeps its first position (a retried or repeated create joins it). */
    async add(taskId: string, indexedAt: number, dropAllAt?: number): Promise<void> {
      this.ensureTables();
      this.sql.exec("INSERT OR IGNORE INTO entries (task_id, indexed_at) VALUES (?, ?)", taskId, indexedAt);
      if (dropAllAt !== undefined && (await this.ctx.storage.getAlarm()) === null) {
        await this.ctx.storage.setAlarm(dropAllAt);
      }
    }

    /** A session's index past its session: nobody can list it any more. */
    override async alarm(): Promise<void> {
      await this.ctx.storage.deleteAll();
      this.dropped = true;
    }

    async remove(taskId: string): Promise<void> {
      this.ensureTables();
      this.sql.exec("DELETE FROM entries WHERE task_id = ?", taskId);
    }

    async page(after: IndexCursor | null, limit: number): Promise<IndexEntry[]> {
      this.ensureTables();
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

/** The index object of one principal, or of one session (IndexScope). */
export function taskIndexOf(namespace: DurableObjectNamespace, scope: string | IndexScope): TaskIndexRpc {
  const { principal, session } = typeof scope === "string" ? { principal: scope, session: undefined } : scope;
  const name = session ? `session\u0000${principal}\u0000${session.id}` : `principal\u0000${principal}`;
  return namespace.get(namespace.idFromName(name)) as unknown as TaskIndexRpc;
}
