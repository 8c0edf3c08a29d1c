import { JOURNAL_DDL } from "../steps/journal.js";
import { newStepKeySalt } from "../steps/step-keys.js";
import { applyMigrations, schemaVersion, type Migration } from "../storage/migrations.js";

/**
 * Versioned schema of a TaskRunner's SQLite database (see storage/migrations.ts).
 * 1: the task record and the step journal. 2: an index over waiting steps (next wake, pending inputs).
 * 3: the origin the task was created at (the base of its file links). 4: when each step started (the timeline).
 * 5: the task's step-key salt and each `do` step's idempotency key, journaled at its first attempt.
 * Last (renumbered at merge): the client capabilities the creating request declared (the questions it may ask).
 */
const MIGRATIONS: readonly Migration[] = [
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
  `ALTER TABLE task ADD COLUMN origin TEXT;`,
  `ALTER TABLE steps ADD COLUMN started_at INTEGER;`,
  // An existing task gets a fresh salt (base64url, safe as a literal). Its `do` steps were all attempted already
  // and handed their bodies the old key, `taskId:name`: they keep it, so an in-flight step is never re-keyed.
  () => `ALTER TABLE task ADD COLUMN step_key_salt TEXT;
   UPDATE task SET step_key_salt = '${newStepKeySalt()}';
   ALTER TABLE steps ADD COLUMN idempotency_key TEXT;
   UPDATE steps SET idempotency_key = (SELECT task_id FROM task WHERE singleton = 1) || ':' || name
     WHERE kind = 'do';`,
  // The client capabilities of the creating request, as JSON. An existing task gets NULL, which lets it ask any
  // kind of question, as it could when it was created.
  `ALTER TABLE task ADD COLUMN client_capabilities TEXT;`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export { schemaVersion };

/** Brings a TaskRunner's database from version `from` to `to` (default: the latest). */
export function migrate(storage: DurableObjectStorage, from: number, to: number = MIGRATIONS.length): void {
  applyMigrations(storage, MIGRATIONS, from, to);
}
