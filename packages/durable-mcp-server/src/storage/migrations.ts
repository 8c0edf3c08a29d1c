/**
 * Versioned SQLite schemas for the runtime's Durable Objects: a list of migrations, applied in order and recorded
 * in `schema_migrations`, and the current schema as one script for new objects (`VersionedSchema`). Append a
 * migration, never edit a shipped one, and make the same change to the current script (CONTRIBUTING.md).
 */

/** The schema version an object's database is at; 0 when nothing was ever written there. */
export function schemaVersion(sql: SqlStorage): number {
  const ledger = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray();
  if (ledger.length === 0) return 0;
  return sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
}

/**
 * One migration: its SQL, or a function that builds it when it is applied (for values that must be fresh per
 * object, such as a random secret, written in the same transaction as the schema change).
 */
export type Migration = string | (() => string);

/**
 * Brings the database from version `from` to `to` through each migration in turn, in one transaction and one
 * statement batch. A database at 0 that goes to the latest takes `applySchema`'s one script instead.
 */
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

/**
 * A versioned schema: its migrations, which bring an existing database up one version at a time, and `current`,
 * the script that creates on an empty database exactly what all of them leave there (every table and index, as the
 * last migration shapes it, and any rows they would write). A new object runs `current` alone: a fresh database
 * walking every migration replays history it never had (rebuilt tables, columns added one by one), which was a
 * quarter of the CPU of making a task. The two paths are compared on real objects (test/storage/current-schema.test.ts),
 * so a migration appended without the same change to `current` fails the tests.
 */
export interface VersionedSchema {
  readonly migrations: readonly Migration[];
  readonly current: string;
}

/** The latest version of `schema`. */
export function latestVersion(schema: VersionedSchema): number {
  return schema.migrations.length;
}

/**
 * Brings the database from `from` to `to` (default: the latest). From 0 to the latest, `current` runs in one
 * transaction and one batch, and the ledger gets a row for every version as if each migration had run then, so a
 * migration added later applies on top of it exactly as on a database that went through them all. Any other range
 * goes through the migrations (`applyMigrations`).
 */
export function applySchema(
  storage: DurableObjectStorage,
  schema: VersionedSchema,
  from: number,
  to: number = latestVersion(schema),
): void {
  if (from >= to) return;
  if (from !== 0 || to !== latestVersion(schema)) {
    applyMigrations(storage, schema.migrations, from, to);
    return;
  }
  const now = Date.now();
  const versions = schema.migrations.map((_, index) => `(${index + 1}, ${now})`).join(", ");
  const script = [
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);",
    schema.current,
    `INSERT INTO schema_migrations (version, applied_at) VALUES ${versions};`,
  ].join("\n");
  storage.transactionSync(() => storage.sql.exec(script));
}
