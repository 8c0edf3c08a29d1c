import { countMatching, listRows, type CatalogFilter } from "../catalog/catalog-queries.js";
import { deleteCatalogRow, sweepPurgedRows } from "../catalog/catalog-writer.js";
import { BULK_STALL_MS, MAX_BULK_TASKS, MAX_OPERATOR_PAGE_SIZE } from "../limits.js";
import { appendAudit } from "./audit-log.js";
import { createJob, eligible, isStalled, readJob, runJob, type BulkJob } from "./bulk-cancel.js";
import type { Operator } from "./operator-access.js";
import { OperatorError, jsonResponse } from "./operator-errors.js";
import { body, catalog, iso, optionalString, principalOf, type OperatorDeps } from "./operator-http.js";
import { isEmptyFilter, readFilter, readLimit } from "./operator-query.js";
import { applyAction, BULK_ACTIONS, type BulkAction } from "./task-actions.js";

// The operator API's writes, every one in the audit log: an action on one task (cancel, pause, resume, retry,
// restart), the same by filter as a bulk job with progress and a dry run, and reconcile.

/** POST /tasks/:id/<action>. A restart's body is `{ fromStep, requestId? }`, a retry's `{ requestId? }` or none. */
export async function actOnTask(
  request: Request,
  taskId: string,
  action: BulkAction,
  operator: Operator,
  deps: OperatorDeps,
): Promise<Response> {
  const db = catalog(deps);
  const input =
    action === "restart"
      ? await body(request, ["fromStep", "requestId"])
      : action === "retry"
        ? await body(request, ["requestId"], true)
        : {};
  const fromStep = action === "restart" ? requiredStep(input) : null;
  const requestKey = optionalString(input, "requestId", 128) ?? null;
  const owner = await principalOf(taskId, null, deps);
  const result = await applyAction(deps.runners(), action, { taskId, principal: owner }, { fromStep, requestKey });
  if (!result.ok) throw result.error;
  const { ok: _ok, taskId: _taskId, ...outcome } = result;
  await appendAudit(db, {
    actor: operator.name,
    action,
    target: { taskId, ...(fromStep === null ? {} : { fromStep }) },
    taskIds: result.newTaskId ? [taskId, result.newTaskId] : [taskId],
    outcome,
  });
  return jsonResponse({ taskId, ...outcome, ...(fromStep === null ? {} : { fromStep }) });
}

function requiredStep(input: Record<string, unknown>): string {
  const fromStep = optionalString(input, "fromStep");
  if (fromStep === undefined) {
    throw new OperatorError(
      400,
      "invalid_body",
      'a restart needs fromStep, a step label ("name", or "name#n")',
      "fromStep",
    );
  }
  return fromStep;
}

/**
 * POST /jobs (`{ action, where, fromStep?, dryRun? }`) and POST /cancellations (`{ where, dryRun? }`, the cancel
 * job as part 1 served it): the eligible tasks matching a non-empty filter, at most MAX_BULK_TASKS.
 */
export async function startJob(
  request: Request,
  fixed: BulkAction | null,
  operator: Operator,
  deps: OperatorDeps,
): Promise<Response> {
  const db = catalog(deps);
  const input = await body(request, fixed ? ["where", "dryRun"] : ["action", "where", "dryRun", "fromStep"]);
  const action = fixed ?? readAction(input.action);
  const fromStep = action === "restart" ? requiredStep(input) : null;
  if (action !== "restart" && input.fromStep !== undefined) {
    throw new OperatorError(400, "invalid_body", "fromStep is for a restart only", "fromStep");
  }
  if (input.where === undefined) {
    throw new OperatorError(
      400,
      "filter_required",
      `a bulk ${action} needs a where filter (e.g. {"tool": "build_report", "status": "failed"})`,
      "where",
    );
  }
  const filter = readFilter(input.where as Parameters<typeof readFilter>[0]);
  if (isEmptyFilter(filter)) {
    throw new OperatorError(400, "filter_required", `a bulk ${action} needs a non-empty where filter`, "where");
  }
  if (input.dryRun !== undefined && typeof input.dryRun !== "boolean") {
    throw new OperatorError(400, "invalid_body", "dryRun must be true or false", "dryRun");
  }
  const now = Date.now();
  const matching = await countMatching(db, eligible(action, filter, now), now);
  if (input.dryRun === true) {
    return jsonResponse({ dryRun: true, action, where: filter, count: matching, maxTasks: MAX_BULK_TASKS });
  }
  if (matching > MAX_BULK_TASKS) {
    throw new OperatorError(
      400,
      "too_many_tasks",
      `${matching} tasks match; a bulk ${action} takes at most ${MAX_BULK_TASKS}: narrow the filter (e.g. createdBefore)`,
      "where",
    );
  }
  const job = await createJob(
    db,
    operator.name,
    { kind: action, fromStep },
    filter,
    matching,
    deps.driver !== undefined,
  );
  await appendAudit(db, {
    actor: operator.name,
    action: `bulk_${action}_started`,
    target: { jobId: job.jobId, where: filter, ...(fromStep === null ? {} : { fromStep }) },
    outcome: { total: matching },
  });
  if (job.state === "waiting" && (await handOver(job.jobId, deps))) return jsonResponse({ job: jobView(job) }, 202);
  if (job.state !== "done") {
    // No driver (or it could not be reached): this request runs the first slice, reads of the job the next ones.
    const run = runJob(db, deps.runners(), job, job.state === "running" ? job.updatedAt : undefined);
    if (deps.waitUntil) deps.waitUntil(run);
    else {
      const ran = await run;
      return jsonResponse({ job: jobView(ran) }, ran.state === "done" ? 200 : 202);
    }
  }
  return jsonResponse({ job: jobView(job) }, 202);
}

function readAction(value: unknown): BulkAction {
  if (typeof value !== "string" || !(BULK_ACTIONS as readonly string[]).includes(value)) {
    throw new OperatorError(400, "invalid_body", `action must be one of ${BULK_ACTIONS.join(", ")}`, "action");
  }
  return value as BulkAction;
}

/** Gives a job to the BulkDriver; false where none is bound or it could not be reached. */
async function handOver(jobId: string, deps: OperatorDeps): Promise<boolean> {
  if (!deps.driver) return false;
  try {
    await deps.driver(jobId);
    return true;
  } catch (error) {
    console.error("durableMcp: the BulkDriver did not take a job; it advances on read", {
      jobId,
      error: error instanceof Error ? error.stack : String(error),
    });
    return false;
  }
}

/**
 * GET /jobs/:id (and /cancellations/:id): its progress. Without a driver a stalled job is resumed by the read; with
 * one, a job not advanced for BULK_STALL_MS is handed to it again (its driver's alarm is the one that runs it).
 */
export async function readJobRoute(jobId: string, deps: OperatorDeps): Promise<Response> {
  const db = catalog(deps);
  const found = await readJob(db, jobId);
  if (!found) throw new OperatorError(404, "not_found", `no job ${jobId}`);
  const now = Date.now();
  if (deps.driver) {
    if (found.state !== "done" && now - found.updatedAt >= BULK_STALL_MS) deps.waitUntil?.(handOver(jobId, deps));
  } else if (isStalled(found, now)) deps.waitUntil?.(runJob(db, deps.runners(), found));
  return jsonResponse({ job: jobView(found) });
}

export async function reconcile(request: Request, operator: Operator, deps: OperatorDeps): Promise<Response> {
  const input = await body(request, ["where", "limit"]);
  const db = catalog(deps);
  const filter: CatalogFilter =
    input.where === undefined
      ? { status: ["working", "input_required"] }
      : readFilter(input.where as Parameters<typeof readFilter>[0]);
  const limit = input.limit === undefined ? MAX_OPERATOR_PAGE_SIZE : readLimit(String(input.limit));
  const swept = await sweepPurgedRows(db, Date.now());
  const { rows } = await listRows(db, filter, { key: "updated", descending: false }, limit, null, Date.now());
  let refreshed = 0;
  const removed: string[] = [];
  const runners = deps.runners();
  for (const row of rows) {
    const outcome = await runners.refreshCatalog(row.taskId);
    if (outcome === "gone") {
      await deleteCatalogRow(db, row.taskId);
      removed.push(row.taskId);
    } else refreshed++;
  }
  const outcome = { checked: rows.length, refreshed, removed: removed.length, swept };
  await appendAudit(db, {
    actor: operator.name,
    action: "reconcile",
    target: { where: filter },
    taskIds: removed,
    outcome,
  });
  return jsonResponse(outcome);
}

function jobView(job: BulkJob) {
  return {
    jobId: job.jobId,
    kind: job.kind,
    action: job.kind,
    ...(job.fromStep === null ? {} : { fromStep: job.fromStep }),
    actor: job.actor,
    where: job.filter,
    state: job.state === "waiting" ? "running" : job.state,
    total: job.total,
    done: job.done,
    failed: job.failed,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
  };
}
