// Benchmark (prints measured numbers; asserts only correctness): the 2025-11-25 create with `tasks/list` from the
// TaskIndex (an index write before every create: "before") and from the task catalog (nothing on the create path:
// "after"), interleaved, on the same runners; and how soon a new task appears in a catalog-backed list.
// Run: pnpm exec vitest run --config vitest.bench.config.ts bench/task-list.bench.ts
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { applyCatalogMigrations, db } from "../test/catalog/helpers.js";
import { readRpcMessage } from "../test/jsonrpc.js";

const percentile = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const line = (values: number[]) =>
  `p50 ${percentile(values, 0.5).toFixed(2)} ms, p95 ${percentile(values, 0.95).toFixed(2)} ms, max ${Math.max(...values).toFixed(2)} ms`;

let nextId = 1;
async function call(url: string, principal: string, method: string, params: Record<string, unknown>) {
  const response = await SELF.fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      authorization: `Bearer ${principal}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  return readRpcMessage(response);
}

async function create(url: string, principal: string): Promise<{ ms: number; taskId: string }> {
  const begin = performance.now();
  const body = await call(url, principal, "tools/call", {
    name: "wait_long",
    arguments: { customer: "bench" },
    task: {},
  });
  const ms = performance.now() - begin;
  const taskId = body.result?.task?.taskId as string;
  expect(taskId).toBeTypeOf("string");
  return { ms, taskId };
}

const BEFORE = "http://localhost/index-list/mcp";
const AFTER = "http://localhost/catalog-list/mcp";

beforeAll(() => applyCatalogMigrations());

describe("tasks/list benchmark", () => {
  it("create p50, lists from the TaskIndex (before) and from the catalog (after), interleaved", async () => {
    // Warm both paths (isolate, runner pool, D1 schema) before timing.
    for (let i = 0; i < 10; i++) {
      await create(BEFORE, "bench-warm");
      await create(AFTER, "bench-warm");
    }
    const before: number[] = [];
    const after: number[] = [];
    for (let i = 0; i < 200; i++) {
      // Alternate which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        before.push((await create(BEFORE, `bench-before-${i % 20}`)).ms);
        after.push((await create(AFTER, `bench-after-${i % 20}`)).ms);
      } else {
        after.push((await create(AFTER, `bench-after-${i % 20}`)).ms);
        before.push((await create(BEFORE, `bench-before-${i % 20}`)).ms);
      }
    }
    console.log(`[bench] 2025 create, list from TaskIndex (before): ${line(before)} (200 creates)`);
    console.log(`[bench] 2025 create, list from catalog (after): ${line(after)} (200 creates)`);
    console.log(`[bench] create p50 after/before: ${(percentile(after, 0.5) / percentile(before, 0.5)).toFixed(2)}×`);
  });

  it("how soon a new task is listed from the catalog (create answered → first list that shows it)", async () => {
    const lags: number[] = [];
    const filedAfterReply: number[] = [];
    const lists: number[] = [];
    let extraLists = 0;
    for (let i = 0; i < 100; i++) {
      const principal = `bench-lag-${i}`;
      const { taskId } = await create(AFTER, principal);
      const answered = performance.now();
      const answeredAt = Date.now();
      for (let attempt = 0; ; attempt++) {
        const begin = performance.now();
        const body = await call(AFTER, principal, "tasks/list", {});
        lists.push(performance.now() - begin);
        if ((body.result.tasks as Array<{ taskId: string }>).some((task) => task.taskId === taskId)) break;
        extraLists++;
        if (performance.now() - answered > 10_000) throw new Error(`${taskId} never listed`);
      }
      lags.push(performance.now() - answered);
      const row = await db
        .prepare("SELECT written_at FROM durable_mcp_tasks WHERE task_id = ?")
        .bind(taskId)
        .first<{ written_at: number }>();
      filedAfterReply.push(row!.written_at - answeredAt);
    }
    console.log(`[bench] catalog list lag (create answered → a list shows it): ${line(lags)} (100 creates)`);
    console.log(
      `[bench] lists that did not show it yet: ${extraLists} of ${lists.length}; tasks/list call: ${line(lists)}`,
    );
    console.log(`[bench] row written − create answered (Date.now, ms): ${line(filedAfterReply)}`);
  });
});
