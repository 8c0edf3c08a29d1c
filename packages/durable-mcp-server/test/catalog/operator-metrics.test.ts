// GET /operator/metrics over the catalog fixture's real local D1: per tool and bucket, throughput, duration
// percentiles and failure rate of the tasks that finished; the bounds (buckets, rows) and bad input as 4xx.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { CatalogChange } from "../../src/catalog/catalog-writer.js";
import { writeCatalogRows } from "../../src/catalog/catalog-writer.js";
import { newTaskId } from "../../src/ids.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { applyCatalogMigrations, db } from "./helpers.js";

beforeAll(applyCatalogMigrations);

async function metrics(query: string, token: string | null = OPERATOR_TOKEN) {
  const response = await SELF.fetch(`http://fixture.test/catalog/operator/metrics${query}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: response.status, body: (await response.json()) as any };
}

function finished(tool: string, status: "completed" | "failed" | "cancelled", at: number, ms: number): CatalogChange {
  return {
    taskId: newTaskId(),
    tool,
    principal: "metrics",
    status,
    statusMessage: null,
    progress: null,
    createdAt: at - ms,
    updatedAt: at,
    finishedAt: at,
    durationMs: ms,
    currentStep: null,
    stepState: null,
    stepUpdatedAt: null,
    attempts: 1,
    retries: 0,
    nextWakeAt: null,
    errorCode: status === "failed" ? "tool_error" : null,
    tags: {},
    purgeAt: null,
    version: 1,
  };
}

describe("GET /operator/metrics", () => {
  it("counts finished tasks per tool and bucket, with p50/p95 durations and the failure rate", async () => {
    const tool = `metrics-${newTaskId().slice(0, 8)}`;
    const other = `${tool}-other`;
    const now = Date.now();
    const hour = 3_600_000;
    // Two hours ago: 10 completed (1..10 s) and 2 failed (100 s each); an hour ago: 1 cancelled; live rows are no
    // throughput; another tool is kept apart.
    const old = now - 2 * hour + 60_000;
    await writeCatalogRows(db, [
      ...Array.from({ length: 10 }, (_, i) => finished(tool, "completed", old + i, (i + 1) * 1000)),
      finished(tool, "failed", old, 100_000),
      finished(tool, "failed", old, 100_000),
      finished(tool, "cancelled", now - hour + 60_000, 5000),
      { ...finished(tool, "completed", now, 1), status: "working", finishedAt: null, durationMs: null },
      finished(other, "completed", now - 1000, 7),
    ]);
    const { status, body } = await metrics(`?since=3h&bucket=1h&tool=${tool}`);
    expect(status).toBe(200);
    expect(body.bucketMs).toBe(hour);
    expect(body.buckets).toHaveLength(3);
    expect(Object.keys(body.tools)).toEqual([tool]);
    const series = body.tools[tool];
    expect(series.completed).toEqual([0, 10, 0]);
    expect(series.failed).toEqual([0, 2, 0]);
    expect(series.cancelled).toEqual([0, 0, 1]);
    // 12 durations: 1..10 s and 100 s twice; nearest rank p50 is the 6th (6 s), p95 the 12th (100 s).
    expect(series.p50Ms).toEqual([null, 6000, 5000]);
    expect(series.p95Ms).toEqual([null, 100_000, 5000]);
    expect(series.failureRate).toEqual([null, 2 / 12, 0]);
    expect(body).toMatchObject({ rows: 13, truncated: false });

    const both = await metrics(`?since=3h&bucket=1h&tool=${tool},${other}`);
    expect(Object.keys(both.body.tools)).toEqual([tool, other]);
    expect(both.body.tools[other].completed).toEqual([0, 0, 1]);
  });

  it("defaults to the last day in 24 buckets", async () => {
    const { status, body } = await metrics("");
    expect(status).toBe(200);
    expect(body.buckets).toHaveLength(24);
    expect(body.bucketMs).toBe(3_600_000);
    expect(Date.parse(body.until) - Date.parse(body.since)).toBeGreaterThanOrEqual(24 * 3_600_000 - 1000);
  });

  it("refuses bad input and too many buckets with the operator envelope, and needs the operator token", async () => {
    expect(await metrics("?bucket=1s&since=1d")).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_filter", param: "bucket" } },
    });
    expect(await metrics("?since=yesterday")).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_filter", param: "since" } },
    });
    expect(await metrics("?status=failed")).toMatchObject({
      status: 400,
      body: { error: { code: "unknown_filter", param: "status" } },
    });
    expect(await metrics("", null)).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
  });

  it("is listed with the actions the API answers", async () => {
    const response = await SELF.fetch("http://fixture.test/catalog/operator", {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(await response.json()).toMatchObject({ actions: expect.arrayContaining(["cancel"]) });
  });
});
