-- Per-session task lists from the catalog (design/operations.md, "tasks/list from the catalog"): which 2025-11-25
-- session created a task, for servers whose `tasks/list` is per session (taskList "session"). Written by the task's
-- TaskRunner with its first catalog row; removed with the task's row, or swept once the session has expired.
CREATE TABLE IF NOT EXISTS durable_mcp_task_sessions (
  task_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  principal TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS durable_mcp_task_sessions_list ON durable_mcp_task_sessions (session_id, created_at, task_id);
CREATE INDEX IF NOT EXISTS durable_mcp_task_sessions_expiry ON durable_mcp_task_sessions (expires_at);
