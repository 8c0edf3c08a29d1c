import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import {
  FIRST_RUN_FALLBACK_MS,
  PREPARED_RUNNER_MAX_AGE_MS,
  PREPARED_RUNNER_POOL_MAX,
  PREPARED_RUNNER_RATE_WINDOW_MS,
  PREPARED_RUNNER_REFILL_DELAY_MS,
  PREPARED_RUNNER_TTL_MS,
} from "../../src/limits.js";
import { RunnerPool } from "../../src/tasks/runner-pool.js";
import type { TaskRunnerRpc } from "../../src/runner/index.js";
import { fixtureEnv } from "../helpers.js";

const namespace = () => fixtureEnv.TASK_RUNNER as unknown as DurableObjectNamespace;

/** Whether the runner of `taskId` holds a prepared schema and its deadline (what `prepare` leaves). */
const isPrepared = (taskId: string) =>
  runInDurableObject(namespace().get(namespace().idFromName(taskId)), async (_, state) => ({
    tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'task'").toArray().length,
    alarm: await state.storage.getAlarm(),
  }));

/**
 * The TaskRunner namespace, counting the objects reached through it (one per name: a task's id, or an id the pool
 * prepared) and when each was prepared, on the simulated clock.
 */
function countingNamespace(clock: () => number) {
  const real = namespace();
  const names = new Map<string, string>();
  const preparedAt = new Map<string, number>();
  const counted = {
    idFromName(name: string) {
      const id = real.idFromName(name);
      names.set(id.toString(), name);
      return id;
    },
    get(id: DurableObjectId) {
      const stub = real.get(id) as unknown as TaskRunnerRpc;
      const name = names.get(id.toString())!;
      return {
        prepare: () => (preparedAt.set(name, clock()), stub.prepare()),
        create: (task: Parameters<TaskRunnerRpc["create"]>[0]) => stub.create(task),
      };
    },
  } as unknown as DurableObjectNamespace;
  return { namespace: counted, names, preparedAt };
}

/**
 * `creates` creates of a no-step task, one every `intervalMs` on a simulated clock (the real one barely moves: each
 * create waits only for its own RPC and the refill after it), each on a real TaskRunner, as the router makes them: an id
 * from the pool or a new one, the create, then the refill the create asks for. What it cost: the objects reached, the
 * prepares, and how long (simulated) each claimed runner had waited since its `prepare`.
 */
async function drive(intervalMs: number, creates: number, options: { waitForDelay?: boolean } = {}) {
  let now = Date.now() + 3_600_000;
  const clock = () => now;
  const pool = new RunnerPool({ now: clock });
  const counted = countingNamespace(clock);
  const waits: number[] = [];
  for (let i = 0; i < creates; i++) {
    if (i > 0) now += intervalMs;
    const pooled = pool.take(now);
    const taskId = pooled ?? newTaskId();
    if (pooled) waits.push(now - counted.preparedAt.get(pooled)!);
    const runner = counted.namespace.get(counted.namespace.idFromName(taskId)) as unknown as TaskRunnerRpc;
    await runner.create({
      taskId,
      principal: "alice",
      tool: "long_result",
      input: JSON.stringify({ chars: 1 }),
      ttlMs: 60_000,
      pollIntervalMs: 100,
    });
    // The router's refill (ctx.waitUntil), without its delay where the run would otherwise take minutes.
    if (options.waitForDelay) await pool.scheduleRefill(counted.namespace);
    else await pool.refill(counted.namespace, now);
  }
  const prepares = counted.preparedAt.size;
  return { pool, objects: counted.names.size, prepares, claimed: waits.length, waits };
}

describe("RunnerPool: prepares only what its create rate will claim", () => {
  it("prepares nothing at one create a minute: each task is one object, and nothing is made between creates", async () => {
    const { objects, prepares, pool } = await drive(60_000, 8, { waitForDelay: true });
    expect(prepares).toBe(0);
    expect(objects / 8).toBeLessThanOrEqual(1.1);
    expect(pool.available).toBe(0);
  });

  it("prepares nothing at one create a second (a runner would wait past its alarm's first second)", async () => {
    const { objects, prepares } = await drive(1_000, 20);
    expect(prepares).toBe(0);
    expect(objects / 20).toBeLessThanOrEqual(1.1);
  });

  it("at 100 creates a second, claims what it prepares within the first run's fallback window: ≤ 1.1 objects a task", async () => {
    const creates = 120;
    const { objects, prepares, claimed, waits, pool } = await drive(10, creates);
    expect(claimed).toBeGreaterThan(creates / 2);
    // Every runner is prepared for a create that comes while its first alarm (the task's fallback) is still ahead.
    expect(Math.max(...waits)).toBeLessThan(FIRST_RUN_FALLBACK_MS);
    // What is not claimed is what the pool still holds for the next creates.
    expect(prepares - claimed).toBe(pool.available);
    expect(objects / creates).toBeLessThanOrEqual(1.1);
  });

  it("hands out a runner for as long as its deadline allows, and not past it", async () => {
    let now = Date.now();
    const pool = new RunnerPool({ now: () => now });
    // A rate that asks for runners, then the creates stop.
    for (let i = 0; i < 100; i++) pool.take(now);
    await pool.refill(namespace());
    const held = pool.available;
    expect(held).toBeGreaterThan(0);
    expect(PREPARED_RUNNER_MAX_AGE_MS).toBeLessThan(PREPARED_RUNNER_TTL_MS);
    now += PREPARED_RUNNER_MAX_AGE_MS - 1;
    const late = pool.take(now);
    expect(late).toBeDefined();
    expect(await isPrepared(late!)).toMatchObject({ tables: 1, alarm: expect.any(Number) });
    now += 1;
    expect(pool.take(now)).toBeUndefined();
    expect(pool.available).toBe(0);
  });

  it("never holds more than its maximum, however many creates come, and nothing once they stop", async () => {
    let now = Date.now();
    const pool = new RunnerPool({ max: 5, now: () => now });
    for (let i = 0; i < 1_000; i++) pool.take(now);
    expect(pool.target()).toBe(5);
    await pool.refill(namespace());
    expect(pool.available).toBe(5);
    expect(new RunnerPool({ now: () => now }).target()).toBe(0);
    now += PREPARED_RUNNER_RATE_WINDOW_MS;
    expect(pool.target()).toBe(0);
    expect(pool.scheduleRefill(namespace())).toBeUndefined();
    expect(PREPARED_RUNNER_POOL_MAX).toBeGreaterThanOrEqual(20);
  });

  it("refills after its delay, never at once, and one refill at a time", async () => {
    const now = Date.now();
    const pool = new RunnerPool({ now: () => now });
    for (let i = 0; i < 100; i++) pool.take(now);
    const target = pool.target();
    expect(target).toBeGreaterThan(0);
    const begun = Date.now();
    const refill = pool.scheduleRefill(namespace());
    expect(refill).toBeInstanceOf(Promise);
    // A second create's request while one is scheduled adds none: the scheduled one tops up for both.
    expect(pool.scheduleRefill(namespace())).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, PREPARED_RUNNER_REFILL_DELAY_MS / 2));
    expect(pool.available).toBe(0);
    await refill;
    expect(Date.now() - begun).toBeGreaterThanOrEqual(PREPARED_RUNNER_REFILL_DELAY_MS);
    expect(pool.available).toBe(target);
    // Full: a create that takes one may schedule again; one that finds the pool at its target schedules nothing.
    expect(pool.scheduleRefill(namespace())).toBeUndefined();
    pool.take(now);
    const again = pool.scheduleRefill(namespace());
    expect(again).toBeInstanceOf(Promise);
    await again;
  });
});
