import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  PREPARED_RUNNER_DEMAND_WINDOW_MS,
  PREPARED_RUNNER_POOL_MAX,
  PREPARED_RUNNER_POOL_SIZE,
  PREPARED_RUNNER_REFILL_DELAY_MS,
} from "../../src/limits.js";
import { RunnerPool } from "../../src/tasks/runner-pool.js";
import { fixtureEnv } from "../helpers.js";

const namespace = () => fixtureEnv.TASK_RUNNER as unknown as DurableObjectNamespace;

/** Whether the runner of `taskId` holds a prepared schema and its deadline (what `prepare` leaves). */
const isPrepared = (taskId: string) =>
  runInDurableObject(namespace().get(namespace().idFromName(taskId)), async (_, state) => ({
    tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'task'").toArray().length,
    alarm: await state.storage.getAlarm(),
  }));

/** `creates` creates in a row at `now`: the prepared ids they were handed (the others found the pool empty). */
function createMany(pool: RunnerPool, creates: number, now: number): string[] {
  const taken: string[] = [];
  for (let i = 0; i < creates; i++) {
    const id = pool.take(now);
    if (id) taken.push(id);
  }
  return taken;
}

describe("RunnerPool: a pool that follows demand", () => {
  it("keeps the minimum when creates are rare", async () => {
    const pool = new RunnerPool();
    await pool.refill(namespace());
    expect(pool.available).toBe(PREPARED_RUNNER_POOL_SIZE);
    const [first] = createMany(pool, 1, Date.now());
    expect(await isPrepared(first!)).toMatchObject({ tables: 1, alarm: expect.any(Number) });
  });

  it("grows by the creates that found it empty, so the next burst finds its runners ready", async () => {
    const pool = new RunnerPool();
    await pool.refill(namespace());
    // A burst of 20 creates: 2 find prepared runners, 18 find the pool empty.
    expect(createMany(pool, 20, Date.now())).toHaveLength(PREPARED_RUNNER_POOL_SIZE);
    await pool.refill(namespace());
    expect(pool.available).toBe(20);
    // The next burst of 20 is served from the pool, every id a distinct prepared runner.
    const next = createMany(pool, 20, Date.now());
    expect(new Set(next).size).toBe(20);
    for (const id of next.slice(0, 3)) expect((await isPrepared(id)).tables).toBe(1);
  });

  it("never holds more than its maximum, however many creates come", async () => {
    const pool = new RunnerPool({ max: 5 });
    createMany(pool, 40, Date.now());
    expect(pool.target()).toBe(5);
    await pool.refill(namespace());
    expect(pool.available).toBe(5);
    expect(new RunnerPool().target()).toBe(PREPARED_RUNNER_POOL_SIZE);
    expect(PREPARED_RUNNER_POOL_MAX).toBeGreaterThanOrEqual(20);
  });

  it("shrinks back to the minimum once the window holds no miss", () => {
    const pool = new RunnerPool();
    const start = Date.now();
    createMany(pool, 12, start);
    expect(pool.target(start)).toBe(PREPARED_RUNNER_POOL_SIZE + 12);
    expect(pool.target(start + PREPARED_RUNNER_DEMAND_WINDOW_MS)).toBe(PREPARED_RUNNER_POOL_SIZE);
  });

  it("stays at its minimum for a client that creates one task at a time, which the refills keep up with", async () => {
    const pool = new RunnerPool();
    await pool.refill(namespace());
    for (let i = 0; i < 6; i++) {
      expect(pool.take()).toBeDefined();
      await pool.refill(namespace());
    }
    expect(pool.target()).toBe(PREPARED_RUNNER_POOL_SIZE);
    expect(pool.available).toBe(PREPARED_RUNNER_POOL_SIZE);
  });

  it("refills after its delay, never at once, and one refill at a time", async () => {
    const pool = new RunnerPool();
    const begun = Date.now();
    const refill = pool.scheduleRefill(namespace());
    expect(refill).toBeInstanceOf(Promise);
    // A second create's request while one is scheduled adds none: the scheduled one tops up for both.
    expect(pool.scheduleRefill(namespace())).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, PREPARED_RUNNER_REFILL_DELAY_MS / 2));
    expect(pool.available).toBe(0);
    await refill;
    expect(Date.now() - begun).toBeGreaterThanOrEqual(PREPARED_RUNNER_REFILL_DELAY_MS);
    expect(pool.available).toBe(PREPARED_RUNNER_POOL_SIZE);
    // Done: the next create may schedule again.
    const again = pool.scheduleRefill(namespace());
    expect(again).toBeInstanceOf(Promise);
    await again;
  });
});
