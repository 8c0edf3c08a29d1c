// Benchmark (prints measured numbers next to a floor; asserts only correctness): the task catalog at 100,000 rows in
// a local D1 (workerd under vitest, the package's migrations applied): filtered first pages, counts, the stuck query,
// and a bulk cancel of 10,000 real tasks through the operator API, in slices (docs/performance.md, "The catalog at
// 100,000 rows"). Run: pnpm run bench:catalog (= vitest run --config vitest.bench.config.ts bench/catalog-scale.bench.ts).
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  countByStatusAndTool,
  listRows,
  stuckRows,
  type CatalogFilter,
  type CatalogSort,
} from "../src/catalog/catalog-queries.js";
import { writeCatalogRows, type CatalogChange } from "../src/catalog/catalog-writer.js";
import { newTaskId } from "../src/ids.js";
import { RunnerClient } from "../src/tasks/runner-client.js";
import type { TaskStatus } from "../src/wire/task-shapes.js";
import { OPERATOR_TOKEN } from "../test/fixtures/catalog-app.js";
import { applyCatalogMigrations, catalogEnv, db } from "../test/catalog/helpers.js";

const sized = (name: string, fallback: number) =>
  Number((catalogEnv as unknown as Record<string, string>)[name] || fallback);
const ROWS = sized("BENCH_CATALOG_ROWS", 100_000);
const BULK = sized("BENCH_BULK_TASKS", 10_000);
const REPS = 40;
const DAY = 86_400_000;

const percentile = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const fmt = (values: number[]) =>
  `p50 ${percentile(values, 0.5).toFixed(1)} ms, p95 ${percentile(values, 0.95).toFixed(1)} ms`;

async function timed(fn: () => Promise<unknown>, reps = REPS): Promise<number[]> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const begin = performance.now();
    await fn();
    times.push(performance.now() - begin);
  }
  return times;
}

const STATUSES: Array<[TaskStatus, number]> = [
  ["working", 0.2],
  ["input_required", 0.05],
  ["completed", 0.6],
  ["failed", 0.1],
  ["cancelled", 0.05],
];

/** A deterministic spread: 20 tools, 1,000 principals, 500 customers, 30 days of creates. */
function seededRow(i: number, now: number): CatalogChange {
  let pick = ((i * 7919) % 1000) / 1000;
  let status: TaskStatus = "completed";
  for (const [s, share] of STATUSES) {
    if (pick < share) {
      status = s;
      break;
    }
    pick -= share;
  }
  const createdAt = now - Math.floor(((i * 104_729) % ROWS) * ((30 * DAY) / ROWS));
  const final = status === "completed" || status === "failed" || status === "cancelled";
  const updatedAt = createdAt + ((i * 13) % 600_000);
  return {
    taskId: `seed${String(i).padStart(8, "0")}${newTaskId().slice(12)}`,
    tool: `tool_${i % 20}`,
    principal: `principal-${(i * 31) % 1000}`,
    status,
    statusMessage: i % 1000 === 7 ? `upstream timeout after ${i % 60} s` : `step ${i % 7} of 7`,
    progress: final ? 1 : (i % 10) / 10,
    createdAt,
    updatedAt,
    finishedAt: final ? updatedAt : null,
    durationMs: final ? updatedAt - createdAt : null,
    currentStep: `step_${i % 7}`,
    stepState: final ? "done" : "running",
    stepUpdatedAt: updatedAt,
    attempts: 1 + (i % 3),
    retries: i % 5,
    nextWakeAt: !final && i % 4 === 0 ? updatedAt + 60_000 : null,
    errorCode: status === "failed" ? "upstream_error" : null,
    tags: { customer: `c${(i * 17) % 500}`, region: ["eu", "us", "ap"][i % 3]! },
    purgeAt: final ? now + DAY : null,
    version: 1,
  };
}

/** Prints SQLite's plan of a query (EXPLAIN QUERY PLAN), for whoever tunes the indexes next. */
async function explain(name: string, sql: string, ...params: unknown[]) {
  const plan = await db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  console.log(`[bench] plan, ${name}: ${plan.results.map((r) => r.detail).join(" | ")}`);
}

/** The catalog fixture's operator API, as the CLI calls it. */
async function operator(path: string, body?: unknown) {
  const response = await SELF.fetch(`http://fixture.test/catalog/operator${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as {
    job: { jobId: string; state: string; done: number; failed: number; total: number };
  };
}

const NEWEST: CatalogSort = { key: "created", descending: true };

beforeAll(async () => {
  await applyCatalogMigrations();
  const existing = await db.prepare("SELECT COUNT(*) AS n FROM durable_mcp_tasks").first<{ n: number }>();
  if ((existing?.n ?? 0) >= ROWS) return;
  const now = Date.now();
  const begin = performance.now();
  for (let start = 0; start < ROWS; start += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, ROWS - start) }, (_, k) => seededRow(start + k, now));
    await writeCatalogRows(db, rows);
  }
  await db.prepare("ANALYZE").run();
  console.log(`[bench] seeded ${ROWS} catalog rows in ${((performance.now() - begin) / 1000).toFixed(1)} s`);
});

describe(`the catalog at ${ROWS} rows`, () => {
  it("filtered first pages, counts and the stuck query, next to a point query", async () => {
    const now = Date.now();
    const floor = await timed(() =>
      db.prepare("SELECT task_id FROM durable_mcp_tasks WHERE task_id = ?").bind("seed00000042").first(),
    );
    const page =
      (filter: CatalogFilter, sort = NEWEST) =>
      () =>
        listRows(db, filter, sort, 50, null, Date.now());
    const rows: Array<[string, number[]]> = [
      ["floor: point query by task id", floor],
      ["first page, no filter, newest first", await timed(page({}))],
      ["first page, status=failed", await timed(page({ status: ["failed"] }))],
      ["first page, tool=tool_7", await timed(page({ tool: ["tool_7"] }))],
      ["first page, principal=principal-17", await timed(page({ principal: ["principal-17"] }))],
      ["first page, tag customer=c42", await timed(page({ tags: [["customer", "c42"]] }))],
      ["first page, text 'timeout'", await timed(page({ text: "timeout" }))],
      ["first page, created in the last hour", await timed(page({ createdAfter: now - 3_600_000 }))],
      [
        "first page, failed tool_3 of the last day",
        await timed(page({ status: ["failed"], tool: ["tool_3"], createdAfter: now - DAY })),
      ],
      ["first page, sort updated (oldest first)", await timed(page({}, { key: "updated", descending: false }))],
      ["counts by status × tool, all rows", await timed(() => countByStatusAndTool(db, {}, Date.now()))],
      [
        "counts by status × tool, last day",
        await timed(() => countByStatusAndTool(db, { createdAfter: now - DAY }, Date.now())),
      ],
      [
        "stuck (no progress 15 min, input 1 h, alarm 5 min)",
        await timed(() =>
          stuckRows(db, { workingMs: 900_000, inputMs: 3_600_000, alarmGraceMs: 300_000 }, 50, Date.now()),
        ),
      ],
    ];
    const first = await listRows(db, { status: ["failed"] }, NEWEST, 50, null, Date.now());
    expect(first.rows).toHaveLength(50);
    expect(first.rows.every((row) => row.status === "failed")).toBe(true);
    const counts = await countByStatusAndTool(db, {}, Date.now());
    expect(counts.reduce((sum, c) => sum + c.count, 0)).toBeGreaterThanOrEqual(ROWS);
    const floorP50 = percentile(floor, 0.5);
    for (const [name, times] of rows) {
      console.log(
        `[bench] ${name.padEnd(52)} ${fmt(times)}  (${(percentile(times, 0.5) / Math.max(floorP50, 0.001)).toFixed(1)}× floor p50)`,
      );
    }
    // The plans behind the figures.
    const live = "(purge_at IS NULL OR purge_at > ?)";
    await explain(
      "status=failed page",
      `SELECT * FROM durable_mcp_tasks WHERE ${live} AND status IN (?) ORDER BY created_at DESC, task_id DESC LIMIT 51`,
      now,
      "failed",
    );
    await explain(
      "text page",
      `SELECT * FROM durable_mcp_tasks WHERE ${live} AND (instr(task_id, ?) > 0 OR instr(COALESCE(status_message, ''), ?) > 0)
       ORDER BY created_at DESC, task_id DESC LIMIT 51`,
      now,
      "timeout",
      "timeout",
    );
    await explain(
      "counts, last day",
      `SELECT status, tool, COUNT(*) FROM durable_mcp_tasks WHERE ${live} AND created_at >= ? GROUP BY status, tool`,
      now,
      now - DAY,
    );
    await explain(
      "stuck",
      `SELECT task_id FROM durable_mcp_tasks WHERE status IN ('working', 'input_required') AND ${live}
       AND (status = 'working' AND MAX(updated_at, COALESCE(step_updated_at, 0)) < ?)
       ORDER BY MAX(updated_at, COALESCE(step_updated_at, 0)) ASC, task_id LIMIT 50`,
      now,
      now - 900_000,
    );
  });

  it(`a bulk cancel of ${BULK} real tasks through the operator API: progress, and none missed`, async () => {
    const owner = `bulk-${newTaskId().slice(0, 8)}`;
    const runners = new RunnerClient(catalogEnv.CATALOG_TASK_RUNNER);
    const created: string[] = [];
    const begin = performance.now();
    const queue = Array.from({ length: BULK }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const taskId = newTaskId();
          await runners.create({
            taskId,
            principal: owner,
            tool: "wait_long",
            input: JSON.stringify({ customer: `bulk${i % 10}` }),
            ttlMs: DAY,
            pollIntervalMs: 1000,
            origin: "http://fixture.test",
            clientCapabilities: {},
          });
          created.push(taskId);
        }
      }),
    );
    const createdMs = performance.now() - begin;
    // Wait for the catalog to hold every live row (each runner files its own).
    const filedBegin = performance.now();
    for (;;) {
      const n = await db
        .prepare("SELECT COUNT(*) AS n FROM durable_mcp_tasks WHERE principal = ? AND status = 'working'")
        .bind(owner)
        .first<{ n: number }>();
      if (n!.n === BULK) break;
      if (performance.now() - filedBegin > 300_000) throw new Error(`only ${n!.n} rows filed`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(
      `[bench] created ${BULK} tasks (32 at a time) in ${(createdMs / 1000).toFixed(1)} s; all filed ${((performance.now() - filedBegin) / 1000).toFixed(1)} s later`,
    );

    const started = performance.now();
    let { job } = await operator("/cancellations", { where: { principal: owner } });
    expect(job.total).toBe(BULK);
    const progress: string[] = [];
    let polls = 0;
    while (job.state !== "done") {
      await new Promise((resolve) => setTimeout(resolve, 250));
      ({ job } = await operator(`/cancellations/${job.jobId}`));
      polls++;
      if (polls % 8 === 0) progress.push(`${((performance.now() - started) / 1000).toFixed(0)}s:${job.done}`);
      if (performance.now() - started > 1_800_000) throw new Error(`bulk cancel stalled at ${job.done}`);
    }
    const jobMs = performance.now() - started;
    expect(job).toMatchObject({ state: "done", total: BULK, done: BULK, failed: 0 });
    const audit = await db
      .prepare("SELECT action, task_ids FROM durable_mcp_audit WHERE target LIKE ? ORDER BY seq")
      .bind(`%${job.jobId}%`)
      .all<{ action: string; task_ids: string }>();
    const named = new Set(audit.results.flatMap((entry) => JSON.parse(entry.task_ids) as string[]));
    expect(named.size).toBe(BULK);
    expect(created.every((id) => named.has(id))).toBe(true);
    // Every runner ended its task (the catalog follows a moment later).
    const settle = performance.now();
    for (;;) {
      const n = await db
        .prepare("SELECT COUNT(*) AS n FROM durable_mcp_tasks WHERE principal = ? AND status = 'cancelled'")
        .bind(owner)
        .first<{ n: number }>();
      if (n!.n === BULK) break;
      if (performance.now() - settle > 300_000) throw new Error(`only ${n!.n} rows show cancelled`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const slices = audit.results.filter((entry) => entry.action !== "bulk_cancel_started").length;
    console.log(
      `[bench] bulk cancel of ${BULK}: done in ${(jobMs / 1000).toFixed(1)} s (${(BULK / (jobMs / 1000)).toFixed(0)} tasks/s), ${slices} runs of ≤1,000, ${polls} polls, 0 failed, 0 missed; all rows cancelled ${((performance.now() - settle) / 1000).toFixed(1)} s later`,
    );
    console.log(`[bench] bulk cancel progress (elapsed:done): ${progress.join(" ")}`);
  });
});
