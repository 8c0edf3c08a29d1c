// Fair share at the scale: A floods with 1,000 tasks, B starts 10, on real TaskRunner and TaskLimiter
// objects. B's bound is stated in run times measured during the flood (a lone task of a third principal, whose own
// limit is free), never in absolute milliseconds: the machine's load slows both alike. A's tasks need not all run:
// the rest are cancelled at the end (cancelling a queued task takes it out of its queue), and the limiter must then
// hold no slot and no queue. The limit is checked from the step timestamps of every task's journal.
import { describe, expect, it } from "vitest";
import { isFinal, waitForTask } from "../helpers.js";
import {
  finished,
  intervalsOf,
  limiterStatus,
  maxConcurrent,
  startLimited,
  startMany,
  unique,
  type Interval,
  type Started,
} from "./helpers.js";

const A_TASKS = 1_000;
const B_TASKS = 10;
const LIMIT = 5;
// Long enough that A's queue is still long when B comes (A drains at most LIMIT per run while it creates).
const RUN_MS = 300;
// Every task lives long enough to be read at the end, however loaded the machine (1,000 creates take minutes there).
const TTL_MS = 900_000;

/** Milliseconds from just before a lone task's create until the test sees it final: one run time, as B's are seen. */
async function oneRunTime(tool: string, principal: string): Promise<number> {
  const before = Date.now();
  const task = await startLimited(tool, { ms: RUN_MS }, principal, undefined, TTL_MS);
  await waitForTask(task, isFinal, 180_000);
  return Date.now() - before;
}

/** Cancels every task not final yet, 25 at a time; then waits for all to be final. */
async function cancelRest(tasks: Started[]): Promise<void> {
  for (let i = 0; i < tasks.length; i += 25) {
    await Promise.all(tasks.slice(i, i + 25).map((task) => task.stub.cancel(task.access)));
  }
  await finished(tasks, 180_000);
}

/** intervalsOf over many tasks, 25 journals at a time (a cancelled run's unended attempt ends at its cancel). */
async function allIntervals(tasks: Started[]): Promise<Interval[]> {
  const all: Interval[] = [];
  for (let i = 0; i < tasks.length; i += 25) all.push(...(await intervalsOf(tasks.slice(i, i + 25))));
  return all;
}

/** How many of `tasks` had not started a step by `at`. */
function notStartedBy(tasks: Started[], steps: Interval[], at: number): number {
  const started = new Set(steps.filter((s) => s.start <= at).map((s) => s.taskId));
  return tasks.filter((task) => !started.has(task.taskId)).length;
}

describe("fair share at scale: 1,000 tasks of A, 10 of B", () => {
  it("per-principal limit of 5: B's ten finish within about two of their run times; never more than 5 at once", async () => {
    const a = unique("alice");
    const b = unique("bob");
    const createsStarted = Date.now();
    const aTasks = await startMany(A_TASKS, "work", { ms: RUN_MS }, a, 25, TTL_MS);
    const aCreatedIn = Date.now() - createsStarted;
    // B's ten and one lone task of a third principal at the same moment: the lone task is one run time, under the
    // same load.
    const bStart = Date.now();
    const [oneRun, bTasks] = await Promise.all([
      oneRunTime("work", unique("carol")),
      startMany(B_TASKS, "work", { ms: RUN_MS }, b, B_TASKS, TTL_MS),
    ]);
    await finished(bTasks, 180_000);
    const bTook = Date.now() - bStart;
    await cancelRest(aTasks);

    const aSteps = await allIntervals(aTasks);
    const bSteps = await allIntervals(bTasks);
    console.log(JSON.stringify({ aCreatedIn, oneRun, bTook, aRan: new Set(aSteps.map((s) => s.taskId)).size }));
    expect(bSteps).toHaveLength(B_TASKS);
    expect(maxConcurrent(aSteps)).toBeLessThanOrEqual(LIMIT);
    expect(maxConcurrent(bSteps)).toBeLessThanOrEqual(LIMIT);
    // Two waves of five: about two run times (measured 1.5–1.8); one more for handing a slot on under load.
    expect(bTook).toBeLessThanOrEqual(3 * oneRun);
    // A was flooding all along: most of its tasks had not started when B was done.
    expect(notStartedBy(aTasks, aSteps, bStart + bTook)).toBeGreaterThanOrEqual(A_TASKS / 2);
    // No slot leaked, nothing left queued, after 1,000 tasks most of which were cancelled while waiting.
    const status = await limiterStatus(`principal:${a}`);
    expect(status).toMatchObject({ inUse: 0, queued: 0 });
    expect(status.waits).toBeGreaterThanOrEqual(A_TASKS / 2);
    expect(await limiterStatus(`principal:${b}`)).toMatchObject({ inUse: 0, queued: 0 });
  }, 420_000);

  it("one shared named limit of 5: A cannot starve B, turns alternate once B waits; never more than 5 at once", async () => {
    const a = unique("alice");
    const b = unique("bob");
    const aTasks = await startMany(A_TASKS, "shared_work", { ms: RUN_MS }, a, 25, TTL_MS);
    const bStart = Date.now();
    const [oneRun, bTasks] = await Promise.all([
      // A lone task of the same length under a limit nobody else uses: one run time, under the same load.
      oneRunTime("work", unique("carol")),
      startMany(B_TASKS, "shared_work", { ms: RUN_MS }, b, B_TASKS, TTL_MS),
    ]);
    // From when every B task is known to wait (or already ran): a time the test observed, so no later than that.
    await Promise.all(
      bTasks.map((task) =>
        waitForTask(task, (t) => t.statusMessage?.startsWith("queued:") === true || t.status !== "working", 30_000),
      ),
    );
    const allQueuedAt = Date.now();
    await finished(bTasks, 180_000);
    const bTook = Date.now() - bStart;
    await cancelRest(aTasks);

    const steps = await allIntervals([...aTasks, ...bTasks]);
    const bSteps = steps.filter((s) => s.principal === b);
    expect(bSteps).toHaveLength(B_TASKS);
    expect(maxConcurrent(steps)).toBeLessThanOrEqual(LIMIT);
    // Round-robin once all of B waits: each A grant is followed by a B grant, so A gets at most `bRemaining` grants
    // before B's last; plus the at most LIMIT A tasks holding or granted a slot at allQueuedAt that start their step
    // after it; plus the at most LIMIT - 1 slots that can free (and go to A) while B's last grant wakes its runner.
    const bRemaining = bSteps.filter((s) => s.start > allQueuedAt).length;
    const bLastStart = Math.max(...bSteps.map((s) => s.start));
    const aInWindow = steps.filter((s) => s.principal === a && s.start > allQueuedAt && s.start <= bLastStart).length;
    console.log(JSON.stringify({ oneRun, bTook, bRemaining, aInWindow }));
    expect(aInWindow).toBeLessThanOrEqual(bRemaining + LIMIT + (LIMIT - 1));
    // In run times: B's ten share the five slots with A's turns, so about four waves instead of two (measured 3.5–3.8
    // run times); two more for the hand-overs under load. A's queue, by contrast, needed hundreds of waves.
    expect(bTook).toBeLessThanOrEqual(6 * oneRun);
    expect(notStartedBy(aTasks, steps, bStart + bTook)).toBeGreaterThanOrEqual(A_TASKS / 2);
    expect(await limiterStatus("named:crawl-api")).toMatchObject({ inUse: 0, queued: 0 });
  }, 420_000);
});
