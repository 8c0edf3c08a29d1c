// Benchmark (prints measured numbers; asserts only correctness): GET /operator/metrics over a local D1 catalog at its
// row bound (MAX_METRICS_ROWS finished rows in the range) and past it, next to its floor: D1 reading the same rows
// through the same index with nothing done to them (SELECT of the same columns). Run:
// `pnpm exec vitest run --config vitest.bench.config.ts bench/operator-metrics.bench.ts`.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { writeCatalogRows, type CatalogChange } from "../src/catalog/catalog-writer.js";
import { newTaskId } from "../src/ids.js";
import { MAX_METRICS_ROWS } from "../src/limits.js";
import { db } from "../test/catalog/helpers.js";
import { ensureCatalogSchema } from "../src/catalog/catalog-schema.js";
import { OPERATOR_TOKEN } from "../test/fixtures/catalog-app.js";

const percentile = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

function finished(tool: string, at: number, i: number): CatalogChange {
  const status = i % 10 === 0 ? "failed" : i % 25 === 0 ? "cancelled" : "completed";
  return {
    taskId: newTaskId(),
    tool,
    principal: "bench",
    status,
    statusMessage: null,
    progress: null,
    createdAt: at - 1000,
    updatedAt: at,
    finishedAt: at,
    durationMs: 500 + (i % 1000),
    currentStep: null,
    stepState: null,
    stepUpdatedAt: null,
    attempts: 1,
    retries: 0,
    nextWakeAt: null,
    errorCode: null,
    tags: {},
    purgeAt: null,
    version: 1,
  };
}

async function fill(count: number, tools: string[]) {
  const now = Date.now();
  for (let done = 0; done < count; done += 500) {
    const rows = Array.from({ length: Math.min(500, count - done) }, (_, k) => {
      const i = done + k;
      return finished(tools[i % tools.length]!, now - 1 - ((i * 4_321) % (23 * 3_600_000)), i);
    });
    await writeCatalogRows(db, rows);
  }
}

async function time(runs: number, run: () => Promise<void>) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const begin = performance.now();
    await run();
    times.push(performance.now() - begin);
  }
  return `p50 ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms (${runs} runs)`;
}

const metrics = async () => {
  const response = await SELF.fetch("http://fixture.test/catalog/operator/metrics?since=24h&bucket=1h", {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { rows: number; truncated: boolean; tools: Record<string, unknown> };
};

const floor = async () => {
  const result = await db
    .prepare(
      `SELECT tool, status, updated_at, duration_ms FROM durable_mcp_tasks
       WHERE status IN ('completed', 'failed', 'cancelled') AND updated_at >= ? ORDER BY updated_at DESC LIMIT ?`,
    )
    .bind(Date.now() - 24 * 3_600_000, MAX_METRICS_ROWS + 1)
    .all();
  expect(result.results.length).toBeGreaterThan(0);
};

describe("operator metrics benchmark", () => {
  it("at the row bound and past it, next to D1 reading the same rows", async () => {
    await ensureCatalogSchema(db);
    const tools = Array.from({ length: 8 }, (_, i) => `bench-tool-${i}`);
    await fill(MAX_METRICS_ROWS, tools);
    const at = await metrics();
    expect([at.rows, at.truncated, Object.keys(at.tools).length]).toEqual([MAX_METRICS_ROWS, false, 8]);
    console.log(
      `[bench] GET /operator/metrics, ${MAX_METRICS_ROWS} rows, 8 tools x 24 buckets: ${await time(10, async () => void (await metrics()))}`,
    );
    console.log(`[bench]   floor, D1 reading those rows alone: ${await time(10, floor)}`);
    await fill(5_000, tools);
    const past = await metrics();
    expect([past.rows, past.truncated]).toEqual([MAX_METRICS_ROWS, true]);
    console.log(
      `[bench] GET /operator/metrics, ${MAX_METRICS_ROWS + 5_000} rows in range (truncated): ${await time(10, async () => void (await metrics()))}`,
    );
  });
});
