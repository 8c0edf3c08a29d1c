import { whereClause, type CatalogFilter } from "../catalog/catalog-queries.js";
import { ensureCatalogSchema } from "../catalog/catalog-schema.js";
import { BULK_CONCURRENCY, BULK_RUN_TASKS, BULK_STALL_MS } from "../limits.js";
import type { TaskStatus } from "../wire/task-shapes.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { appendAudit } from "./audit-log.js";
import { applyAction, type BulkAction } from "./task-actions.js";

// A bulk action by filter, as a job (cancel, pause, resume, retry, restart): the matching tasks created before the
// job, in task-id order, at most `total` of them, BULK_CONCURRENCY at a time. Progress is saved in D1 after every
// batch (done, failed, where it got to), so a job whose Worker went away is resumed by the next request that reads
// it, and doing a batch again changes nothing more: a second cancel, pause or resume is a no-op on its runner, and a
// restart or retry is keyed by the job's id (the same new task again). One run takes at most BULK_RUN_TASKS tasks (a
// Worker invocation's subrequest and D1 query limits), then leaves the job "waiting": where the BulkDriver is bound
// (bulk-driver.ts) its next alarm runs the next slice, with no reader; otherwise the next read of it (the CLI polls)
// runs the next slice at once.

export interface BulkJob {
  jobId: string;
  kind: BulkAction;
  /** A restart's step label; null for the other actions. */
  fromStep: string | null;
  actor: string;
  filter: CatalogFilter;
  /** "waiting": between two runs, its next run not yet started (shown as running). */
  state: "running" | "waiting" | "done";
  total: number;
  done: number;
  failed: number;
  createdAt: number;
  updatedAt: number;
  /** Only tasks created before this instant are taken (a runaway batch's later tasks need another job). */
  cutoff: number;
  afterId: string;
}

interface JobRow extends Record<string, unknown> {
  job_id: string;
  kind: string;
  actor: string;
  filter: string;
  state: string;
  total: number;
  done: number;
  failed: number;
  created_at: number;
  updated_at: number;
  cutoff: number;
  after_id: string;
}

/**
 * The `filter` column: a cancel job's filter as it always was; another action's `{ where, fromStep }` (a filter has no
 * `where` field, so the two never meet). The catalog's tables stay as part 1 made them.
 */
function filterColumn(job: Pick<BulkJob, "kind" | "filter" | "fromStep">): string {
  return JSON.stringify(job.kind === "cancel" ? job.filter : { where: job.filter, fromStep: job.fromStep });
}

function fromJobRow(row: JobRow): BulkJob {
  const stored = JSON.parse(row.filter) as CatalogFilter | { where: CatalogFilter; fromStep: string | null };
  const wrapped = "where" in stored;
  return {
    jobId: row.job_id,
    kind: row.kind as BulkAction,
    fromStep: wrapped ? stored.fromStep : null,
    actor: row.actor,
    filter: wrapped ? stored.where : stored,
    state: row.state as BulkJob["state"],
    total: row.total,
    done: row.done,
    failed: row.failed,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cutoff: row.cutoff,
    afterId: row.after_id,
  };
}

const LIVE: readonly TaskStatus[] = ["working", "input_required"];
const FINAL: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

/**
 * The tasks an action may take, of those the filter matches, created before `cutoff`: live ones for cancel, pause
 * and resume (a bulk action never touches a finished one), final ones for retry and restart (never a running one).
 */
export function eligible(action: BulkAction, filter: CatalogFilter, cutoff: number): CatalogFilter {
  const allowed = action === "retry" || action === "restart" ? FINAL : LIVE;
  const asked = (filter.status ?? allowed).filter((s) => allowed.includes(s));
  return {
    ...filter,
    // A filter naming only statuses the action cannot take matches nothing (an impossible status), not every task.
    status: asked.length > 0 ? asked : filter.status ? ["none" as TaskStatus] : [...allowed],
    createdBefore: Math.min(filter.createdBefore ?? Infinity, cutoff + 1),
  };
}

export async function createJob(
  db: D1Database,
  actor: string,
  action: { kind: BulkAction; fromStep: string | null },
  filter: CatalogFilter,
  total: number,
  /** Handed to a driver: created "waiting", so that the driver's conditional claim takes it. */
  driven = false,
): Promise<BulkJob> {
  await ensureCatalogSchema(db);
  const now = Date.now();
  const job: BulkJob = {
    jobId: crypto.randomUUID(),
    kind: action.kind,
    fromStep: action.fromStep,
    actor,
    filter,
    state: total === 0 ? "done" : driven ? "waiting" : "running",
    total,
    done: 0,
    failed: 0,
    createdAt: now,
    updatedAt: now,
    cutoff: now,
    afterId: "",
  };
  await db
    .prepare(
      `INSERT INTO durable_mcp_jobs (job_id, kind, actor, filter, state, total, done, failed, created_at, updated_at,
         cutoff, after_id) VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, '')`,
    )
    .bind(job.jobId, job.kind, actor, filterColumn(job), job.state, total, now, now, now)
    .run();
  return job;
}

export async function readJob(db: D1Database, jobId: string): Promise<BulkJob | null> {
  await ensureCatalogSchema(db);
  const row = await db.prepare("SELECT * FROM durable_mcp_jobs WHERE job_id = ?").bind(jobId).first<JobRow>();
  return row ? fromJobRow(row) : null;
}

/**
 * A job waiting for its next run, or a running one nobody advanced for BULK_STALL_MS (its Worker went away): the
 * reader runs it.
 */
export function isStalled(job: BulkJob, now: number): boolean {
  return job.state === "waiting" || (job.state === "running" && now - job.updatedAt >= BULK_STALL_MS);
}

/**
 * Runs the job from where it got to, for at most `maxTasks` tasks (to its end, or "waiting" for the next run). Claims
 * it first (a conditional update of `updated_at`), so two resumers never run it side by side.
 */
export async function runJob(
  db: D1Database,
  runners: RunnerClient,
  job: BulkJob,
  claimedAt?: number,
  maxTasks = BULK_RUN_TASKS,
  /**
   * Called after each batch's progress is saved, with the batch's tasks acted on: the driver keeps them until the run's
   * audit entry is written (so a run that dies mid-slice is still audited) and pushes its safety alarm on.
   */
  onBatch?: (job: BulkJob, acted: string[]) => Promise<void> | void,
): Promise<BulkJob> {
  let current = job;
  if (claimedAt === undefined) {
    const now = Date.now();
    const claim = await db
      .prepare(
        `UPDATE durable_mcp_jobs SET updated_at = ?, state = 'running'
         WHERE job_id = ? AND updated_at = ? AND state IN ('running', 'waiting')`,
      )
      .bind(now, job.jobId, job.updatedAt)
      .run();
    if ((claim.meta.changes ?? 0) === 0) return (await readJob(db, job.jobId)) ?? job;
    current = { ...job, state: "running", updatedAt: now };
  }
  const filter = eligible(current.kind, current.filter, current.cutoff);
  const acted: string[] = [];
  let taken = 0;
  while (current.state === "running") {
    if (taken >= maxTasks) {
      current = await saveProgress(db, current, { state: "waiting" });
      break;
    }
    const remaining = Math.min(current.total - current.done - current.failed, maxTasks - taken);
    const page = await pageAfter(db, filter, current.afterId, Math.min(BULK_CONCURRENCY, remaining));
    if (page.length === 0) {
      current = await saveProgress(db, current, { state: "done" });
      break;
    }
    // Keyed by the job: a batch done again (a resumed job) restarts each task into the same new task.
    const outcomes = await Promise.allSettled(
      page.map((task) =>
        applyAction(runners, current.kind, task, { fromStep: current.fromStep, requestKey: current.jobId }),
      ),
    );
    taken += page.length;
    let failed = 0;
    const batch: string[] = [];
    outcomes.forEach((outcome, i) => {
      if (outcome.status === "fulfilled" && outcome.value.ok) batch.push(page[i]!.taskId);
      else failed++;
    });
    acted.push(...batch);
    const done = batch.length;
    current = await saveProgress(db, current, {
      done: current.done + done,
      failed: current.failed + failed,
      afterId: page.at(-1)!.taskId,
    });
    if (current.done + current.failed >= current.total) current = await saveProgress(db, current, { state: "done" });
    await onBatch?.(current, batch);
  }
  // Each run's tasks are audited: the slices' entries together name every task the job cancelled.
  await auditRun(db, current, acted);
  return current;
}

/**
 * A run's audit entry: the tasks it acted on and the job's progress after it. `interrupted`: the tasks of a run that
 * died before its own entry (the driver files them when it takes the job over).
 */
export async function auditRun(db: D1Database, job: BulkJob, taskIds: string[], interrupted = false): Promise<void> {
  const phase = interrupted ? "interrupted" : job.state === "done" ? "finished" : "progress";
  await appendAudit(db, {
    actor: job.actor,
    action: `bulk_${job.kind}_${phase}`,
    target: { jobId: job.jobId, where: job.filter, ...(job.fromStep ? { fromStep: job.fromStep } : {}) },
    taskIds,
    outcome: { done: job.done, failed: job.failed, total: job.total },
  });
}

async function pageAfter(
  db: D1Database,
  filter: CatalogFilter,
  afterId: string,
  limit: number,
): Promise<Array<{ taskId: string; principal: string }>> {
  if (limit <= 0) return [];
  const where = whereClause(filter, Date.now());
  const result = await db
    .prepare(
      `SELECT task_id, principal FROM durable_mcp_tasks WHERE ${where.sql} AND task_id > ? ORDER BY task_id LIMIT ?`,
    )
    .bind(...where.params, afterId, limit)
    .all<{ task_id: string; principal: string }>();
  return result.results.map((row) => ({ taskId: row.task_id, principal: row.principal }));
}

async function saveProgress(db: D1Database, job: BulkJob, change: Partial<BulkJob>): Promise<BulkJob> {
  const next = { ...job, ...change, updatedAt: Date.now() };
  await db
    .prepare(
      "UPDATE durable_mcp_jobs SET state = ?, done = ?, failed = ?, after_id = ?, updated_at = ? WHERE job_id = ?",
    )
    .bind(next.state, next.done, next.failed, next.afterId, next.updatedAt, next.jobId)
    .run();
  return next;
}
