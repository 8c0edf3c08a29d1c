// The catalog's D1 schema as the library creates it: the statements of migrations/catalog/*.sql in order (a test
// compares the two), run with IF NOT EXISTS once per isolate and database before the first catalog query, so a
// deployment works whether or not it applied the migration with wrangler.

export const CATALOG_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS durable_mcp_tasks (
  task_id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  principal TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  progress REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  duration_ms INTEGER,
  current_step TEXT,
  step_state TEXT,
  step_updated_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  retries INTEGER NOT NULL DEFAULT 0,
  next_wake_at INTEGER,
  error_code TEXT,
  tags TEXT NOT NULL DEFAULT '{}',
  purge_at INTEGER,
  version INTEGER NOT NULL,
  written_at INTEGER NOT NULL
)`,
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_status ON durable_mcp_tasks (status, updated_at)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_tool ON durable_mcp_tasks (tool, created_at)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_principal ON durable_mcp_tasks (principal, created_at)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_created ON durable_mcp_tasks (created_at)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_purge ON durable_mcp_tasks (purge_at)",
  `CREATE TABLE IF NOT EXISTS durable_mcp_audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  task_ids TEXT NOT NULL DEFAULT '[]',
  outcome TEXT NOT NULL
)`,
  `CREATE TABLE IF NOT EXISTS durable_mcp_jobs (
  job_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  filter TEXT NOT NULL,
  state TEXT NOT NULL,
  total INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  cutoff INTEGER NOT NULL,
  after_id TEXT NOT NULL DEFAULT ''
)`,
  // 0002_catalog_scale.sql
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_status_created ON durable_mcp_tasks (status, created_at, task_id)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_updated ON durable_mcp_tasks (updated_at, task_id)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_text ON durable_mcp_tasks (created_at, task_id, status_message, purge_at)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_principal_created ON durable_mcp_tasks (principal, created_at, task_id)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_tasks_counts ON durable_mcp_tasks (status, tool, purge_at, created_at, updated_at)",
  `CREATE INDEX IF NOT EXISTS durable_mcp_tasks_live_progress ON durable_mcp_tasks (MAX(updated_at, COALESCE(step_updated_at, 0)), task_id) WHERE status IN ('working', 'input_required')`,
  `CREATE TABLE IF NOT EXISTS durable_mcp_task_tags (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (key, value, task_id)
) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS durable_mcp_task_tags_task ON durable_mcp_task_tags (task_id)",
  // 0003_task_sessions.sql
  `CREATE TABLE IF NOT EXISTS durable_mcp_task_sessions (
  task_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  principal TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
)`,
  "CREATE INDEX IF NOT EXISTS durable_mcp_task_sessions_list ON durable_mcp_task_sessions (session_id, created_at, task_id)",
  "CREATE INDEX IF NOT EXISTS durable_mcp_task_sessions_expiry ON durable_mcp_task_sessions (expires_at)",
];

const ready = new WeakSet<D1Database>();

/** Creates the catalog's tables on `db` unless this isolate did already (one batch, idempotent). */
export async function ensureCatalogSchema(db: D1Database): Promise<void> {
  if (ready.has(db)) return;
  await db.batch(CATALOG_SCHEMA.map((statement) => db.prepare(statement)));
  ready.add(db);
}
