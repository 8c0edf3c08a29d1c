import { describe, expect, it } from "vitest";
import { isFinal, waitForTask } from "../helpers.js";
import {
  finished,
  intervalsOf,
  limiterStatus,
  maxConcurrent,
  startLimited,
  startMany,
  startedStep,
  unique,
  type Started,
} from "./helpers.js";

// Scaled down from the 1,000 tasks of A: each task is its own Durable Object on a shared 2-core machine.
const A_TASKS = 100;
const B_TASKS = 10;
const LIMIT = 5;
const RUN_MS = 150;

const queued = (t: { statusMessage?: string | null }) => t.statusMessage?.startsWith("queued:") === true;

describe("fair share: per-principal limit", () => {
  it("B's tasks finish within about two of their run times while A floods; never more than 5 run at once", async () => {
    const a = unique("alice");
    const b = unique("bob");
    const aTasks = await startMany(A_TASKS, "work", { ms: RUN_MS }, a);
    const bTasks = await startMany(B_TASKS, "work", { ms: RUN_MS }, b, B_TASKS);
    const bCreated = Date.now();
    await finished(bTasks, 30_000);
    const aDone = await Promise.all(aTasks.map((task) => task.stub.get(task.access)));
    await finished(aTasks, 120_000);

    const aSteps = await intervalsOf(aTasks);
    const bSteps = await intervalsOf(bTasks);
    expect(aSteps).toHaveLength(A_TASKS);
    expect(bSteps).toHaveLength(B_TASKS);
    expect(maxConcurrent(aSteps)).toBeLessThanOrEqual(LIMIT);
    expect(maxConcurrent(bSteps)).toBeLessThanOrEqual(LIMIT);
    // B's ten tasks are two waves of five under its own limit: about two of its run times after its creates, plus
    // the hops of starting and waking (up to 3 s on a loaded machine)...
    const bRun = Math.max(...bSteps.map((s) => s.end - s.start));
    const bLastEnd = Math.max(...bSteps.map((s) => s.end));
    expect(bLastEnd - bCreated).toBeLessThanOrEqual(2 * bRun + 3_000);
    // ...and, whatever the machine's load (it slows A and B alike), far less than A's queue still needed then: at
    // least 25 of A's tasks had not started, five runs of A's limit or more, against B's two.
    const aLastEnd = Math.max(...aSteps.map((s) => s.end));
    expect(aSteps.filter((s) => s.start > bCreated).length).toBeGreaterThanOrEqual(25);
    expect(bLastEnd - bCreated).toBeLessThan((aLastEnd - bCreated) / 2);
    // A was still busy when B had finished: B did not wait for A's queue.
    expect(aDone.filter((task) => task && !isFinal(task)).length).toBeGreaterThan(0);
    const status = await limiterStatus(`principal:${a}`);
    expect(status).toMatchObject({ inUse: 0, queued: 0 });
    expect(status.waits).toBeGreaterThan(0);
  }, 180_000);
});

describe("fair share: one shared named limit", () => {
  it("A cannot starve B: turns alternate once B waits; never more than 5 run at once", async () => {
    const a = unique("alice");
    const b = unique("bob");
    const aTasks = await startMany(A_TASKS, "shared_work", { ms: RUN_MS * 2 }, a);
    const bTasks = await startMany(B_TASKS, "shared_work", { ms: RUN_MS * 2 }, b, B_TASKS);
    // From when every B task is known to wait (or already ran): a time the test observed, so no later than that.
    await Promise.all(
      bTasks.map((task) =>
        waitForTask(
          task,
          (t) => t.statusMessage?.startsWith("queued:") === true || t.status !== "working",
          10_000,
        ).catch(() => null),
      ),
    );
    const allQueuedAt = Date.now();
    await finished([...aTasks, ...bTasks], 180_000);

    const steps = await intervalsOf([...aTasks, ...bTasks]);
    expect(maxConcurrent(steps)).toBeLessThanOrEqual(LIMIT);
    const bSteps = steps.filter((s) => s.principal === b);
    const bRemaining = bSteps.filter((s) => s.start > allQueuedAt).length;
    const bLastStart = Math.max(...bSteps.map((s) => s.start));
    const aInWindow = steps.filter((s) => s.principal === a && s.start > allQueuedAt && s.start <= bLastStart).length;
    // Once all of B waits, each A grant is followed by a B grant (round-robin), so A gets at most `bRemaining` grants
    // before B's last; plus the at most LIMIT A tasks holding or granted a slot at allQueuedAt that start their step
    // after it; plus the at most LIMIT - 1 slots that can free (and go to A) while B's last grant wakes its runner
    // (a wake is far shorter than a run, so each other slot frees at most once meanwhile).
    expect(aInWindow).toBeLessThanOrEqual(bRemaining + LIMIT + (LIMIT - 1));
    expect(await limiterStatus("named:crawl-api")).toMatchObject({ inUse: 0, queued: 0 });
  }, 240_000);
});

describe("fair share: slots, priority, cancel, bad keys", () => {
  it("a sleeping task holds no slot", async () => {
    const p = unique("carol");
    const sleeper = await startLimited("solo_work", { ms: 30, sleepMs: 1_500 }, p);
    await waitForTask(sleeper, () => startedStep(sleeper), 10_000);
    const other = await startLimited("solo_work", { ms: 30 }, p);
    await finished([other, sleeper], 20_000);
    const [otherStep] = await intervalsOf([other]);
    const sleeperSteps = await intervalsOf([sleeper]);
    // The other task ran while the sleeper slept: between its two steps, under a limit of one.
    expect(otherStep!.end).toBeLessThanOrEqual(sleeperSteps[1]!.start);
    expect(maxConcurrent([otherStep!, ...sleeperSteps])).toBe(1);
  });

  it("honours priority inside a fairness key, then arrival", async () => {
    const p = unique("dave");
    const group = unique("g");
    const blocker = await startLimited("grouped", { ms: 800, group, priority: 0 }, p);
    await waitForTask(blocker, () => startedStep(blocker), 5_000);
    const low = await startLimited("grouped", { ms: 20, group, priority: 1 }, p);
    const low2 = await startLimited("grouped", { ms: 20, group, priority: 1 }, p);
    const high = await startLimited("grouped", { ms: 20, group, priority: 5 }, p);
    await waitForTask(low, queued, 5_000);
    await waitForTask(low2, queued, 5_000);
    const highWaiting = await waitForTask(high, queued, 5_000);
    // Its place as the limiter counts it: the high-priority task goes first.
    expect(highWaiting.statusMessage).toBe("queued: 0 ahead");
    // A place is as of the task's last ask (here: when it joined, before `high` came), not refreshed per tasks/get.
    expect((await low2.stub.get(low2.access))?.statusMessage).toBe("queued: 1 ahead");
    await finished([blocker, low, low2, high], 20_000);
    const starts = Object.fromEntries((await intervalsOf([low, low2, high])).map((s) => [s.taskId, s.start])) as Record<
      string,
      number
    >;
    expect(starts[high.taskId]!).toBeLessThanOrEqual(starts[low.taskId]!);
    expect(starts[low.taskId]!).toBeLessThanOrEqual(starts[low2.taskId]!);
  });

  it("cancelling a waiting task takes it out of the queue", async () => {
    const p = unique("erin");
    const group = unique("g");
    const blocker = await startLimited("grouped", { ms: 1_000, group }, p);
    await waitForTask(blocker, () => startedStep(blocker), 5_000);
    const waiter = await startLimited("grouped", { ms: 20, group }, p);
    await waitForTask(waiter, (t) => t.statusMessage === "queued: 0 ahead", 5_000);
    expect(await limiterStatus(`task:grouped:${group}`)).toMatchObject({ inUse: 1, queued: 1 });
    // Polls are not throttled (docs/limits.md): far faster than its pollIntervalMs, each answers, from the task's own
    // object, with the place it had (no limiter call per get).
    const polls = await Promise.all(Array.from({ length: 50 }, () => waiter.stub.get(waiter.access)));
    expect(polls.map((t) => t?.statusMessage)).toEqual(Array(50).fill("queued: 0 ahead"));
    expect(await waiter.stub.cancel(waiter.access)).toBe(true);
    expect(await limiterStatus(`task:grouped:${group}`)).toMatchObject({ inUse: 1, queued: 0 });
    await finished([blocker], 10_000);
    expect((await waiter.stub.get(waiter.access))?.status).toBe("cancelled");
    expect(await intervalsOf([waiter])).toHaveLength(0);
    expect(await limiterStatus(`task:grouped:${group}`)).toMatchObject({ inUse: 0, queued: 0 });
  });

  it("cancelling a running task gives its slot to the next at once; its body stops by its signal", async () => {
    const p = unique("gina");
    const group = unique("g");
    const running = await startLimited("grouped", { ms: 10_000, group }, p);
    await waitForTask(running, () => startedStep(running), 5_000);
    const next = await startLimited("grouped", { ms: 20, group }, p);
    await waitForTask(next, queued, 5_000);
    expect(await running.stub.cancel(running.access)).toBe(true);
    await finished([next], 8_000);
    // The cancelled run's attempt ends at its cancel (the journal takes nothing after it): the next task's step came
    // after that, not after the 10 s the body would have taken.
    const [cancelled] = await intervalsOf([running]);
    const [after] = await intervalsOf([next]);
    expect(after!.start).toBeGreaterThanOrEqual(cancelled!.end);
    expect(after!.start).toBeLessThan(cancelled!.start + 10_000);
    expect(await limiterStatus(`task:grouped:${group}`)).toMatchObject({ inUse: 0, queued: 0 });
  });

  it.each([
    ["bad_key", {}, "limit_key_invalid"],
    ["bad_key", { group: "x".repeat(257) }, "limit_key_invalid"],
    ["throwing_key", {}, "limit_key_failed"],
    ["unknown_named", {}, "unknown_limit"],
  ])("%s fails its task with a clear code (%#)", async (tool, input, reason) => {
    const task = await startLimited(tool, input, unique("frank"));
    const done = await waitForTask(task, isFinal, 10_000);
    expect(done.status).toBe("failed");
    expect(done.error?.data).toMatchObject({ reason });
  });
});

export type { Started };
