import { JOURNAL_DDL } from "../steps/journal.js";

/**
 * Versioned schema of a TaskRunner's SQLite database. Append a migration; never edit a shipped one.
 * Version 1: the task record, the step journal, and the migration ledger itself.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE task (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     task_id TEXT NOT NULL,
     principal TEXT NOT NULL,
     tool TEXT NOT NULL,
     input TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
     status_message TEXT,
     progress REAL,
     result TEXT,
     error TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     ttl_ms INTEGER,
     poll_interval_ms INTEGER,
     purge_at INTEGER
   );
   ${JOURNAL_DDL}`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** True once a task was ever created here; reads of an untouched object must not create tables. */
export function hasSchema(sql: SqlStorage): boolean {
  return (
    sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray().length > 0
  );
}

/** Applies the migrations this object has not seen yet, each in its own transaction. */
export function migrate(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const current = sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
  for (let version = current + 1; version <= MIGRATIONS.length; version++) {
    storage.transactionSync(() => {
      sql.exec(MIGRATIONS[version - 1]!);
      sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", version, Date.now());
    });
  }
}
