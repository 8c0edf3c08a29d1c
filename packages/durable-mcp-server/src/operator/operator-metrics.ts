import { whereClause } from "../catalog/catalog-queries.js";
import { ensureCatalogSchema } from "../catalog/catalog-schema.js";
import { MAX_METRICS_BUCKETS, MAX_METRICS_ROWS } from "../limits.js";
import { jsonResponse, OperatorError } from "./operator-errors.js";
import { readDuration, readInstant } from "./operator-query.js";

// GET /operator/metrics (docs/operations.md): per tool and time bucket, the tasks that finished in it — throughput
// (completed, failed, cancelled), duration p50/p95 and failure rate — computed from the catalog on request, so there
// is no second store to keep in step. It reads at most MAX_METRICS_ROWS finished rows, newest first, through the
// (status, updated_at) index (a final row's updated_at is its finish: the first terminal write wins); past that the
// answer says `truncated` and from when its counts are whole.

const FINAL = ["completed", "failed", "cancelled"] as const;
const DEFAULT_SINCE = "24h";
const DEFAULT_BUCKETS = 24;

/** One tool's series, each an array with one value per bucket (null where no task finished). */
export interface ToolSeries {
  completed: number[];
  failed: number[];
  cancelled: number[];
  p50Ms: Array<number | null>;
  p95Ms: Array<number | null>;
  /** failed ÷ finished in the bucket. */
  failureRate: Array<number | null>;
}

/** GET /metrics: the caller checked the method and that only since, bucket and tool are given. */
export async function serveMetrics(params: URLSearchParams, db: D1Database): Promise<Response> {
  const now = Date.now();
  const since = readInstant("since", params.get("since") ?? DEFAULT_SINCE, now);
  if (since >= now) throw new OperatorError(400, "invalid_filter", "since must be in the past", "since");
  const bucketMs = readDuration(
    "bucket",
    params.get("bucket"),
    Math.max(1000, Math.ceil((now - since) / DEFAULT_BUCKETS)),
  );
  if (bucketMs < 1000) throw new OperatorError(400, "invalid_filter", "bucket is at least 1s", "bucket");
  const count = Math.ceil((now - since) / bucketMs);
  if (count > MAX_METRICS_BUCKETS) {
    throw new OperatorError(
      400,
      "invalid_filter",
      `since/bucket make ${count} buckets; at most ${MAX_METRICS_BUCKETS}: widen the bucket or shorten the range`,
      "bucket",
    );
  }
  const tools = params
    .getAll("tool")
    .flatMap((value) => value.split(","))
    .map((value) => value.trim());
  const where = whereClause(
    { status: [...FINAL], updatedAfter: since, ...(tools.some(Boolean) ? { tool: tools.filter(Boolean) } : {}) },
    now,
  );
  await ensureCatalogSchema(db);
  const result = await db
    .prepare(
      `SELECT tool, status, updated_at AS at, duration_ms AS ms FROM durable_mcp_tasks WHERE ${where.sql}
       ORDER BY updated_at DESC LIMIT ?`,
    )
    .bind(...where.params, MAX_METRICS_ROWS + 1)
    .all<{ tool: string; status: (typeof FINAL)[number]; at: number; ms: number | null }>();
  const truncated = result.results.length > MAX_METRICS_ROWS;
  const rows = result.results.slice(0, MAX_METRICS_ROWS);
  const series = new Map<string, { counts: Record<(typeof FINAL)[number], number[]>; durations: number[][] }>();
  for (const row of rows) {
    const at = Math.min(count - 1, Math.floor((row.at - since) / bucketMs));
    if (at < 0) continue;
    let tool = series.get(row.tool);
    if (!tool) {
      const zeros = () => Array.from({ length: count }, () => 0);
      tool = {
        counts: { completed: zeros(), failed: zeros(), cancelled: zeros() },
        durations: Array.from({ length: count }, () => []),
      };
      series.set(row.tool, tool);
    }
    tool.counts[row.status][at]! += 1;
    if (row.ms !== null) tool.durations[at]!.push(row.ms);
  }
  const byTool: Record<string, ToolSeries> = {};
  for (const [tool, { counts, durations }] of [...series].toSorted(([a], [b]) => (a < b ? -1 : 1))) {
    const sorted = durations.map((list) => list.toSorted((a, b) => a - b));
    byTool[tool] = {
      ...counts,
      p50Ms: sorted.map((list) => percentile(list, 0.5)),
      p95Ms: sorted.map((list) => percentile(list, 0.95)),
      failureRate: counts.failed.map((failed, i) => {
        const finished = failed + counts.completed[i]! + counts.cancelled[i]!;
        return finished === 0 ? null : failed / finished;
      }),
    };
  }
  return jsonResponse({
    since: new Date(since).toISOString(),
    until: new Date(now).toISOString(),
    bucketMs,
    buckets: Array.from({ length: count }, (_, i) => since + i * bucketMs),
    tools: byTool,
    rows: rows.length,
    maxRows: MAX_METRICS_ROWS,
    truncated,
    // With a truncated read, only buckets from the oldest row read on are whole.
    wholeFrom: truncated ? new Date(rows.at(-1)!.at).toISOString() : new Date(since).toISOString(),
  });
}

/** Nearest-rank percentile of an ascending list; null for none. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}
