// Restart from a step and retry, as a new task (issue 29): the original stays as it is; the new task has the
// original's principal, tool and input, a journal cut cleanly before the chosen step (packed rows split at the cut),
// and links both ways. A retried request makes no second task, a crash during the seeding leaves nothing half-made,
// and bad requests (a running task, an unknown step, a purged task) change nothing. Real TaskRunners.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodePack } from "../../src/steps/packed-steps.js";
import { stepLabel } from "../../src/steps/step-record.js";
import { StepJournal } from "../../src/steps/journal.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { restartTask } from "../../src/tasks/restart-task.js";
import { LINKS_META } from "../../src/wire/meta-keys.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { callTaskUntil, final } from "../jsonrpc.js";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stubOf = (namespace: DurableObjectNamespace, taskId: string) =>
  namespace.get(namespace.idFromName(taskId)) as unknown as DurableObjectStub & TaskRunnerRpc;
const textOf = (task: { result?: unknown }) =>
  ((task.result as { content: Array<{ text: string }> }).content[0] ?? { text: "" }).text;
const journalOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_, state) =>
    new StepJournal(state.storage.sql).load().map((step) => `${stepLabel(step.name, step.occurrence)}:${step.result}`),
  );

/** A `generations` task that failed at `check` with generation 1; the probe then says generation 2, no failure. */
async function failedOriginal(namespace: DurableObjectNamespace = fixtureEnv.TASK_RUNNER, input = {}) {
  const started = await startTask("generations", input, { namespace });
  await started.probe.set("fail", true);
  // The probe is set after the create: the run may have passed `check` already. Only a failed one is used.
  const done = await waitForTask(started, isFinal);
  if (!JSON.stringify(done.result ?? {}).includes("check failed")) return failedOriginal(namespace, input);
  await started.probe.set("fail", false);
  await started.probe.set("gen", 2);
  return started;
}

function newTask(namespace: DurableObjectNamespace, taskId: string): Pick<StartedTask, "stub" | "access"> {
  return { stub: stubOf(namespace, taskId), access: { taskId, principal: "alice" } };
}

describe("restart from a step", () => {
  it("makes a new task seeded with the journal before the step, re-runs from it, and links both ways", async () => {
    const original = await failedOriginal();
    const before = await journalOf(original.stub);
    const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);
    const outcome = await restartTask(runners, original.access, { fromStep: "s3", requestKey: "req-1" });
    if (!("task" in outcome)) throw new Error(outcome.message);
    expect(outcome.task.taskId).not.toBe(original.taskId);
    const restarted = newTask(fixtureEnv.TASK_RUNNER, outcome.task.taskId);
    const done = await waitForTask(restarted, isFinal);
    // Kept steps keep generation 1; the step restarted from and those after it ran again, in generation 2.
    expect(done.status).toBe("completed");
    expect(textOf(done)).toBe("0@1,1@1,2@1,3@2,4@2,5@2");
    expect(await original.probe.count("check")).toBe(2);
    expect(done._meta?.[LINKS_META]).toEqual({ restartedFrom: { taskId: original.taskId, fromStep: "s3" } });
    const linked = await original.stub.get(original.access);
    expect(linked?._meta?.[LINKS_META]).toEqual({
      restartedAs: [{ taskId: outcome.task.taskId, fromStep: "s3", at: expect.any(String) }],
    });
    // The original is as it was: its journal, its outcome.
    expect(await journalOf(original.stub)).toEqual(before);
    expect(linked?.status).toBe("completed");
    expect(JSON.stringify(linked?.result)).toContain("check failed");

    // The same request again (a retry after a lost answer) gets the same task; another request a new one.
    const again = await restartTask(runners, original.access, { fromStep: "s3", requestKey: "req-1" });
    expect(again).toMatchObject({ task: { taskId: outcome.task.taskId } });
    const second = await restartTask(runners, original.access, { fromStep: "s3", requestKey: null });
    expect(second).toMatchObject({ task: { taskId: expect.any(String) } });
    expect((second as { task: { taskId: string } }).task.taskId).not.toBe(outcome.task.taskId);
  });

  it("splits a packed row at the cut: the steps packed before it stay, the rest go", async () => {
    const original = await failedOriginal();
    const rows = await runInDurableObject(original.stub, (_, state) =>
      state.storage.sql
        .exec<{ name: string; pack: string | null }>("SELECT name, pack FROM steps ORDER BY seq")
        .toArray(),
    );
    // The six pure steps returned at once: packed, fewer rows than steps.
    expect(rows.length).toBeLessThan(7);
    const plan = await original.stub.planRestart(original.access, { fromStep: "s2", requestKey: "plan-only" });
    if (!plan || "refused" in plan) throw new Error(JSON.stringify(plan));
    const seeded = plan.seed.rows.flatMap((row) => [
      row.name,
      ...(row.pack === null ? [] : decodePack(row.pack).map(([name]) => name)),
    ]);
    expect(seeded).toEqual(["s0", "s1"]);
    expect(plan.seed.rows.some((row) => row.pack !== null)).toBe(true);
    expect(plan.seed.task).toMatchObject({
      principal: "alice",
      tool: "generations",
      input: original.access && expect.any(String),
    });
  });

  it("retries: a new task with the same input and no journal", async () => {
    const original = await failedOriginal();
    const outcome = await restartTask(new RunnerClient(fixtureEnv.TASK_RUNNER), original.access, {
      fromStep: null,
      requestKey: null,
    });
    if (!("task" in outcome)) throw new Error(outcome.message);
    const done = await waitForTask(newTask(fixtureEnv.TASK_RUNNER, outcome.task.taskId), isFinal);
    expect(textOf(done)).toBe("0@2,1@2,2@2,3@2,4@2,5@2");
    expect(done._meta?.[LINKS_META]).toEqual({ retriedFrom: { taskId: original.taskId } });
    const linked = await original.stub.get(original.access);
    expect(linked?._meta?.[LINKS_META]).toEqual({
      retriedAs: [{ taskId: outcome.task.taskId, at: expect.any(String) }],
    });
  });
});

describe("spilled results", () => {
  it("copies a kept step's spilled result under the new task; the original's stays", async () => {
    const { task } = await callTaskUntil("big_result", { kib: 1024 }, final);
    expect(task.status).toBe("completed");
    const namespace = fixtureEnv.MCP_TASK_RUNNER;
    const original = stubOf(namespace, task.taskId);
    const record = await runInDurableObject(original, (_, state) => new TaskStore(state.storage.sql).read()!);
    const access = { taskId: task.taskId, principal: record.principal };
    const outcome = await restartTask(new RunnerClient(namespace), access, { fromStep: "nap", requestKey: null });
    if (!("task" in outcome)) throw new Error(outcome.message);
    const created = {
      stub: stubOf(namespace, outcome.task.taskId),
      access: { ...access, taskId: outcome.task.taskId },
    };
    const done = await waitForTask(created, isFinal);
    // Replayed from the copy: the big result read back hashes as it did when it was made.
    const value = JSON.parse(textOf(done)) as { before: string; after: string };
    expect(value.before).toMatch(/^[0-9a-f]{64}$/);
    expect(value.after).toBe(value.before);
    const stored = await runInDurableObject(
      created.stub,
      (_, state) =>
        state.storage.sql.exec<{ result: string }>("SELECT result FROM steps WHERE name = 'big'").one().result,
    );
    expect(stored.startsWith(`@r2:results/${outcome.task.taskId}/`)).toBe(true);
    const originalKey = await runInDurableObject(
      original,
      (_, state) =>
        state.storage.sql.exec<{ result: string }>("SELECT result FROM steps WHERE name = 'big'").one().result,
    );
    expect(await fixtureEnv.FILES.head(originalKey.slice("@r2:".length))).not.toBeNull();
    expect(await fixtureEnv.FILES.head(stored.slice("@r2:".length))).not.toBeNull();
  });
});

describe("a crash during the seeding", () => {
  for (const crashMode of ["throw", "abort"] as const) {
    it(`(${crashMode}) leaves no half-made task, and the retried request makes exactly one`, async () => {
      const namespace = fixtureEnv.SEED_CRASH_RUNNER;
      const original = await failedOriginal(namespace, { crashMode });
      const runners = new RunnerClient(namespace, { attempts: 1, baseDelayMs: 1 });
      const first = await restartTask(runners, original.access, { fromStep: "s4", requestKey: null }).catch(
        (error: Error) => error,
      );
      expect(first).toBeInstanceOf(Error);
      // The original linked the new id before the seeding; nothing is shown until it is seeded.
      const planned = await runInDurableObject(original.stub, async (_, state) => {
        const row = state.storage.sql.exec<{ links: string }>("SELECT links FROM task").one();
        return JSON.parse(row.links) as { restarts: Array<{ taskId: string; seeded: boolean }> };
      });
      expect(planned.restarts).toEqual([expect.objectContaining({ seeded: false })]);
      const half = newTask(namespace, planned.restarts[0]!.taskId);
      expect(await half.stub.get(half.access)).toBeNull();
      // Nothing of the seed was kept (after an abort, not even the schema applied before it).
      const leftover = await runInDurableObject(half.stub, (_, state) => {
        const tables = state.storage.sql
          .exec("SELECT name FROM sqlite_master WHERE name IN ('task', 'steps')")
          .toArray();
        if (tables.length === 0) return 0;
        return state.storage.sql
          .exec<{ n: number }>("SELECT (SELECT COUNT(*) FROM task) + (SELECT COUNT(*) FROM steps) AS n")
          .one().n;
      });
      expect(leftover).toBe(0);

      const retried = await restartTask(runners, original.access, { fromStep: "s4", requestKey: null });
      expect(retried).toMatchObject({ task: { taskId: planned.restarts[0]!.taskId } });
      const done = await waitForTask(half, isFinal);
      expect(textOf(done)).toBe("0@1,1@1,2@1,3@1,4@2,5@2");
      const links = (await original.stub.get(original.access))?._meta?.[LINKS_META] as { restartedAs: unknown[] };
      expect(links.restartedAs).toHaveLength(1);
    });
  }
});

const unlinked = async (started: StartedTask) =>
  runInDurableObject(started.stub, (_, state) => state.storage.sql.exec("SELECT links FROM task").one().links);

describe("bad requests change nothing", () => {
  it("refuses a running task, an unknown step and a purged task", async () => {
    const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);
    const running = await startTask("gated");
    expect(await restartTask(runners, running.access, { fromStep: "a", requestKey: null })).toMatchObject({
      refused: "not_final",
    });
    expect(await restartTask(runners, running.access, { fromStep: null, requestKey: null })).toMatchObject({
      refused: "not_final",
    });
    expect(await unlinked(running)).toBeNull();
    await running.stub.cancel(running.access);

    const original = await failedOriginal();
    const unknown = await restartTask(runners, original.access, { fromStep: "nope#2", requestKey: null });
    expect(unknown).toMatchObject({ refused: "unknown_step" });
    expect((unknown as { message: string }).message).toMatch(/s0, s1/);
    expect(await unlinked(original)).toBeNull();

    // MAX_TASK_RESTARTS: the links a task keeps in its row are bounded.
    const made = Array.from({ length: 100 }, (_, i) => ({
      taskId: `t${i}`,
      fromStep: null,
      at: 1,
      key: `k${i}`,
      seeded: true,
    }));
    await runInDurableObject(original.stub, (_, state) => {
      state.storage.sql.exec("UPDATE task SET links = ?", JSON.stringify({ restarts: made }));
    });
    // The runner keeps its row in memory: a fresh instance reads the one written here.
    await evictDurableObject(original.stub);
    expect(await restartTask(runners, original.access, { fromStep: "s1", requestKey: null })).toMatchObject({
      refused: "too_many_restarts",
    });
    // The same request as one already made still finds its task (here, a fake id): a repeat is not a new restart.
    expect(await original.stub.planRestart(original.access, { fromStep: null, requestKey: "k7" })).toMatchObject({
      seed: { task: { taskId: "t7" } },
    });

    const purged = await startTask("pure_steps", { count: 2 }, { ttlMs: 50 });
    await waitForTask(purged, isFinal);
    const deadline = Date.now() + 5_000;
    while ((await purged.stub.get(purged.access)) !== null && Date.now() < deadline) await delay(50);
    expect(await restartTask(runners, purged.access, { fromStep: "s1", requestKey: null })).toMatchObject({
      refused: "unknown_task",
    });
  });
});
