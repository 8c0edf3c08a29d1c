// A bulk cancel runs in bounded slices (BULK_RUN_TASKS per Worker invocation): a slice leaves the job waiting, the
// next read of the job runs the next slice, and the slices' audit entries together name every task cancelled.
// Real TaskRunners and local D1; the slice size is passed small so that five tasks take three runs.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { createJob, eligible, isStalled, readJob, runJob } from "../../src/operator/bulk-cancel.js";
import { countMatching } from "../../src/catalog/catalog-queries.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { applyCatalogMigrations, catalogEnv, createCatalogTask, db, waitForRow } from "./helpers.js";

beforeAll(applyCatalogMigrations);

async function readJobOverApi(jobId: string) {
  const response = await SELF.fetch(`http://fixture.test/catalog/operator/cancellations/${jobId}`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { job: { state: string; done: number; failed: number; total: number } }).job;
}

describe("a bulk cancel in slices", () => {
  it("stops after its slice, waiting; each read runs the next slice until every task is cancelled", async () => {
    const owner = `slices-${newTaskId().slice(0, 8)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createCatalogTask("wait_long", { customer: "slices" }, owner));
    for (const id of ids) await waitForRow(id, (row) => row !== null);
    const filter = { principal: [owner] };
    const now = Date.now();
    const total = await countMatching(db, eligible("cancel", filter, now), now);
    expect(total).toBe(5);

    const runners = new RunnerClient(catalogEnv.CATALOG_TASK_RUNNER);
    const job = await createJob(db, "slices-test", { kind: "cancel", fromStep: null }, filter, total);
    const first = await runJob(db, runners, job, job.updatedAt, 2);
    expect(first).toMatchObject({ state: "waiting", done: 2, failed: 0 });
    expect(isStalled(first, Date.now())).toBe(true);
    // Shown as running; reading it runs the next slice (in the request's waitUntil), of the API's size: the rest.
    expect((await readJobOverApi(job.jobId)).state).toBe("running");
    let view = await readJobOverApi(job.jobId);
    for (let i = 0; view.state !== "done" && i < 500; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      view = await readJobOverApi(job.jobId);
    }
    expect(view).toMatchObject({ state: "done", total: 5, done: 5, failed: 0 });
    for (const id of ids) await waitForRow(id, (row) => row?.status === "cancelled");

    const audit = await db
      .prepare("SELECT action, task_ids FROM durable_mcp_audit WHERE target LIKE ? ORDER BY seq")
      .bind(`%${job.jobId}%`)
      .all<{ action: string; task_ids: string }>();
    const actions = audit.results.map((entry) => entry.action);
    expect(actions).toEqual(["bulk_cancel_progress", "bulk_cancel_finished"]);
    const named = audit.results.flatMap((entry) => JSON.parse(entry.task_ids) as string[]);
    expect(named.toSorted()).toEqual(ids.toSorted());
  });

  it("is claimed by one run only: a second run of the same waiting job changes nothing", async () => {
    const owner = `claim-${newTaskId().slice(0, 8)}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createCatalogTask("wait_long", { customer: "claim" }, owner));
    for (const id of ids) await waitForRow(id, (row) => row !== null);
    const runners = new RunnerClient(catalogEnv.CATALOG_TASK_RUNNER);
    const job = await createJob(db, "claim-test", { kind: "cancel", fromStep: null }, { principal: [owner] }, 3);
    const first = await runJob(db, runners, job, job.updatedAt, 1);
    expect(first.state).toBe("waiting");
    // Two resumers read the same waiting job: the first claim wins, the stale one returns the job as stored.
    const [a, b] = [await runJob(db, runners, first, undefined, 1), await runJob(db, runners, first, undefined, 1)];
    expect(a).toMatchObject({ state: "waiting", done: 2 });
    expect(b).toMatchObject({ done: 2 });
    expect(await readJob(db, job.jobId)).toMatchObject({ done: 2 });
    const last = await runJob(db, runners, a, undefined, 5);
    expect(last).toMatchObject({ state: "done", done: 3, failed: 0 });
  });
});
