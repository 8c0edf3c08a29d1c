// The operator API's actions of part 2 (issue 29) over the catalog fixture: pause / resume, restart from a step and
// retry, one task at a time and by filter as a bulk job with a dry run and progress, each in the audit log; and bad
// input refused in the one envelope with nothing changed. Real TaskRunners, real local D1.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { writeCatalogRows } from "../../src/catalog/catalog-writer.js";
import { newTaskId } from "../../src/ids.js";
import { LINKS_META } from "../../src/wire/meta-keys.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { applyCatalogMigrations, catalogRow, createCatalogTask, waitForRow, db } from "./helpers.js";

beforeAll(applyCatalogMigrations);

const BASE = "http://fixture.test/catalog/operator";
const unique = (name: string) => `${name}-${newTaskId().slice(0, 8)}`;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function operator(path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await SELF.fetch(`${BASE}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

async function finishedReport(owner: string, customer: string): Promise<string> {
  const taskId = await createCatalogTask("build_report", { customer, pages: 2 }, owner);
  await waitForRow(taskId, (row) => row?.status === "completed");
  return taskId;
}

async function auditEntries(): Promise<Array<{ action: string; target: any; taskIds: string[]; outcome: any }>> {
  return (await operator("/audit?limit=100")).body.entries;
}

describe("one task", () => {
  it("restarts a finished task from a step as a new linked task, once per request id, and audits it", async () => {
    const owner = unique("op-restart");
    const original = await finishedReport(owner, "acme");
    const reply = await operator(`/tasks/${original}/restart`, { fromStep: "send", requestId: "r-1" });
    expect(reply).toMatchObject({
      status: 200,
      body: { taskId: original, newTaskId: expect.any(String), fromStep: "send" },
    });
    const created = reply.body.newTaskId as string;
    expect(await operator(`/tasks/${original}/restart`, { fromStep: "send", requestId: "r-1" })).toMatchObject({
      body: { newTaskId: created },
    });
    const row = await waitForRow(created, (r) => r?.status === "completed");
    expect(row).toMatchObject({ principal: owner, tool: "build_report", tags: { customer: "acme", big: "false" } });
    const detail = await operator(`/tasks/${created}`);
    expect(detail.body.task._meta[LINKS_META]).toEqual({ restartedFrom: { taskId: original, fromStep: "send" } });
    // Only `send` ran in the new task: `render` and the cool-down were kept.
    const steps = detail.body.task._meta["durable-mcp-server/steps"].steps.map((s: { name: string }) => s.name);
    expect(steps).toEqual(["render", "cool-down", "send"]);
    expect((await operator(`/tasks/${original}`)).body.task._meta[LINKS_META]).toEqual({
      restartedAs: [{ taskId: created, fromStep: "send", at: expect.any(String) }],
    });

    const retried = await operator(`/tasks/${original}/retry`, {});
    expect(retried).toMatchObject({ status: 200, body: { newTaskId: expect.any(String) } });
    await waitForRow(retried.body.newTaskId, (r) => r?.status === "completed");
    const audit = await auditEntries();
    expect(audit).toContainEqual(
      expect.objectContaining({
        action: "restart",
        target: { taskId: original, fromStep: "send" },
        taskIds: [original, created],
      }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({ action: "retry", taskIds: [original, retried.body.newTaskId] }),
    );
  });

  it("pauses a running task (working, says paused) and resumes it to the end, each audited", async () => {
    const owner = unique("op-pause");
    const taskId = await createCatalogTask("build_report", { customer: "acme", pages: 2, ms: 400 }, owner);
    await waitForRow(taskId, (row) => row?.currentStep === "cool-down");
    expect(await operator(`/tasks/${taskId}/pause`, {})).toMatchObject({
      status: 200,
      body: { taskId, status: "working", changed: true },
    });
    await waitForRow(taskId, (row) => row?.statusMessage?.startsWith("paused by an operator") ?? false);
    await delay(700);
    expect((await catalogRow(taskId))?.status).toBe("working");
    expect(await operator(`/tasks/${taskId}/resume`, {})).toMatchObject({ status: 200, body: { changed: true } });
    await waitForRow(taskId, (row) => row?.status === "completed");
    const actions = (await auditEntries()).filter((e) => e.target?.taskId === taskId).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["pause", "resume"]));
  });
});

describe("bad input", () => {
  it("is refused in the one envelope, and changes nothing", async () => {
    const owner = unique("op-bad");
    const running = await createCatalogTask("wait_long", { customer: "x" }, owner);
    await waitForRow(running, (row) => row?.status === "working");
    const finished = await finishedReport(owner, "acme");
    const ghost = newTaskId();
    const old = Date.now() - 60_000;
    await writeCatalogRows(db, [
      {
        taskId: ghost,
        tool: "build_report",
        principal: owner,
        status: "completed",
        statusMessage: null,
        progress: null,
        createdAt: old,
        updatedAt: old,
        finishedAt: old,
        durationMs: 1,
        currentStep: null,
        stepState: null,
        stepUpdatedAt: null,
        attempts: 0,
        retries: 0,
        nextWakeAt: null,
        errorCode: null,
        tags: {},
        purgeAt: null,
        version: 1,
      },
    ]);
    const before = (await auditEntries()).length;
    const cases: Array<[string, unknown, number, string, string?]> = [
      [`/tasks/${running}/restart`, { fromStep: "long" }, 409, "conflict"],
      [`/tasks/${running}/retry`, {}, 409, "conflict"],
      [`/tasks/${finished}/restart`, { fromStep: "nope" }, 400, "unknown_step", "fromStep"],
      [`/tasks/${finished}/restart`, {}, 400, "invalid_body", "fromStep"],
      [`/tasks/${finished}/restart`, { fromStep: "send", extra: 1 }, 400, "unknown_filter", "extra"],
      [`/tasks/${finished}/pause`, {}, 409, "conflict"],
      [`/tasks/${finished}/resume`, {}, 409, "conflict"],
      [`/tasks/${ghost}/restart`, { fromStep: "send" }, 410, "purged"],
      [`/tasks/${newTaskId()}/pause`, {}, 404, "not_found"],
      ["/jobs", { action: "restart", where: {} }, 400, "invalid_body", "fromStep"],
      ["/jobs", { action: "pause" }, 400, "filter_required", "where"],
      ["/jobs", { action: "pause", where: {} }, 400, "filter_required", "where"],
      ["/jobs", { action: "explode", where: { tool: "x" } }, 400, "invalid_body", "action"],
      ["/jobs", { action: "pause", where: { tool: "x" }, fromStep: "a" }, 400, "invalid_body", "fromStep"],
    ];
    for (const [path, body, status, code, param] of cases) {
      const reply = await operator(path, body);
      expect({ path, body, status: reply.status, error: reply.body.error }).toEqual({
        path,
        body,
        status,
        error: { code, message: expect.any(String), ...(param ? { param } : {}) },
      });
    }
    // Nothing changed: no audit entry, no link, the running task still runs.
    expect((await auditEntries()).length).toBe(before);
    expect((await operator(`/tasks/${finished}`)).body.task._meta?.[LINKS_META]).toBeUndefined();
    expect((await catalogRow(running))?.status).toBe("working");
    await operator(`/tasks/${running}/cancel`, {});
  });
});

describe("by filter", () => {
  it("restarts the finished tasks of a filter from a step as a job, with a dry run and progress", async () => {
    const owner = unique("op-bulk");
    const originals = await Promise.all([1, 2, 3].map(() => finishedReport(owner, "bulk")));
    const where = { principal: owner, tool: "build_report", status: "completed" };
    const dry = await operator("/jobs", { action: "restart", fromStep: "send", where, dryRun: true });
    expect(dry).toMatchObject({ status: 200, body: { dryRun: true, action: "restart", count: 3 } });
    let { job } = (await operator("/jobs", { action: "restart", fromStep: "send", where })).body;
    expect(job).toMatchObject({ action: "restart", fromStep: "send", total: 3 });
    while (job.state !== "done") {
      await delay(50);
      ({ job } = (await operator(`/jobs/${job.jobId}`)).body);
    }
    expect(job).toMatchObject({ done: 3, failed: 0 });
    for (const original of originals) {
      const links = (await operator(`/tasks/${original}`)).body.task._meta[LINKS_META];
      expect(links.restartedAs).toHaveLength(1);
    }
    const finished = (await auditEntries()).find(
      (e) => e.action === "bulk_restart_finished" && e.target.jobId === job.jobId,
    );
    expect(finished?.taskIds.toSorted()).toEqual(originals.toSorted());
  });

  it("pauses and resumes the live tasks of a filter, and leaves the finished ones alone", async () => {
    const owner = unique("op-bulk-pause");
    const live = await Promise.all(
      [1, 2].map(() => createCatalogTask("build_report", { customer: "p", pages: 1, ms: 400 }, owner)),
    );
    const done = await finishedReport(owner, "p");
    for (const taskId of live) await waitForRow(taskId, (row) => row?.currentStep === "cool-down");
    const paused = await operator("/jobs", { action: "pause", where: { principal: owner } });
    let { job } = paused.body;
    while (job.state !== "done") {
      await delay(50);
      ({ job } = (await operator(`/jobs/${job.jobId}`)).body);
    }
    expect(job).toMatchObject({ total: 2, done: 2 });
    await delay(600);
    for (const taskId of live) expect((await catalogRow(taskId))?.status).toBe("working");
    expect((await catalogRow(done))?.status).toBe("completed");
    ({ job } = (await operator("/jobs", { action: "resume", where: { principal: owner } })).body);
    while (job.state !== "done") {
      await delay(50);
      ({ job } = (await operator(`/jobs/${job.jobId}`)).body);
    }
    for (const taskId of live) await waitForRow(taskId, (row) => row?.status === "completed");
  });
});
