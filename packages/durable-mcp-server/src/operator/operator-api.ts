import {
  countByStatusAndTool,
  countMatching,
  listRows,
  rowOf,
  stuckRows,
  type CatalogFilter,
} from "../catalog/catalog-queries.js";
import type { CatalogRow } from "../catalog/catalog-row.js";
import { deleteCatalogRow, sweepPurgedRows } from "../catalog/catalog-writer.js";
import {
  MAX_BULK_TASKS,
  MAX_OPERATOR_PAGE_SIZE,
  STUCK_ALARM_GRACE_MS,
  STUCK_INPUT_MS,
  STUCK_WORKING_MS,
} from "../limits.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { exportTaskHistory } from "../tasks/export-history.js";
import { TaskHistoryError } from "../errors/history-errors.js";
import { readJsonBody } from "../wire/json-body.js";
import { appendAudit, readAudit } from "./audit-log.js";
import { serveLimits, type OperatorLimits } from "./limits-route.js";
import { cancellable, createJob, isStalled, readJob, runJob, type BulkJob } from "./bulk-cancel.js";
import { operatorOf, type Operator, type OperatorSettings } from "./operator-access.js";
import { errorResponse, jsonResponse, OperatorError } from "./operator-errors.js";
import {
  decodeCursor,
  encodeCursor,
  isEmptyFilter,
  readDuration,
  readFilter,
  readLimit,
  readSort,
} from "./operator-query.js";

// The operator API (design/operations.md, docs/operations.md): HTTP + JSON under the operator path, authenticated
// apart from MCP callers. Lists, counts and finds from the catalog; reads and cancels through each task's runner.

export interface OperatorDeps {
  /** The catalog, or undefined when the deployment binds none ("catalog off"). */
  db: D1Database | undefined;
  runners: () => RunnerClient;
  waitUntil?: (promise: Promise<unknown>) => void;
  /** The deployment's fair-share limits (GET /limits). */
  limits?: OperatorLimits;
}

const TASK_ROUTE = /^\/tasks\/([A-Za-z0-9_-]{1,128})(\/cancel|\/history)?$/;
const JOB_ROUTE = /^\/cancellations\/([0-9a-f-]{36})$/;
const MAX_OPERATOR_BODY_BYTES = 64 * 1024;

export async function serveOperator<Env>(
  request: Request,
  env: Env,
  settings: OperatorSettings<Env>,
  deps: OperatorDeps,
): Promise<Response> {
  try {
    const operator = await operatorOf(request, env, settings);
    if (operator instanceof Response) return operator;
    const url = new URL(request.url);
    const route = url.pathname.slice(settings.path.length) || "/";
    return await route_(request, url, route, operator, deps);
  } catch (error) {
    if (error instanceof OperatorError) return errorResponse(error);
    console.error("durableMcp: operator request failed", {
      url: new URL(request.url).pathname,
      error: error instanceof Error ? error.stack : String(error),
    });
    return errorResponse(new OperatorError(500, "internal_error", "Internal error"));
  }
}

async function route_(
  request: Request,
  url: URL,
  route: string,
  operator: Operator,
  deps: OperatorDeps,
): Promise<Response> {
  const method = request.method;
  const get = method === "GET" || method === "HEAD";
  const params = url.searchParams;
  if (route === "/") {
    expect(get, "GET");
    noParams(params);
    return jsonResponse({
      operator: operator.name,
      catalog: deps.db ? "on" : "off",
      limits: { maxPageSize: MAX_OPERATOR_PAGE_SIZE, maxBulkTasks: MAX_BULK_TASKS },
    });
  }
  if (route === "/tasks") {
    expect(get, "GET");
    const db = catalog(deps);
    const sort = readSort(params.get("sort"));
    const limit = readLimit(params.get("limit"));
    const cursor = decodeCursor(params.get("cursor"), sort);
    const filter = readFilter(params, ["sort", "limit", "cursor"]);
    const page = await listRows(db, filter, sort, limit, cursor, Date.now());
    return jsonResponse({ tasks: page.rows.map(view), nextCursor: page.next ? encodeCursor(sort, page.next) : null });
  }
  if (route === "/stats") {
    expect(get, "GET");
    const filter = readFilter(params);
    const counts = await countByStatusAndTool(catalog(deps), filter, Date.now());
    const byStatus: Record<string, number> = {};
    for (const { status, count } of counts) byStatus[status] = (byStatus[status] ?? 0) + count;
    return jsonResponse({ counts, byStatus, total: counts.reduce((sum, { count }) => sum + count, 0) });
  }
  if (route === "/stuck") {
    expect(get, "GET");
    allowOnly(params, ["workingFor", "inputFor", "alarmGrace", "limit"]);
    const thresholds = {
      workingMs: readDuration("workingFor", params.get("workingFor"), STUCK_WORKING_MS),
      inputMs: readDuration("inputFor", params.get("inputFor"), STUCK_INPUT_MS),
      alarmGraceMs: readDuration("alarmGrace", params.get("alarmGrace"), STUCK_ALARM_GRACE_MS),
    };
    const rows = await stuckRows(catalog(deps), thresholds, readLimit(params.get("limit")), Date.now());
    return jsonResponse({ thresholds, tasks: rows.map((row) => ({ ...view(row), reasons: row.reasons })) });
  }
  if (route === "/audit") {
    expect(get, "GET");
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
  if (route === "/limits") {
    expect(get, "GET");
    return jsonResponse(await serveLimits(params, deps.limits));
  }
  if (route === "/cancellations") {
    expect(method === "POST", "POST");
    noParams(params);
    return bulkCancel(await body(request, ["where", "dryRun"]), operator, deps);
  }
  const job = JOB_ROUTE.exec(route);
  if (job) {
    expect(get, "GET");
    const db = catalog(deps);
    const found = await readJob(db, job[1]!);
    if (!found) throw new OperatorError(404, "not_found", `no job ${job[1]}`);
    if (isStalled(found, Date.now())) deps.waitUntil?.(runJob(db, deps.runners(), found));
    return jsonResponse({ job: jobView(found) });
  }
  if (route === "/reconcile") {
    expect(method === "POST", "POST");
    noParams(params);
    return reconcile(await body(request, ["where", "limit"]), operator, deps);
  }
  const task = TASK_ROUTE.exec(route);
  if (task) {
    const taskId = task[1]!;
    if (task[2] === "/history") {
      expect(get, "GET");
      allowOnly(params, ["principal"]);
      return history(taskId, params.get("principal"), deps);
    }
    if (task[2]) {
      expect(method === "POST", "POST");
      noParams(params);
      return cancelOne(taskId, operator, deps);
    }
    expect(get, "GET");
    allowOnly(params, ["principal"]);
    return detail(taskId, params.get("principal"), deps);
  }
  throw new OperatorError(404, "not_found", `no operator route ${route.slice(0, 100)}`);
}

function expect(ok: boolean, method: string): void {
  if (!ok) throw new OperatorError(405, "method_not_allowed", `use ${method} here`);
}

function noParams(params: URLSearchParams): void {
  allowOnly(params, []);
}

function allowOnly(params: URLSearchParams, allowed: readonly string[]): void {
  for (const key of params.keys()) {
    if (!allowed.includes(key)) {
      throw new OperatorError(400, "unknown_filter", `unknown parameter "${key.slice(0, 64)}" here`, key.slice(0, 64));
    }
  }
}

function catalog(deps: OperatorDeps): D1Database {
  if (!deps.db) {
    throw new OperatorError(
      503,
      "catalog_off",
      "the task catalog is off: bind a D1 database as TASK_CATALOG (durableMcp's catalog option) to list, count and act in bulk",
    );
  }
  return deps.db;
}

async function body(request: Request, allowed: readonly string[]): Promise<Record<string, unknown>> {
  const read = await readJsonBody(request, { maxBytes: MAX_OPERATOR_BODY_BYTES });
  if (read.kind !== "json" || read.value === null || typeof read.value !== "object" || Array.isArray(read.value)) {
    throw new OperatorError(
      400,
      "invalid_body",
      `the body must be a JSON object of at most ${MAX_OPERATOR_BODY_BYTES} bytes`,
    );
  }
  const value = read.value as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new OperatorError(
        400,
        "unknown_filter",
        `unknown field "${key.slice(0, 64)}"; expected ${allowed.join(", ")}`,
        key.slice(0, 64),
      );
    }
  }
  return value;
}

async function bulkCancel(input: Record<string, unknown>, operator: Operator, deps: OperatorDeps): Promise<Response> {
  const db = catalog(deps);
  if (input.where === undefined) {
    throw new OperatorError(
      400,
      "filter_required",
      "a bulk cancel needs a where filter (use status=working to mean every live task)",
      "where",
    );
  }
  const filter = readFilter(input.where as Parameters<typeof readFilter>[0]);
  if (isEmptyFilter(filter)) {
    throw new OperatorError(400, "filter_required", "a bulk cancel needs a non-empty where filter", "where");
  }
  if (input.dryRun !== undefined && typeof input.dryRun !== "boolean") {
    throw new OperatorError(400, "invalid_body", "dryRun must be true or false", "dryRun");
  }
  const now = Date.now();
  const matching = await countMatching(db, cancellable(filter, now), now);
  if (input.dryRun === true)
    return jsonResponse({ dryRun: true, where: filter, count: matching, maxTasks: MAX_BULK_TASKS });
  if (matching > MAX_BULK_TASKS) {
    throw new OperatorError(
      400,
      "too_many_tasks",
      `${matching} live tasks match; a bulk cancel takes at most ${MAX_BULK_TASKS}: narrow the filter (e.g. createdBefore)`,
      "where",
    );
  }
  const job = await createJob(db, operator.name, filter, matching);
  await appendAudit(db, {
    actor: operator.name,
    action: "bulk_cancel_started",
    target: { jobId: job.jobId, where: filter },
    outcome: { total: matching },
  });
  if (job.state === "running") {
    const run = runJob(db, deps.runners(), job, job.updatedAt);
    if (deps.waitUntil) deps.waitUntil(run);
    else return jsonResponse({ job: jobView(await run) }, 200);
  }
  return jsonResponse({ job: jobView(job) }, 202);
}

async function reconcile(input: Record<string, unknown>, operator: Operator, deps: OperatorDeps): Promise<Response> {
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

async function principalOf(taskId: string, given: string | null, deps: OperatorDeps): Promise<string> {
  if (given !== null) return given;
  const row = deps.db ? await rowOf(deps.db, taskId) : null;
  if (!row) {
    throw new OperatorError(
      404,
      "not_found",
      deps.db ? `the catalog has no task ${taskId}` : `the catalog is off: give ?principal= to read task ${taskId}`,
    );
  }
  return row.principal;
}

async function detail(taskId: string, principal: string | null, deps: OperatorDeps): Promise<Response> {
  const owner = await principalOf(taskId, principal, deps);
  const access = { taskId, principal: owner };
  const runners = deps.runners();
  const [inspected, withSteps] = await Promise.all([runners.inspect(access), runners.get(access, { steps: true })]);
  if (!inspected || !withSteps) throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  const row = deps.db ? await rowOf(deps.db, taskId) : null;
  return jsonResponse({ tool: inspected.tool, principal: owner, task: withSteps, catalog: row ? view(row) : null });
}

/** The task's history (the replay check's format), read from its runner; never the step-key salt. */
async function history(taskId: string, principal: string | null, deps: OperatorDeps): Promise<Response> {
  const owner = await principalOf(taskId, principal, deps);
  try {
    return jsonResponse(await exportTaskHistory(deps.runners(), taskId, { principal: owner }));
  } catch (error) {
    if (!(error instanceof TaskHistoryError)) throw error;
    if (error.problem === "too_large") throw new OperatorError(413, "too_large", error.message);
    throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  }
}

async function cancelOne(taskId: string, operator: Operator, deps: OperatorDeps): Promise<Response> {
  const db = catalog(deps);
  const owner = await principalOf(taskId, null, deps);
  const known = await deps.runners().cancel({ taskId, principal: owner });
  if (!known) throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  const task = await deps.runners().get({ taskId, principal: owner });
  await appendAudit(db, {
    actor: operator.name,
    action: "cancel",
    target: { taskId },
    taskIds: [taskId],
    outcome: { status: task?.status ?? "unknown" },
  });
  return jsonResponse({ taskId, status: task?.status ?? null });
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
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

function jobView(job: BulkJob) {
  return {
    jobId: job.jobId,
    kind: job.kind,
    actor: job.actor,
    where: job.filter,
    state: job.state,
    total: job.total,
    done: job.done,
    failed: job.failed,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
  };
}
