// Bulk jobs run by the BulkDriver Durable Object: nobody reads the job (its progress is read straight from D1, which
// advances nothing), yet it finishes, slice by slice in the driver's alarms, every task acted on once and named in
// the slices' audit entries; a driver evicted mid-slice takes the job up again by itself. Real TaskRunners, a real
// driver and its alarms, local D1. The seam driver's slices are 40 tasks (a real one's are 1,000), so 100 tasks
// make three slices.
import { runInDurableObject, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { createJob, eligible, readJob, type BulkJob } from "../../src/operator/bulk-cancel.js";
import { countMatching } from "../../src/catalog/catalog-queries.js";
import type { BulkDriverRpc } from "../../src/operator/bulk-driver.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { CRASH_ACTOR, CRASH_AFTER_DONE, SEAM_SLICE_TASKS } from "../fixtures/bulk-driver-app.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { applyCatalogMigrations, catalogEnv, db } from "./helpers.js";

beforeAll(applyCatalogMigrations);

const DAY = 24 * 60 * 60_000;
const env = catalogEnv as typeof catalogEnv & { SEAM_BULK_DRIVER: DurableObjectNamespace };

async function operator(prefix: string, route: string, body?: unknown) {
  const response = await SELF.fetch(`http://fixture.test/${prefix}/operator${route}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** `n` live wait_long tasks of a new principal, created on their runners, each filed in the catalog. */
async function liveTasks(n: number, label: string, timeoutMs = 120_000): Promise<{ owner: string; ids: string[] }> {
  const owner = `${label}-${newTaskId().slice(0, 8)}`;
  const runners = new RunnerClient(catalogEnv.CATALOG_TASK_RUNNER);
  const ids = Array.from({ length: n }, () => newTaskId());
  const queue = [...ids];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let taskId = queue.shift(); taskId !== undefined; taskId = queue.shift()) {
        await runners.create({
          taskId,
          principal: owner,
          tool: "wait_long",
          input: JSON.stringify({ customer: label }),
          ttlMs: DAY,
          pollIntervalMs: 1000,
          origin: "http://fixture.test",
          clientCapabilities: {},
        });
      }
    }),
  );
  await waitFor(`${n} rows of ${owner} filed`, async () => (await statusCount(owner, "working")) === n, timeoutMs);
  return { owner, ids };
}

async function statusCount(owner: string, status: string): Promise<number> {
  const row = await db
    .prepare("SELECT COUNT(*) AS n FROM durable_mcp_tasks WHERE principal = ? AND status = ?")
    .bind(owner, status)
    .first<{ n: number }>();
  return row!.n;
}

async function waitFor(what: string, done: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Reads the job's row from D1 (not through the API: a read there may advance a job) until it is done. */
async function jobDone(jobId: string, timeoutMs = 60_000): Promise<BulkJob> {
  let job: BulkJob | null = null;
  await waitFor(`job ${jobId} done`, async () => (job = await readJob(db, jobId))?.state === "done", timeoutMs);
  return job!;
}

async function auditOf(jobId: string) {
  const rows = await db
    .prepare("SELECT action, task_ids FROM durable_mcp_audit WHERE target LIKE ? ORDER BY seq")
    .bind(`%${jobId}%`)
    .all<{ action: string; task_ids: string }>();
  return rows.results.map((row) => ({ action: row.action, taskIds: JSON.parse(row.task_ids) as string[] }));
}

describe("bulk jobs with a BulkDriver", () => {
  it("GET /operator says whether jobs are driven or advance on read", async () => {
    expect((await operator("catalog-seam", "")).body).toMatchObject({ catalog: "on", jobs: "driven" });
    expect((await operator("catalog-driven", "")).body).toMatchObject({ jobs: "driven" });
    expect((await operator("catalog", "")).body).toMatchObject({ jobs: "on-read" });
  });

  it("a job started over the API finishes with no reader: every slice run from the driver's alarm and audited", async () => {
    const { owner, ids } = await liveTasks(100, "driven");
    const started = await operator("catalog-seam", "/cancellations", { where: { principal: [owner] } });
    expect(started.status).toBe(202);
    expect(started.body.job).toMatchObject({ state: "running", total: 100, done: 0 });

    const job = await jobDone(started.body.job.jobId);
    expect(job).toMatchObject({ total: 100, done: 100, failed: 0 });
    const audit = await auditOf(job.jobId);
    const slices = Math.ceil(100 / SEAM_SLICE_TASKS);
    expect(audit.map((entry) => entry.action)).toEqual([
      "bulk_cancel_started",
      ...Array<string>(slices - 1).fill("bulk_cancel_progress"),
      "bulk_cancel_finished",
    ]);
    const named = audit.flatMap((entry) => entry.taskIds);
    expect(named.toSorted()).toEqual(ids.toSorted());
    for (const entry of audit.slice(1, -1)) expect(entry.taskIds).toHaveLength(SEAM_SLICE_TASKS);
    await waitFor("every row cancelled", async () => (await statusCount(owner, "cancelled")) === 100);

    // The driver keeps nothing once its job is done.
    const driver = env.SEAM_BULK_DRIVER.get(env.SEAM_BULK_DRIVER.idFromName(job.jobId));
    const kept = await runInDurableObject(driver, async (_instance, state) => ({
      keys: [...(await state.storage.list()).keys()],
      alarm: await state.storage.getAlarm(),
    }));
    expect(kept).toEqual({ keys: [], alarm: null });
  });

  it("a driver evicted mid-slice resumes the job by itself: none missed, none twice, the dead slice audited", async () => {
    const { owner, ids } = await liveTasks(100, "evicted");
    const filter = { principal: [owner] };
    const now = Date.now();
    const total = await countMatching(db, eligible("cancel", filter, now), now);
    expect(total).toBe(100);
    const job = await createJob(db, CRASH_ACTOR, { kind: "cancel", fromStep: null }, filter, total, true);
    const driver = env.SEAM_BULK_DRIVER.get(env.SEAM_BULK_DRIVER.idFromName(job.jobId)) as unknown as BulkDriverRpc;
    await driver.drive(job.jobId);

    const done = await jobDone(job.jobId);
    expect(done).toMatchObject({ total: 100, done: 100, failed: 0 });
    const audit = await auditOf(job.jobId);
    // Slice 1 (40 tasks) ended normally; slice 2 died after its first batch of 16 (filed as interrupted when the
    // driver took the job up again); the rest (44) ran in a slice of 40 and one of 4.
    expect(audit.map((entry) => entry.action)).toEqual([
      "bulk_cancel_progress",
      "bulk_cancel_interrupted",
      "bulk_cancel_progress",
      "bulk_cancel_finished",
    ]);
    expect(audit.map((entry) => entry.taskIds.length)).toEqual([
      SEAM_SLICE_TASKS,
      CRASH_AFTER_DONE - SEAM_SLICE_TASKS,
      SEAM_SLICE_TASKS,
      100 - CRASH_AFTER_DONE - SEAM_SLICE_TASKS,
    ]);
    const named = audit.flatMap((entry) => entry.taskIds);
    expect(named).toHaveLength(100);
    expect(named.toSorted()).toEqual(ids.toSorted());
    await waitFor("every row cancelled", async () => (await statusCount(owner, "cancelled")) === 100);
  });

  it("a job handed to a driver again (a read of a stale job, a second drive) runs no slice twice", async () => {
    const { owner, ids } = await liveTasks(30, "again");
    const started = await operator("catalog-seam", "/cancellations", { where: { principal: [owner] } });
    const jobId = started.body.job.jobId as string;
    const driver = env.SEAM_BULK_DRIVER.get(env.SEAM_BULK_DRIVER.idFromName(jobId)) as unknown as BulkDriverRpc;
    await Promise.all([driver.drive(jobId), driver.drive(jobId), operator("catalog-seam", `/jobs/${jobId}`)]);
    const job = await jobDone(jobId);
    expect(job).toMatchObject({ total: 30, done: 30, failed: 0 });
    const named = (await auditOf(jobId)).flatMap((entry) => entry.taskIds);
    expect(named.toSorted()).toEqual(ids.toSorted());
  });
});
