// The operator API over the catalog fixture (test/fixtures/catalog-app.ts): its own token, apart from MCP callers;
// list, filters, cursor pages, counts, stuck tasks, detail from the runner, cancel, bulk cancel with a dry run and
// progress, reconcile, the audit log; and one error envelope for bad input. Real TaskRunners, real local D1.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { writeCatalogRows } from "../../src/catalog/catalog-writer.js";
import { newTaskId } from "../../src/ids.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { rpc } from "../jsonrpc.js";
import { applyCatalogMigrations, catalogRow, createCatalogTask, db, waitForRow } from "./helpers.js";

beforeAll(applyCatalogMigrations);

const BASE = "http://fixture.test/catalog/operator";

async function operator(
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; base?: string } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? OPERATOR_TOKEN : init.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await SELF.fetch(`${init.base ?? BASE}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

const unique = (name: string) => `${name}-${newTaskId().slice(0, 8)}`;

describe("who may operate", () => {
  it("takes the operator token, and refuses no token and an MCP caller's token with one envelope", async () => {
    expect(await operator("")).toMatchObject({ status: 200, body: { operator: "token", catalog: "on" } });
    expect(await operator("", { token: null })).toMatchObject({
      status: 401,
      body: { error: { code: "unauthorized" } },
    });
    expect(await operator("/tasks", { token: "alice" })).toMatchObject({
      status: 401,
      body: { error: { code: "unauthorized" } },
    });
  });

  it("refuses the operator token on the MCP path", async () => {
    const reply = await rpc(
      "tools/call",
      { name: "wait_long", arguments: { customer: "x" } },
      { principal: OPERATOR_TOKEN, path: "/catalog/mcp" },
    );
    expect(reply.status).toBe(401);
    expect(reply.body.error?.message).toMatch(/operator token/);
  });

  it("is served on loopback only when no operator option is configured", async () => {
    const local = await operator("", { token: null, base: "http://localhost/catalog-local/operator" });
    expect(local).toMatchObject({ status: 200, body: { operator: "local", catalog: "on" } });
    const remote = await operator("", { token: null, base: "http://fixture.test/catalog-local/operator" });
    expect(remote).toMatchObject({ status: 403, body: { error: { code: "operator_off" } } });
  });

  it("with a token option whose secret is not set, is served on loopback only", async () => {
    const local = await operator("", { token: null, base: "http://localhost/catalog-unset/operator" });
    expect(local).toMatchObject({ status: 200, body: { operator: "local" } });
    const remote = await operator("", { token: OPERATOR_TOKEN, base: "http://fixture.test/catalog-unset/operator" });
    expect(remote).toMatchObject({ status: 403, body: { error: { code: "operator_off" } } });
  });

  it("says the catalog is off where no D1 is bound, and still serves the rest", async () => {
    // The wire fixture binds no catalog; its operator API is unconfigured, so loopback only.
    const base = "http://localhost/operator";
    expect(await operator("", { token: null, base })).toMatchObject({ status: 200, body: { catalog: "off" } });
    expect(await operator("/tasks", { token: null, base })).toMatchObject({
      status: 503,
      body: { error: { code: "catalog_off" } },
    });
  });
});

describe("listing", () => {
  it("filters by principal, tool, tag, status, time and text, in cursor pages", async () => {
    const owner = unique("op-list");
    const ids = [
      await createCatalogTask("build_report", { customer: "acme", pages: 2 }, owner),
      await createCatalogTask("build_report", { customer: "acme", pages: 20 }, owner),
      await createCatalogTask("wait_long", { customer: "globex" }, owner),
    ];
    for (const id of ids.slice(0, 2)) await waitForRow(id, (row) => row?.status === "completed");
    await waitForRow(ids[2]!, (row) => row !== null);

    const acme = await operator(`/tasks?principal=${owner}&tag=customer=acme&sort=created`);
    expect(acme.status).toBe(200);
    expect(acme.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual(ids.slice(0, 2));
    expect(acme.body.tasks[1]).toMatchObject({ tool: "build_report", tags: { customer: "acme", big: "true" } });

    const big = await operator(`/tasks?principal=${owner}&tag=customer=acme&tag=big=true`);
    expect(big.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[1]]);
    const working = await operator(`/tasks?principal=${owner}&status=working,input_required&tool=wait_long`);
    expect(working.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[2]]);
    const text = await operator(`/tasks?q=${ids[0]}`);
    expect(text.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[0]]);
    const message = await operator(`/tasks?principal=${owner}&q=${encodeURIComponent("rendered 20 pages")}`);
    expect(message.body.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([ids[1]]);
    const future = await operator(`/tasks?principal=${owner}&createdAfter=${Date.now() + 60_000}`);
    expect(future.body.tasks).toEqual([]);
    const lastHour = await operator(`/tasks?principal=${owner}&createdAfter=1h`);
    expect(lastHour.body.tasks).toHaveLength(3);

    // Cursor pages, newest first, cover every task once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: any } = await operator(
        `/tasks?principal=${owner}&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.body.tasks.map((t: { taskId: string }) => t.taskId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids.toReversed());
    await rpc("tasks/cancel", { taskId: ids[2] }, { principal: owner, path: "/catalog/mcp" });
  });

  it("counts by status and tool", async () => {
    const owner = unique("op-stats");
    const done = await createCatalogTask("build_report", { customer: "initech", pages: 1 }, owner);
    const live = await createCatalogTask("wait_long", { customer: "initech" }, owner);
    await waitForRow(done, (row) => row?.status === "completed");
    await waitForRow(live, (row) => row !== null);
    const stats = await operator(`/stats?principal=${owner}`);
    expect(stats.body).toEqual({
      counts: [
        { status: "completed", tool: "build_report", count: 1 },
        { status: "working", tool: "wait_long", count: 1 },
      ],
      byStatus: { completed: 1, working: 1 },
      total: 2,
    });
    await rpc("tasks/cancel", { taskId: live }, { principal: owner, path: "/catalog/mcp" });
  });
});

describe("stuck tasks", () => {
  it("finds no progress, an overdue wake and an unanswered question, each with its reason", async () => {
    const owner = unique("op-stuck");
    const asking = await createCatalogTask("asks", {}, owner);
    await waitForRow(asking, (row) => row?.status === "input_required");
    const old = Date.now() - 3_600_000;
    const base = {
      tool: "t",
      principal: owner,
      statusMessage: null,
      progress: null,
      createdAt: old,
      updatedAt: old,
      finishedAt: null,
      durationMs: null,
      currentStep: "s",
      stepState: "running",
      stepUpdatedAt: old,
      attempts: 1,
      retries: 0,
      errorCode: null,
      tags: {},
      purgeAt: null,
      version: 1,
    };
    const silent = newTaskId();
    const overdue = newTaskId();
    await writeCatalogRows(db, [
      { ...base, taskId: silent, status: "working", nextWakeAt: null },
      {
        ...base,
        taskId: overdue,
        status: "working",
        nextWakeAt: old,
        updatedAt: Date.now(),
        stepUpdatedAt: Date.now(),
      },
    ]);
    const stuck = await operator("/stuck?workingFor=30m&inputFor=0&alarmGrace=1m&limit=500");
    expect(stuck.status).toBe(200);
    const reasons = Object.fromEntries(
      stuck.body.tasks.map((t: { taskId: string; reasons: string[] }) => [t.taskId, t.reasons]),
    );
    expect(reasons[silent]).toEqual(["no_progress"]);
    expect(reasons[overdue]).toEqual(["alarm_overdue"]);
    expect(reasons[asking]).toEqual(["input_unanswered"]);
    await rpc("tasks/cancel", { taskId: asking }, { principal: owner, path: "/catalog/mcp" });
  });
});

describe("one task", () => {
  it("is read from its runner, with its steps, and cancelled with an audit entry", async () => {
    const owner = unique("op-one");
    const taskId = await createCatalogTask("wait_long", { customer: "hooli" }, owner);
    await waitForRow(taskId, (row) => row?.currentStep === "long");
    const detail = await operator(`/tasks/${taskId}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ tool: "wait_long", principal: owner, task: { taskId, status: "working" } });
    expect(JSON.stringify(detail.body.task._meta)).toContain('"long"');
    expect(detail.body.catalog).toMatchObject({ taskId, tags: { customer: "hooli" } });

    const history = await operator(`/tasks/${taskId}/history`);
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ format: "durable-mcp-server/history", version: 1, tool: "wait_long" });
    expect(JSON.stringify(history.body)).not.toContain("salt");
    expect(await operator(`/tasks/${newTaskId()}/history`)).toMatchObject({ status: 404 });

    const cancelled = await operator(`/tasks/${taskId}/cancel`, { method: "POST" });
    expect(cancelled).toMatchObject({ status: 200, body: { taskId, status: "cancelled" } });
    await waitForRow(taskId, (row) => row?.status === "cancelled");
    const audit = await operator("/audit?limit=50");
    expect(audit.body.entries).toContainEqual(
      expect.objectContaining({
        actor: "token",
        action: "cancel",
        taskIds: [taskId],
        outcome: { status: "cancelled" },
      }),
    );
    expect(await operator(`/tasks/${newTaskId()}`)).toMatchObject({
      status: 404,
      body: { error: { code: "not_found" } },
    });
  });
});

describe("bulk cancel", () => {
  it("counts first with a dry run, then cancels every match as a job with progress, and audits it", async () => {
    const owner = unique("op-bulk");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await createCatalogTask("wait_long", { customer: "runaway" }, owner));
    const spared = await createCatalogTask("wait_long", { customer: "keep" }, owner);
    for (const id of [...ids, spared]) await waitForRow(id, (row) => row !== null);
    const where = { principal: owner, tag: "customer=runaway" };

    const dry = await operator("/cancellations", { body: { where, dryRun: true } });
    expect(dry).toMatchObject({ status: 200, body: { dryRun: true, count: 5 } });
    const started = await operator("/cancellations", { body: { where } });
    expect([200, 202]).toContain(started.status);
    const jobId = started.body.job.jobId as string;
    let job = started.body.job;
    for (let i = 0; job.state !== "done" && i < 500; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      job = (await operator(`/cancellations/${jobId}`)).body.job;
    }
    expect(job).toMatchObject({ state: "done", total: 5, done: 5, failed: 0, actor: "token" });
    for (const id of ids) await waitForRow(id, (row) => row?.status === "cancelled");
    expect((await catalogRow(spared))?.status).toBe("working");

    const audit = (await operator("/audit?limit=50")).body.entries;
    const finished = audit.find(
      (e: { action: string; target: { jobId?: string } }) =>
        e.action === "bulk_cancel_finished" && e.target.jobId === jobId,
    );
    expect(finished.taskIds.toSorted()).toEqual(ids.toSorted());
    expect(audit).toContainEqual(expect.objectContaining({ action: "bulk_cancel_started", outcome: { total: 5 } }));
    await rpc("tasks/cancel", { taskId: spared }, { principal: owner, path: "/catalog/mcp" });
  });

  it("refuses a bulk action without a filter", async () => {
    expect(await operator("/cancellations", { body: {} })).toMatchObject({
      status: 400,
      body: { error: { code: "filter_required", param: "where" } },
    });
    expect(await operator("/cancellations", { body: { where: {} } })).toMatchObject({
      status: 400,
      body: { error: { code: "filter_required" } },
    });
    expect(await operator("/cancellations", { body: { where: { colour: "red" } } })).toMatchObject({
      status: 400,
      body: { error: { code: "unknown_filter", param: "colour" } },
    });
  });
});

describe("reconcile", () => {
  it("drops rows whose runner holds no task and rewrites the others from their runners", async () => {
    const owner = unique("op-reconcile");
    const live = await createCatalogTask("wait_long", { customer: "umbrella" }, owner);
    const before = await waitForRow(live, (row) => row?.currentStep === "long");
    const ghost = newTaskId();
    await db
      .prepare(
        `INSERT INTO durable_mcp_tasks (task_id, tool, principal, status, created_at, updated_at, version, written_at)
         VALUES (?, 'wait_long', ?, 'working', ?, ?, 1, ?)`,
      )
      .bind(ghost, owner, Date.now(), Date.now(), Date.now())
      .run();
    const result = await operator("/reconcile", { body: { where: { principal: owner } } });
    expect(result).toMatchObject({ status: 200, body: { checked: 2, refreshed: 1, removed: 1 } });
    expect(await catalogRow(ghost)).toBeNull();
    expect((await catalogRow(live))!.version).toBeGreaterThan(before!.version);
    await rpc("tasks/cancel", { taskId: live }, { principal: owner, path: "/catalog/mcp" });
  });
});

describe("bad input", () => {
  it("gets a clear 4xx in one envelope", async () => {
    const cases: Array<[string, number, string, string?]> = [
      ["/tasks?colour=red", 400, "unknown_filter", "colour"],
      ["/tasks?status=stuck", 400, "invalid_filter", "status"],
      ["/tasks?cursor=not-a-cursor", 400, "invalid_cursor", "cursor"],
      ["/tasks?limit=501", 400, "page_too_large", "limit"],
      ["/tasks?limit=0", 400, "invalid_filter", "limit"],
      ["/tasks?sort=name", 400, "invalid_filter", "sort"],
      ["/tasks?tag=novalue", 400, "invalid_filter", "tag"],
      ["/tasks?createdAfter=yesterday", 400, "invalid_filter", "createdAfter"],
      // Past D1's 100 bound parameters a deployed query would fail: refused up front (local D1 would allow it).
      [`/tasks?tool=${Array.from({ length: 81 }, (_, i) => `t${i}`).join(",")}`, 400, "invalid_filter", "where"],
      ["/stuck?workingFor=soon", 400, "invalid_filter", "workingFor"],
      ["/nowhere", 404, "not_found"],
    ];
    for (const [path, status, code, param] of cases) {
      const reply = await operator(path);
      expect({ path, status: reply.status, error: reply.body.error }).toEqual({
        path,
        status,
        error: { code, message: expect.any(String), ...(param ? { param } : {}) },
      });
    }
    // A cursor made for one sort is refused for another.
    const owner = unique("op-cursor");
    await createCatalogTask("build_report", { customer: "a", pages: 1 }, owner).then((id) =>
      waitForRow(id, (row) => row !== null),
    );
    await createCatalogTask("build_report", { customer: "a", pages: 1 }, owner).then((id) =>
      waitForRow(id, (row) => row !== null),
    );
    const page = await operator(`/tasks?principal=${owner}&limit=1`);
    expect(await operator(`/tasks?principal=${owner}&sort=updated&cursor=${page.body.nextCursor}`)).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_cursor" } },
    });
    expect(await operator("/tasks", { method: "POST", body: {} })).toMatchObject({
      status: 405,
      body: { error: { code: "method_not_allowed" } },
    });
  });
});
