// The task catalog in D1 (design/operations.md): each TaskRunner writes its task's row after its changes, off the
// request's path; versions make late and repeated writes converge; tags, purge, reconcile. Real local D1.
import { beforeAll, describe, expect, it } from "vitest";
import { CATALOG_SCHEMA, ensureCatalogSchema } from "../../src/catalog/catalog-schema.js";
import { writeCatalogRows, type CatalogChange } from "../../src/catalog/catalog-writer.js";
import { newTaskId } from "../../src/ids.js";
import { rpc } from "../jsonrpc.js";
import {
  applyCatalogMigrations,
  catalogEnv,
  catalogRow,
  catalogRunner,
  createCatalogTask,
  db,
  waitForRow,
} from "./helpers.js";

beforeAll(applyCatalogMigrations);

const normalized = (statement: string) =>
  statement
    .split("\n")
    .filter((line) => !line.startsWith("--"))
    .join(" ")
    .replace(/\s+/g, " ")
    .replace(/;$/, "")
    .trim();

describe("the catalog's schema", () => {
  it("is the package's migration, statement for statement", () => {
    const migration = catalogEnv.CATALOG_MIGRATIONS.flatMap((m) => m.queries).map(normalized);
    expect(migration).toEqual(CATALOG_SCHEMA.map(normalized));
  });

  it("is created by the library on a database nobody migrated, and again changes nothing", async () => {
    await ensureCatalogSchema(db);
    const tables = await db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'durable_mcp_%' ORDER BY name")
      .all<{ name: string }>();
    expect(tables.results.map((t) => t.name)).toEqual([
      "durable_mcp_audit",
      "durable_mcp_jobs",
      "durable_mcp_task_sessions",
      "durable_mcp_task_tags",
      "durable_mcp_tasks",
    ]);
  });
});

describe("a task's row", () => {
  it("follows the task from create to completion, with its tags, step, timings and version", async () => {
    const taskId = await createCatalogTask("build_report", { customer: "acme", pages: 12 }, "row-owner");
    const done = await waitForRow(taskId, (row) => row?.status === "completed");
    expect(done).toMatchObject({
      taskId,
      tool: "build_report",
      principal: "row-owner",
      status: "completed",
      statusMessage: "rendered 12 pages",
      progress: 0.5,
      currentStep: "send",
      stepState: "done",
      attempts: 1,
      retries: 0,
      errorCode: null,
      nextWakeAt: null,
      tags: { customer: "acme", big: "true" },
    });
    expect(done!.finishedAt).toBe(done!.updatedAt);
    expect(done!.durationMs).toBe(done!.finishedAt! - done!.createdAt);
    // create, the status message, the run's end, the final status: each change was a new version.
    expect(done!.version).toBeGreaterThanOrEqual(3);
    expect(done!.writtenAt).toBeGreaterThanOrEqual(done!.updatedAt);
    expect(done!.purgeAt).toBeGreaterThan(done!.finishedAt!);
  });

  it("records a failure's code and the retries it took", async () => {
    const taskId = await createCatalogTask("fails", {}, "row-failer");
    const row = await waitForRow(taskId, (r) => r?.status === "completed" || r?.status === "failed");
    // A step that throws ends the task with a tool error (the repairable envelope), whose code is filed.
    expect(row).toMatchObject({ currentStep: "boom", stepState: "failed", attempts: 2, retries: 1 });
    expect(row!.errorCode).toEqual(expect.any(String));
  });

  it("files a task whose tags(input) is not valid without tags, and runs it", async () => {
    const taskId = await createCatalogTask("bad_tags", {}, "row-tagless");
    const row = await waitForRow(taskId, (r) => r?.status === "completed");
    expect(row!.tags).toEqual({});
  });

  it("goes when the task is purged", async () => {
    const taskId = await createCatalogTask("short_lived", {}, "row-purged");
    await waitForRow(taskId, (r) => r?.status === "completed");
    // TTL 300 ms + the fixture's purge grace 200 ms, then the alarm purges the runner and deletes the row.
    await waitForRow(taskId, (r) => r === null);
  });
});

const change = (taskId: string, version: number, status: CatalogChange["status"]): CatalogChange => ({
  taskId,
  tool: "t",
  principal: "p",
  status,
  statusMessage: null,
  progress: null,
  createdAt: 1,
  updatedAt: version,
  finishedAt: null,
  durationMs: null,
  currentStep: null,
  stepState: null,
  stepUpdatedAt: null,
  attempts: 0,
  retries: 0,
  nextWakeAt: null,
  errorCode: null,
  tags: {},
  purgeAt: null,
  version,
});

describe("versions", () => {
  it("keep the newest change whatever order the writes arrive in, and a repeat changes nothing", async () => {
    const taskId = newTaskId();
    expect(await writeCatalogRows(db, [change(taskId, 3, "completed")])).toBe(1);
    expect(await writeCatalogRows(db, [change(taskId, 1, "working"), change(taskId, 2, "input_required")])).toBe(0);
    expect(await writeCatalogRows(db, [change(taskId, 3, "completed")])).toBe(0);
    expect(await catalogRow(taskId)).toMatchObject({ status: "completed", version: 3 });
    expect(await writeCatalogRows(db, [change(taskId, 4, "failed")])).toBe(1);
    expect(await catalogRow(taskId)).toMatchObject({ status: "failed", version: 4 });
  });
});

describe("reconcile", () => {
  it("writes a lost row back from the runner, and says when the runner holds no such task", async () => {
    const taskId = await createCatalogTask("wait_long", { customer: "globex" }, "row-reconciled");
    await waitForRow(taskId, (r) => r?.currentStep === "long");
    await db.prepare("DELETE FROM durable_mcp_tasks WHERE task_id = ?").bind(taskId).run();
    expect(await catalogRunner(taskId).refreshCatalog(taskId)).toBe("refreshed");
    expect(await catalogRow(taskId)).toMatchObject({ status: "working", tags: { customer: "globex" } });
    const unknown = newTaskId();
    expect(await catalogRunner(unknown).refreshCatalog(unknown)).toBe("gone");
    await rpc("tasks/cancel", { taskId }, { principal: "row-reconciled", path: "/catalog/mcp" });
    await waitForRow(taskId, (r) => r?.status === "cancelled");
  });
});
