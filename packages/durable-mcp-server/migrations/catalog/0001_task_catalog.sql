-- The task catalog (design/operations.md): one row per task, written by its TaskRunner after each change.
-- Apply with `wrangler d1 migrations apply <db>` (migrations_dir pointing here), or let the library create it:
-- it runs the same statements (IF NOT EXISTS) once per isolate before its first catalog query.
CREATE TABLE IF NOT EXISTS durable_mcp_tasks (
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
);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_status ON durable_mcp_tasks (status, updated_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_tool ON durable_mcp_tasks (tool, created_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_principal ON durable_mcp_tasks (principal, created_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_created ON durable_mcp_tasks (created_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_purge ON durable_mcp_tasks (purge_at);
CREATE TABLE IF NOT EXISTS durable_mcp_audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  task_ids TEXT NOT NULL DEFAULT '[]',
  outcome TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS durable_mcp_jobs (
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
);
