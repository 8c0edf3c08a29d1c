import { JOURNAL_DDL } from "../steps/journal.js";

/**
 * Versioned schema of a TaskRunner's SQLite database. Append a migration; never edit a shipped one.
 * 1: the task record and the step journal. 2: an index over waiting steps (next wake, pending inputs).
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
  `CREATE INDEX steps_waiting ON steps (wake_at) WHERE state = 'waiting';`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The schema version this object's database is at; 0 when no task was ever created here. */
export function schemaVersion(sql: SqlStorage): number {
  const ledger = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray();
  if (ledger.length === 0) return 0;
  return sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
}

/**
 * Brings the database from version `from` to the latest in one transaction and one statement batch (a new task's
 * object pays this on its first write, so it is kept to a single round through SQLite).
 */
export function migrate(storage: DurableObjectStorage, from: number, to: number = MIGRATIONS.length): void {
  if (from >= to) return;
  const now = Date.now();
  const statements =
    from === 0 ? ["CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);"] : [];
  for (let version = from + 1; version <= to; version++) {
    statements.push(
      MIGRATIONS[version - 1]!,
      `INSERT INTO schema_migrations (version, applied_at) VALUES (${version}, ${now});`,
    );
  }
  storage.transactionSync(() => storage.sql.exec(statements.join("\n")));
}
