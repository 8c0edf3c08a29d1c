// Benchmark (prints measured numbers; asserts only correctness): what fair share costs (design/runtime.md, "Fair
// share"). Run: pnpm exec vitest run --config vitest.bench.config.ts bench/fairness.bench.ts
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { limiterOf } from "../src/limiter/index.js";
import { fixtureEnv, isFinal, waitForTask } from "../test/helpers.js";
import { rpc } from "../test/jsonrpc.js";
import { startLimited, startMany, unique } from "../test/fairness/helpers.js";

const percentile = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const line = (name: string, values: number[]) =>
  `[bench] ${name}: p50 ${percentile(values, 0.5).toFixed(2)} ms, p95 ${percentile(values, 0.95).toFixed(2)} ms (${values.length})`;

const create = async (name: string, args: Record<string, unknown>, principal: string) => {
  const begin = performance.now();
  const reply = await rpc("tools/call", { name, arguments: args }, { path: "/limits-bench/mcp", principal });
  expect(reply.body.result?.resultType).toBe("task");
  return performance.now() - begin;
};

describe("fair-share benchmark", () => {
  it("create: no limit (the HTTP floor) vs a concurrency limit with a free slot vs a rate limit", async () => {
    const floor: number[] = [];
    const concurrency: number[] = [];
    const rated: number[] = [];
    const take: number[] = [];
    const limiter = limiterOf(fixtureEnv.TASK_LIMITER, `bench-take-${crypto.randomUUID()}`);
    for (let i = 0; i < 60; i++) {
      // Interleaved, so that load on the machine falls on all alike; each under its own principal.
      floor.push(await create("any", {}, unique("floor")));
      concurrency.push(await create("crawl", { url: "https://example.com", ms: 1 }, unique("conc")));
      rated.push(await create("metered", {}, unique("rated")));
      const begin = performance.now();
      expect((await limiter.take(1_000_000, 60_000)).taken).toBe(true);
      take.push(performance.now() - begin);
    }
    console.log(line("create, no limit (floor)", floor));
    console.log(line("create, concurrency limit with a free slot", concurrency));
    console.log(line("create, rate limit (one limiter call)", rated));
    console.log(line("limiter take() alone (RPC from the Worker)", take));
  });

  it("cost of a waiting task: rows and bytes in its limiter", async () => {
    const p = unique("bench-wait");
    const blocker = await startLimited("solo_work", { ms: 4_000 }, p);
    const before = await runInDurableObject(
      fixtureEnv.TASK_LIMITER.get(fixtureEnv.TASK_LIMITER.idFromName("named:solo")),
      (_, state) => state.storage.sql.databaseSize,
    );
    const waiting = await startMany(100, "solo_work", { ms: 1 }, p, 20);
    await Promise.all(
      waiting.map((task) => waitForTask(task, (t) => t.statusMessage?.startsWith("queued:") === true, 20_000)),
    );
    const after = await runInDurableObject(
      fixtureEnv.TASK_LIMITER.get(fixtureEnv.TASK_LIMITER.idFromName("named:solo")),
      (_, state) => ({
        size: state.storage.sql.databaseSize,
        rows: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM queue").one().n,
      }),
    );
    console.log(
      `[bench] 100 waiting tasks: ${after.rows} queue rows, limiter database ${before} -> ${after.size} bytes ` +
        `(${((after.size - before) / 100).toFixed(0)} bytes per waiting task, page-granular)`,
    );
    await Promise.all([blocker, ...waiting].map((task) => waitForTask(task, isFinal, 60_000)));
  }, 120_000);
});
