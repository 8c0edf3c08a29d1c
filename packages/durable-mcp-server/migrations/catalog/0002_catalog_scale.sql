-- The catalog at scale (docs/performance.md, "The catalog at 100,000 rows"): indexes for the operator API's first
-- pages, counts and stuck query, and a side table of tags so a tag filter is an index search, not a scan.
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_status_created ON durable_mcp_tasks (status, created_at, task_id);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_updated ON durable_mcp_tasks (updated_at, task_id);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_text ON durable_mcp_tasks (created_at, task_id, status_message, purge_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_principal_created ON durable_mcp_tasks (principal, created_at, task_id);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_counts ON durable_mcp_tasks (status, tool, purge_at, created_at, updated_at);
CREATE INDEX IF NOT EXISTS durable_mcp_tasks_live_progress ON durable_mcp_tasks (MAX(updated_at, COALESCE(step_updated_at, 0)), task_id) WHERE status IN ('working', 'input_required');
CREATE TABLE IF NOT EXISTS durable_mcp_task_tags (
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (key, value, task_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS durable_mcp_task_tags_task ON durable_mcp_task_tags (task_id);
