// Benchmark (prints measured numbers; asserts only correctness): the task catalog's writes to a local D1 and the
// catalog's lag behind its runners (design/operations.md). Run: pnpm --filter durable-mcp-server bench
// (or `pnpm exec vitest run --config vitest.bench.config.ts bench/catalog.bench.ts`).
import { describe, expect, it } from "vitest";
import { ensureCatalogSchema } from "../src/catalog/catalog-schema.js";
import { writeCatalogRows, type CatalogChange } from "../src/catalog/catalog-writer.js";
import { newTaskId } from "../src/ids.js";
import { createCatalogTask, db, waitForRow } from "../test/catalog/helpers.js";
import { rpc } from "../test/jsonrpc.js";

const percentile = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

function change(taskId: string, version: number): CatalogChange {
  return {
    taskId,
    tool: "bench",
    principal: "bench",
    status: "working",
    statusMessage: "step 3 of 7",
    progress: 0.4,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    finishedAt: null,
    durationMs: null,
    currentStep: "render",
    stepState: "running",
    stepUpdatedAt: Date.now(),
    attempts: 1,
    retries: 0,
    nextWakeAt: null,
    errorCode: null,
    tags: { customer: "acme" },
    purgeAt: null,
    version,
  };
}

const create = async (path: string) => {
  const begin = performance.now();
  const reply = await rpc(
    "tools/call",
    { name: "wait_long", arguments: { customer: "bench" } },
    { principal: "bench-create", path },
  );
  expect(reply.body.result?.status).toBe("working");
  return performance.now() - begin;
};

const line = (name: string, values: number[]) =>
  `${name} p50 ${percentile(values, 0.5).toFixed(1)} ms, p95 ${percentile(values, 0.95).toFixed(1)} ms`;

describe("catalog benchmark", () => {
  it("one upsert, and batches of 50, into a local D1", async () => {
    await ensureCatalogSchema(db);
    const single: number[] = [];
    for (let i = 0; i < 200; i++) {
      const begin = performance.now();
      await writeCatalogRows(db, [change(newTaskId(), 1)]);
      single.push(performance.now() - begin);
    }
    const batched: number[] = [];
    for (let i = 0; i < 20; i++) {
      const rows = Array.from({ length: 50 }, () => change(newTaskId(), 1));
      const begin = performance.now();
      expect(await writeCatalogRows(db, rows)).toBe(50);
      batched.push(performance.now() - begin);
    }
    console.log(
      `[bench] catalog upsert, 1 row: p50 ${percentile(single, 0.5).toFixed(2)} ms, p95 ${percentile(single, 0.95).toFixed(2)} ms (200 writes)`,
    );
    console.log(
      `[bench] catalog upsert, batch of 50: p50 ${percentile(batched, 0.5).toFixed(2)} ms, p95 ${percentile(batched, 0.95).toFixed(2)} ms (20 batches)`,
    );
  });

  it("create with the catalog on and off, interleaved, over the wire", async () => {
    const on: number[] = [];
    const off: number[] = [];
    for (let i = 0; i < 60; i++) {
      on.push(await create("/catalog/mcp"));
      off.push(await create("/no-catalog/mcp"));
    }
    console.log(`[bench] create (60 each, interleaved): ${line("catalog on", on)}; ${line("catalog off", off)}`);
  });

  it("the catalog's lag behind a create, over the wire", async () => {
    const lags: number[] = [];
    const creates: number[] = [];
    for (let i = 0; i < 50; i++) {
      const begin = performance.now();
      const taskId = await createCatalogTask("wait_long", { customer: `c${i % 5}` }, "bench-lag");
      creates.push(performance.now() - begin);
      const row = await waitForRow(taskId, (r) => r !== null);
      lags.push(row!.writtenAt - row!.createdAt);
    }
    console.log(
      `[bench] create with the catalog on: p50 ${percentile(creates, 0.5).toFixed(1)} ms, p95 ${percentile(creates, 0.95).toFixed(1)} ms (50 creates)`,
    );
    console.log(
      `[bench] catalog lag (row written − task created): p50 ${percentile(lags, 0.5)} ms, p95 ${percentile(lags, 0.95)} ms, max ${Math.max(...lags)} ms`,
    );
  });
});
