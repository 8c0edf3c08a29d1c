import { countByStatusAndTool, listRows, rowOf, stuckRows } from "../catalog/catalog-queries.js";
import type { CatalogRow } from "../catalog/catalog-row.js";
import { TaskHistoryError } from "../errors/history-errors.js";
import { STUCK_ALARM_GRACE_MS, STUCK_INPUT_MS, STUCK_WORKING_MS } from "../limits.js";
import { exportTaskHistory } from "../tasks/export-history.js";
import { readAudit } from "./audit-log.js";
import { OperatorError, jsonResponse } from "./operator-errors.js";
import { allowOnly, catalog, iso, principalOf, type OperatorDeps } from "./operator-http.js";
import { decodeCursor, encodeCursor, readDuration, readFilter, readLimit, readSort } from "./operator-query.js";

// The operator API's reads: lists, counts and stuck tasks from the catalog; the audit log; one task's detail and
// history from its runner.

export async function listTasks(params: URLSearchParams, deps: OperatorDeps): Promise<Response> {
  const db = catalog(deps);
  const sort = readSort(params.get("sort"));
  const limit = readLimit(params.get("limit"));
  const cursor = decodeCursor(params.get("cursor"), sort);
  const filter = readFilter(params, ["sort", "limit", "cursor"]);
  const page = await listRows(db, filter, sort, limit, cursor, Date.now());
  return jsonResponse({ tasks: page.rows.map(view), nextCursor: page.next ? encodeCursor(sort, page.next) : null });
}

export async function stats(params: URLSearchParams, deps: OperatorDeps): Promise<Response> {
  const filter = readFilter(params);
  const counts = await countByStatusAndTool(catalog(deps), filter, Date.now());
  const byStatus: Record<string, number> = {};
  for (const { status, count } of counts) byStatus[status] = (byStatus[status] ?? 0) + count;
  return jsonResponse({ counts, byStatus, total: counts.reduce((sum, { count }) => sum + count, 0) });
}

export async function stuck(params: URLSearchParams, deps: OperatorDeps): Promise<Response> {
  allowOnly(params, ["workingFor", "inputFor", "alarmGrace", "limit"]);
  const thresholds = {
    workingMs: readDuration("workingFor", params.get("workingFor"), STUCK_WORKING_MS),
    inputMs: readDuration("inputFor", params.get("inputFor"), STUCK_INPUT_MS),
    alarmGraceMs: readDuration("alarmGrace", params.get("alarmGrace"), STUCK_ALARM_GRACE_MS),
  };
  const rows = await stuckRows(catalog(deps), thresholds, readLimit(params.get("limit")), Date.now());
  return jsonResponse({ thresholds, tasks: rows.map((row) => ({ ...view(row), reasons: row.reasons })) });
}

export async function audit(params: URLSearchParams, deps: OperatorDeps): Promise<Response> {
  allowOnly(params, ["limit", "before"]);
  const before = params.get("before");
  if (before !== null && !/^\d+$/.test(before)) {
    throw new OperatorError(400, "invalid_cursor", "before must be the seq of an audit entry", "before");
  }
  const entries = await readAudit(
    catalog(deps),
    readLimit(params.get("limit")),
    before === null ? null : Number(before),
  );
  return jsonResponse({ entries: entries.map((entry) => ({ ...entry, at: iso(entry.at) })) });
}

export async function detail(taskId: string, principal: string | null, deps: OperatorDeps): Promise<Response> {
  const owner = await principalOf(taskId, principal, deps);
  const access = { taskId, principal: owner };
  const runners = deps.runners();
  const [inspected, withSteps] = await Promise.all([runners.inspect(access), runners.get(access, { steps: true })]);
  if (!inspected || !withSteps) throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  const row = deps.db ? await rowOf(deps.db, taskId) : null;
  return jsonResponse({ tool: inspected.tool, principal: owner, task: withSteps, catalog: row ? view(row) : null });
}

/** The task's history (the replay check's format), read from its runner; never the step-key salt. */
export async function history(taskId: string, principal: string | null, deps: OperatorDeps): Promise<Response> {
  const owner = await principalOf(taskId, principal, deps);
  try {
    return jsonResponse(await exportTaskHistory(deps.runners(), taskId, { principal: owner }));
  } catch (error) {
    if (!(error instanceof TaskHistoryError)) throw error;
    if (error.problem === "too_large") throw new OperatorError(413, "too_large", error.message);
    throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  }
}

/** A catalog row as the API shows it: times as ISO 8601. */
export function view(row: CatalogRow) {
  return {
    taskId: row.taskId,
    tool: row.tool,
    principal: row.principal,
    status: row.status,
    statusMessage: row.statusMessage,
    progress: row.progress,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    finishedAt: iso(row.finishedAt),
    durationMs: row.durationMs,
    currentStep: row.currentStep,
    stepState: row.stepState,
    stepUpdatedAt: iso(row.stepUpdatedAt),
    attempts: row.attempts,
    retries: row.retries,
    nextWakeAt: iso(row.nextWakeAt),
    errorCode: row.errorCode,
    tags: row.tags,
    version: row.version,
    lagMs: row.writtenAt - row.updatedAt,
  };
}
