import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fixtureEnv, isFinal, waitForTask } from "../helpers.js";
import { limiterOf } from "../../src/limiter/index.js";
import {
  intervalsOf,
  limiterStatus,
  maxConcurrent,
  startLimited,
  startedStep,
  unique,
  type Started,
} from "./helpers.js";

const leased = fixtureEnv.LEASED_RUNNER;
const stubOf = (task: Started) => leased.get(leased.idFromName(task.taskId));
/** Kills the task's object as a crash would: the call that does it fails, the next stub reaches a new instance. */
const kill = (task: Started) =>
  runInDurableObject(stubOf(task), (_, state) => state.abort("test: killed")).then(
    () => "survived",
    () => "killed",
  );
/** A fresh stub: one to an aborted instance stays broken. */
const revive = (task: Started): Started => ({ ...task, stub: stubOf(task) as unknown as Started["stub"] });
const queued = (t: { statusMessage?: string | null }) => t.statusMessage?.startsWith("queued:") === true;

describe("fair share: crashes", () => {
  it("tasks killed while running, waiting and starting are all finished; the limit held, no slot leaked", async () => {
    const p = unique("kim");
    const running = await startLimited("lease_work", { ms: 1_500 }, p, leased);
    await waitForTask(running, () => startedStep(running), 5_000);
    const waiting = await startLimited("lease_work", { ms: 100 }, p, leased);
    await waitForTask(waiting, queued, 5_000);
    const killedAt = Date.now();
    expect(await kill(running)).toBe("killed");
    expect(await kill(waiting)).toBe("killed");
    // Killed right after its create: before or while its first run asks for a slot.
    const starting = await startLimited("lease_work", { ms: 100 }, p, leased);
    expect(await kill(starting)).toBe("killed");

    const tasks = [running, waiting, starting].map(revive);
    const done = await Promise.all(tasks.map((task) => waitForTask(task, isFinal, 30_000))).catch(async (error) => {
      // What the limiter and each task held when one did not finish: the report of a failure, not an assertion.
      const states = await Promise.all(tasks.map((task) => task.stub.get(task.access)));
      console.error("not finished", await limiterStatus("named:lease-solo"), JSON.stringify(states));
      throw error;
    });
    expect(done.map((task) => task.status)).toEqual(["completed", "completed", "completed"]);
    // The killed run's step never ended in its journal: it counts as running until the kill.
    const steps = await intervalsOf(tasks, killedAt);
    expect(maxConcurrent(steps)).toBe(1);
    expect(await limiterStatus("named:lease-solo")).toMatchObject({ inUse: 0, queued: 0 });
  }, 60_000);

  it("a slot whose holder never comes back returns after its lease, and the next task runs", async () => {
    const p = unique("lee");
    // A holder that took the slot and died: nothing renews it, nothing releases it.
    const limiter = limiterOf(fixtureEnv.TASK_LIMITER, "named:lease-solo");
    const ghost = `ghost-${crypto.randomUUID()}`;
    const took = await limiter.acquire({
      taskId: ghost,
      limit: 1,
      fairKey: "ghost",
      priority: 0,
      leaseMs: 1_000,
      runnerBinding: "LEASED_RUNNER",
    });
    expect(took).toEqual({ granted: true });
    const takenAt = Date.now();
    const next = await startLimited("lease_work", { ms: 20 }, p, leased);
    await waitForTask(next, queued, 5_000);
    const done = await waitForTask(next, isFinal, 15_000);
    expect(done.status).toBe("completed");
    const [step] = await intervalsOf([next]);
    // Not before the ghost's lease lapsed.
    expect(step!.start).toBeGreaterThanOrEqual(takenAt + 1_000);
    expect(await limiterStatus("named:lease-solo")).toMatchObject({ inUse: 0, queued: 0 });
  }, 30_000);

  it("a limiter killed while tasks wait loses none of them", async () => {
    const p = unique("max");
    const first = await startLimited("lease_work", { ms: 600 }, p, leased);
    await waitForTask(first, () => startedStep(first), 5_000);
    const second = await startLimited("lease_work", { ms: 20 }, p, leased);
    await waitForTask(second, queued, 5_000);
    const limiterStub = fixtureEnv.TASK_LIMITER.get(fixtureEnv.TASK_LIMITER.idFromName("named:lease-solo"));
    await runInDurableObject(limiterStub, (_, state) => state.abort("test: killed")).catch(() => undefined);
    const done = await Promise.all([first, second].map((task) => waitForTask(task, isFinal, 20_000)));
    expect(done.map((task) => task.status)).toEqual(["completed", "completed"]);
    expect(maxConcurrent(await intervalsOf([first, second]))).toBe(1);
    expect(await limiterStatus("named:lease-solo")).toMatchObject({ inUse: 0, queued: 0 });
  }, 30_000);
});
