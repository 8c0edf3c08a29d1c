/**
 * Versioned SQLite schemas for the runtime's Durable Objects: a list of migrations, applied in order and recorded
 * in `schema_migrations`. Append a migration; never edit a shipped one.
 */

/** The schema version an object's database is at; 0 when nothing was ever written there. */
export function schemaVersion(sql: SqlStorage): number {
  const ledger = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray();
  if (ledger.length === 0) return 0;
  return sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
}

/**
 * Brings the database from version `from` to `to` in one transaction and one statement batch (a new object pays
 * this on its first write, so it is kept to a single round through SQLite).
 */
/**
 * One migration: its SQL, or a function that builds it when it is applied (for values that must be fresh per
 * object, such as a random secret, written in the same transaction as the schema change).
 */
export type Migration = string | (() => string);

export function applyMigrations(
  storage: DurableObjectStorage,
  migrations: readonly Migration[],
  from: number,
  to: number = migrations.length,
): void {
  if (from >= to) return;
  const now = Date.now();
  const statements =
    from === 0 ? ["CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);"] : [];
  for (let version = from + 1; version <= to; version++) {
    const migration = migrations[version - 1]!;
    statements.push(
      typeof migration === "function" ? migration() : migration,
      `INSERT INTO schema_migrations (version, applied_at) VALUES (${version}, ${now});`,
    );
  }
  storage.transactionSync(() => storage.sql.exec(statements.join("\n")));
}
