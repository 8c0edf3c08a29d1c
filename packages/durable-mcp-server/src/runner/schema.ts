import { newStepKeySalt } from "../steps/step-keys.js";
import {
  applySchema,
  latestVersion,
  schemaVersion,
  type Migration,
  type VersionedSchema,
} from "../storage/migrations.js";

/** The tables of child tasks (migration 14), made the same way by the migration and by CURRENT. */
const CHILD_TABLES = `CREATE TABLE children (
     child_id TEXT PRIMARY KEY,
     step TEXT NOT NULL,
     task TEXT NOT NULL,
     policy TEXT NOT NULL CHECK (policy IN ('cancel', 'abandon')),
     started_at INTEGER NOT NULL,
     status TEXT CHECK (status IN ('completed', 'failed', 'cancelled')),
     result TEXT,
     error TEXT,
     finished_at INTEGER
   ) WITHOUT ROWID;
   CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('notice', 'cancel')),
     body TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL
   );`;

/**
 * Versioned schema of a TaskRunner's SQLite database (see storage/migrations.ts).
 * 1: the task record and the step journal. 2: an index over waiting steps (next wake, pending inputs).
 * 3: the origin the task was created at (the base of its file links). 4: when each step started (the timeline).
 * 5: the task's step-key salt and each `do` step's idempotency key, journaled at its first attempt.
 * 6: steps keyed by (name, occurrence), and the kinds of external events and patch markers (a rebuilt table).
 * 7: the event inbox (events sent before a wait took them) and the answers of delivered webhooks.
 * 8: the client capabilities the creating request declared (the questions it may ask).
 * 9: each `do` step's attempts (start, end, error), the newest MAX_STEP_ATTEMPTS_KEPT per step (journal.ts).
 * 10: a step's first attempt timed in its own row, so that a step that succeeds at once writes no attempt row;
 *     the journal's seq without AUTOINCREMENT (a rebuilt table).
 * 11: steps packed into the row before them (`pack`): a run of new steps that succeeded at their first attempt is
 *     one row, not one each (journal.ts).
 * 12: outcomes the testing seam injected, apart from the journal (steps/injected-outcomes.ts).
 * 13: an operator's pause (`paused_at`) and the task's links to the tasks it was restarted or retried from or as
 *     (`links`, JSON: runner/task-links.ts).
 * 14: child tasks (`step.invoke`): the step kind `invoke` (a rebuilt table), the task's `parent`, the children it
 *     started (`children`) and the messages it owes other tasks (`outbox`: runner/child-outbox.ts).
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
   CREATE TABLE IF NOT EXISTS steps (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     name TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL CHECK (kind IN ('do', 'sleep', 'input')),
     state TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     result TEXT,
     error TEXT,
     wake_at INTEGER,
     request TEXT,
     updated_at INTEGER NOT NULL
   );`,
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
  // SQLite cannot alter a UNIQUE or CHECK constraint, so the journal is rebuilt in this migration's transaction:
  // every row keeps its seq (journal order, which replay relies on) and every column; each becomes occurrence 1,
  // since until now a name could be used once per run. The kinds `event`, `webhook` (external events) and `patch`
  // (step.patched markers, occurrence 0) are allowed now so that no later feature has to rebuild the table again.
  `CREATE TABLE steps_v6 (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL CHECK (occurrence >= 0),
     kind TEXT NOT NULL CHECK (kind IN ('do', 'sleep', 'input', 'event', 'webhook', 'patch')),
     state TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     result TEXT,
     error TEXT,
     wake_at INTEGER,
     request TEXT,
     updated_at INTEGER NOT NULL,
     started_at INTEGER,
     idempotency_key TEXT,
     UNIQUE (name, occurrence)
   );
   INSERT INTO steps_v6 (seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at,
       started_at, idempotency_key)
     SELECT seq, name, 1, kind, state, attempts, result, error, wake_at, request, updated_at, started_at,
       idempotency_key FROM steps ORDER BY seq;
   DROP TABLE steps;
   ALTER TABLE steps_v6 RENAME TO steps;
   CREATE INDEX steps_waiting ON steps (wake_at) WHERE state = 'waiting';`,
  // External events (runner/event-inbox.ts): events a live task was sent while no wait of their type was pending,
  // taken oldest first per type; and, per webhook URL, the one body it accepted with the answer given, so that an
  // identical repeat gets that answer again and a different body is refused. New tables only: nothing to carry over.
  `CREATE TABLE event_inbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     type TEXT NOT NULL,
     payload TEXT NOT NULL,
     sent_at INTEGER NOT NULL
   );
   CREATE INDEX event_inbox_type ON event_inbox (type, seq);
   CREATE TABLE webhook_deliveries (
     hook_id TEXT PRIMARY KEY,
     body_sha256 TEXT NOT NULL,
     status INTEGER NOT NULL,
     answer TEXT NOT NULL,
     delivered_at INTEGER NOT NULL
   );`,
  // The client capabilities of the creating request, as JSON. An existing task gets NULL, which lets it ask any
  // kind of question, as it could when it was created.
  `ALTER TABLE task ADD COLUMN client_capabilities TEXT;`,
  // Per-attempt history for the run view. A row per kept attempt: `slot` is (n - 1) % MAX_STEP_ATTEMPTS_KEPT, so a
  // new attempt replaces the oldest kept one in the same single statement and a step never holds more rows than
  // that. Steps journaled before this have no history: their attempts were counted, never timed.
  `CREATE TABLE step_attempts (
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL,
     slot INTEGER NOT NULL,
     n INTEGER NOT NULL CHECK (n >= 1),
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     error TEXT,
     PRIMARY KEY (name, occurrence, slot)
   ) WITHOUT ROWID;`,
  // Attempt 1's start, kept in the step's row until attempt 2 starts and moves it to step_attempts (journal.ts):
  // one statement per journal write on the common path instead of two. And `seq` without AUTOINCREMENT: journal
  // rows are never deleted one by one (a purge deletes the whole database), so a plain rowid key gives the same
  // ever-growing order without a write to sqlite_sequence on every new step (about a third of an insert's cost
  // here). SQLite cannot drop AUTOINCREMENT in place, so the table is rebuilt as in migration 6: every row keeps its
  // seq and columns; attempt_started_at is NULL for them, and their attempts stay in step_attempts as written.
  `CREATE TABLE steps_v10 (
     seq INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL CHECK (occurrence >= 0),
     kind TEXT NOT NULL CHECK (kind IN ('do', 'sleep', 'input', 'event', 'webhook', 'patch')),
     state TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     result TEXT,
     error TEXT,
     wake_at INTEGER,
     request TEXT,
     updated_at INTEGER NOT NULL,
     started_at INTEGER,
     idempotency_key TEXT,
     attempt_started_at INTEGER,
     UNIQUE (name, occurrence)
   );
   INSERT INTO steps_v10 (seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at,
       started_at, idempotency_key)
     SELECT seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at, started_at,
       idempotency_key FROM steps ORDER BY seq;
   DROP TABLE steps;
   ALTER TABLE steps_v10 RENAME TO steps;
   CREATE INDEX steps_waiting ON steps (wake_at) WHERE state = 'waiting';`,
  // The steps that follow a row in journal order and succeeded at their first attempt, packed into it as JSON
  // (journal.ts, PackedStep): a run of new steps that return at once is one row, not one each — a row insert is
  // most of what such a step costs. NULL for every row written before, and for any row followed by no such steps.
  `ALTER TABLE steps ADD COLUMN pack TEXT;`,
  // Injected step outcomes (the testing seam), consulted where a step would run its body. A deployed task never had
  // any: the seam wrote its outcomes into the journal only in tests, so no journal row moves here.
  `CREATE TABLE injected_steps (
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('done', 'failed')),
     result TEXT,
     error TEXT,
     PRIMARY KEY (name, occurrence)
   ) WITHOUT ROWID;`,
  // Pause / resume and restart / retry (runner/task-lifecycle.ts, runner/task-restart.ts). An existing task is not
  // paused and has no links: NULL in both.
  `ALTER TABLE task ADD COLUMN paused_at INTEGER;
   ALTER TABLE task ADD COLUMN links TEXT;`,
  // Child tasks. SQLite cannot alter a CHECK constraint, so the journal is rebuilt as in migrations 6 and 10, only to
  // allow the kind `invoke`: every row keeps its seq (journal order) and every column. A task's `parent` (JSON
  // `{ taskId, step, depth }`, NULL for a task a client started); the children it started, each with its final state
  // once it told (runner/child-tasks.ts); and its outbox: a child's notice to its parent, or a parent's cancel of a
  // child, written with the state that owes it and retried by the alarm until the other task has it.
  `CREATE TABLE steps_v14 (
     seq INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL CHECK (occurrence >= 0),
     kind TEXT NOT NULL CHECK (kind IN ('do', 'sleep', 'input', 'event', 'webhook', 'patch', 'invoke')),
     state TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     result TEXT,
     error TEXT,
     wake_at INTEGER,
     request TEXT,
     updated_at INTEGER NOT NULL,
     started_at INTEGER,
     idempotency_key TEXT,
     attempt_started_at INTEGER,
     pack TEXT,
     UNIQUE (name, occurrence)
   );
   INSERT INTO steps_v14 (seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at,
       started_at, idempotency_key, attempt_started_at, pack)
     SELECT seq, name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at, started_at,
       idempotency_key, attempt_started_at, pack FROM steps ORDER BY seq;
   DROP TABLE steps;
   ALTER TABLE steps_v14 RENAME TO steps;
   CREATE INDEX steps_waiting ON steps (wake_at) WHERE state = 'waiting';
   ALTER TABLE task ADD COLUMN parent TEXT;
   ${CHILD_TABLES}`,
];

/**
 * What the migrations above leave on an empty database, created in one script (storage/migrations.ts, `applySchema`):
 * a new task's object runs this instead of replaying all of them. Keep it in step with MIGRATIONS — a migration
 * appended there is made here too (test/storage/current-schema.test.ts compares the two on real objects).
 */
const CURRENT = `CREATE TABLE task (
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
     purge_at INTEGER,
     origin TEXT,
     step_key_salt TEXT,
     client_capabilities TEXT,
     paused_at INTEGER,
     links TEXT,
     parent TEXT
   );
   CREATE TABLE steps (
     seq INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL CHECK (occurrence >= 0),
     kind TEXT NOT NULL CHECK (kind IN ('do', 'sleep', 'input', 'event', 'webhook', 'patch', 'invoke')),
     state TEXT NOT NULL CHECK (state IN ('running', 'waiting', 'done', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     result TEXT,
     error TEXT,
     wake_at INTEGER,
     request TEXT,
     updated_at INTEGER NOT NULL,
     started_at INTEGER,
     idempotency_key TEXT,
     attempt_started_at INTEGER,
     pack TEXT,
     UNIQUE (name, occurrence)
   );
   CREATE INDEX steps_waiting ON steps (wake_at) WHERE state = 'waiting';
   CREATE TABLE event_inbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     type TEXT NOT NULL,
     payload TEXT NOT NULL,
     sent_at INTEGER NOT NULL
   );
   CREATE INDEX event_inbox_type ON event_inbox (type, seq);
   CREATE TABLE webhook_deliveries (
     hook_id TEXT PRIMARY KEY,
     body_sha256 TEXT NOT NULL,
     status INTEGER NOT NULL,
     answer TEXT NOT NULL,
     delivered_at INTEGER NOT NULL
   );
   CREATE TABLE step_attempts (
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL,
     slot INTEGER NOT NULL,
     n INTEGER NOT NULL CHECK (n >= 1),
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     error TEXT,
     PRIMARY KEY (name, occurrence, slot)
   ) WITHOUT ROWID;
   CREATE TABLE injected_steps (
     name TEXT NOT NULL,
     occurrence INTEGER NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('done', 'failed')),
     result TEXT,
     error TEXT,
     PRIMARY KEY (name, occurrence)
   ) WITHOUT ROWID;
   ${CHILD_TABLES}`;

/** The TaskRunner's schema: MIGRATIONS for existing objects, CURRENT for new ones. */
export const TASK_RUNNER_SCHEMA: VersionedSchema = { migrations: MIGRATIONS, current: CURRENT };

export const SCHEMA_VERSION = latestVersion(TASK_RUNNER_SCHEMA);

export { schemaVersion };

/**
 * Brings a TaskRunner's database from version `from` to `to` (default: the latest): a new object (0 to the latest)
 * in the one CURRENT script, any other range through the migrations.
 */
export function migrate(storage: DurableObjectStorage, from: number, to: number = SCHEMA_VERSION): void {
  applySchema(storage, TASK_RUNNER_SCHEMA, from, to);
}
