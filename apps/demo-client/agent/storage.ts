// What the agent keeps in its SQLite beside the state it pushes: each task's raw JSON-RPC log (the newest LOG_LIMIT
// exchanges; the page fetches it with the `log` callable) and its secrets (bearer tokens, its own origin), which
// never reach the page.
import type { LogEntry } from "../shared/mcp.ts";

/** The newest exchanges kept per task. */
export const LOG_LIMIT = 200;

export class WatcherStorage {
  constructor(private readonly sql: SqlStorage) {}

  /** Creates the tables (idempotent: every start of the agent). */
  init(): void {
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS watcher_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, entry TEXT NOT NULL)",
    );
    this.sql.exec("CREATE INDEX IF NOT EXISTS watcher_log_task ON watcher_log (task_id, seq)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS watcher_secret (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  }

  /** Appends to a task's log, keeps its newest LOG_LIMIT entries, and returns the newest one's sequence number. */
  appendLog(taskId: string, entries: LogEntry[]): number {
    for (const entry of entries) {
      this.sql.exec("INSERT INTO watcher_log (task_id, entry) VALUES (?, ?)", taskId, JSON.stringify(entry));
    }
    const last = this.sql
      .exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM watcher_log WHERE task_id = ?", taskId)
      .toArray()[0];
    this.sql.exec(
      "DELETE FROM watcher_log WHERE task_id = ? AND seq <= (SELECT seq FROM watcher_log WHERE task_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
      taskId,
      taskId,
      LOG_LIMIT,
    );
    return last?.seq ?? 0;
  }

  /** A task's log, oldest first. */
  log(taskId: string): LogEntry[] {
    return this.sql
      .exec<{ entry: string }>("SELECT entry FROM watcher_log WHERE task_id = ? ORDER BY seq", taskId)
      .toArray()
      .map((row) => JSON.parse(row.entry) as LogEntry);
  }

  deleteLog(taskId: string): void {
    this.sql.exec("DELETE FROM watcher_log WHERE task_id = ?", taskId);
  }

  getSecret(key: string): string | undefined {
    return this.sql.exec<{ value: string }>("SELECT value FROM watcher_secret WHERE key = ?", key).toArray()[0]?.value;
  }

  /** Sets a secret, or deletes it for `undefined`. */
  setSecret(key: string, value: string | undefined): void {
    if (value === undefined) this.sql.exec("DELETE FROM watcher_secret WHERE key = ?", key);
    else this.sql.exec("INSERT OR REPLACE INTO watcher_secret (key, value) VALUES (?, ?)", key, value);
  }
}
