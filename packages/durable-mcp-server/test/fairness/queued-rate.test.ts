import { describe, expect, it } from "vitest";
import { isFinal, waitForTask } from "../helpers.js";
import { rpc } from "../jsonrpc.js";
import { finished, intervalsOf, limiterStatus, maxConcurrent, startLimited, unique, type Started } from "./helpers.js";

// `rateLimit: { queue: true }` (test/fixtures/limited.ts: "rated" allows 2 starts a second per group, "rated_solo" 1
// per 500 ms and one at a time): tasks over the rate are created and wait; the starts are checked from the journals.

const rateQueued = (t: { statusMessage?: string | null }) =>
  /^queued: rate limit, next start in \d+ s$/.test(t.statusMessage ?? "");

/** Each task's first step start, from its journal, in order. */
async function firstStarts(tasks: Started[]): Promise<number[]> {
  const steps = await intervalsOf(tasks);
  const first = new Map<string, number>();
  for (const step of steps) first.set(step.taskId, Math.min(first.get(step.taskId) ?? Infinity, step.start));
  expect(first.size).toBe(tasks.length);
  return [...first.values()].toSorted((a, b) => a - b);
}

/** The shortest span holding `limit + 1` consecutive starts: a window of the period may hold `limit` only. */
function tightestSpan(starts: number[], limit: number): number {
  let span = Infinity;
  for (let i = 0; i + limit < starts.length; i++) span = Math.min(span, starts[i + limit]! - starts[i]!);
  return span;
}

describe("queued rate limits", () => {
  it("creates every task; at most `limit` first steps begin in any period; the rest wait, saying when", async () => {
    const group = unique("g");
    const p = unique("rae");
    const tasks: Started[] = [];
    for (let i = 0; i < 7; i++) tasks.push(await startLimited("rated", { ms: 20, group }, p));
    // The later ones wait for the window, and say so.
    const waiting = await waitForTask(tasks[6]!, (t) => rateQueued(t) || isFinal(t), 5_000);
    expect(waiting.status).toBe("working");
    expect(rateQueued(waiting)).toBe(true);
    const done = await finished(tasks, 30_000);
    expect(done.map((t) => t.status)).toEqual(Array(7).fill("completed"));
    const starts = await firstStarts(tasks);
    // Exact: any three consecutive starts span a full second or more (2 per 1,000 ms).
    expect(tightestSpan(starts, 2)).toBeGreaterThanOrEqual(1_000);
    // ...and the limit was used: the seven took at least three periods, not seven.
    expect(starts[6]! - starts[0]!).toBeGreaterThanOrEqual(3_000);
    expect(await limiterStatus(`rate:task:rated:${group}`)).toMatchObject({ rateWaiting: 0 });
  }, 60_000);

  it("cancels a task waiting for its start: it leaves the wait and never runs", async () => {
    const group = unique("g");
    const p = unique("ray");
    const first = [
      await startLimited("rated", { ms: 20, group }, p),
      await startLimited("rated", { ms: 20, group }, p),
    ];
    await finished(first, 10_000);
    const waiter = await startLimited("rated", { ms: 20, group }, p);
    const seen = await waitForTask(waiter, (t) => rateQueued(t) || isFinal(t), 5_000);
    // The two earlier starts can have left the window on a slow machine: then this one ran, and the test says so.
    if (!rateQueued(seen)) throw new Error(`the third task was not held back: ${JSON.stringify(seen)}`);
    expect(await limiterStatus(`rate:task:rated:${group}`)).toMatchObject({ rateWaiting: 1 });
    expect(await waiter.stub.cancel(waiter.access)).toBe(true);
    expect(await limiterStatus(`rate:task:rated:${group}`)).toMatchObject({ rateWaiting: 0 });
    // Past the moment it would have started, it is still cancelled, with no step.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await waiter.stub.get(waiter.access))?.status).toBe("cancelled");
    expect(await intervalsOf([waiter])).toHaveLength(0);
    // The window was not used by it: the next task starts at once.
    const next = await startLimited("rated", { ms: 20, group }, p);
    expect((await waitForTask(next, isFinal, 5_000)).status).toBe("completed");
  }, 30_000);

  it("under a concurrency limit too: one at a time, and one start per 500 ms", async () => {
    const group = unique("g");
    const p = unique("rex");
    const tasks: Started[] = [];
    for (let i = 0; i < 4; i++) tasks.push(await startLimited("rated_solo", { ms: 150, group }, p));
    const done = await finished(tasks, 30_000);
    expect(done.map((t) => t.status)).toEqual(Array(4).fill("completed"));
    expect(maxConcurrent(await intervalsOf(tasks))).toBe(1);
    expect(tightestSpan(await firstStarts(tasks), 1)).toBeGreaterThanOrEqual(500);
    expect(await limiterStatus(`task:rated_solo:${group}`)).toMatchObject({ inUse: 0, queued: 0 });
  }, 60_000);

  it("a sleeping task's later runs take no start: only first steps are counted", async () => {
    const group = unique("g");
    const p = unique("rho");
    // One start a second would make the second run (after the nap) wait if it were counted again.
    const sleeper = await startLimited("rated", { ms: 10, sleepMs: 200, group }, p);
    const other = await startLimited("rated", { ms: 10, group }, p);
    const done = await finished([sleeper, other], 10_000);
    expect(done.map((t) => t.status)).toEqual(["completed", "completed"]);
    const steps = await intervalsOf([sleeper]);
    const after = steps.find((s) => s.step === "after")!;
    const work = steps.find((s) => s.step === "work")!;
    // Its second step followed the nap, not a rate window (two starts were taken, by two tasks, in one second).
    expect(after.start - work.end).toBeLessThan(800);
  }, 30_000);
});

describe("queued rate limits on the public API", () => {
  it("creates over the rate are not refused", async () => {
    const principal = unique("quinn");
    for (let i = 0; i < 3; i++) {
      const created = await rpc(
        "tools/call",
        { name: "ping_queued", arguments: {} },
        { path: "/limits/mcp", principal, declare: true },
      );
      expect(created.body.error).toBeUndefined();
      expect(created.body.result?.resultType).toBe("task");
    }
  });
});
