import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { durableMcp, McpServer } from "../../src/index.js";
import { slotPlansOf } from "../../src/runner/run-slot.js";
import type { TaskDefinition } from "../../src/runner/task-definition.js";
import type { TaskRecord } from "../../src/runner/task-store.js";
import { fixtureEnv, isFinal, waitForTask } from "../helpers.js";
import {
  finished,
  intervalsOf,
  limiterStatus,
  maxConcurrent,
  startLimited,
  startedStep,
  unique,
  type Interval,
  type Started,
} from "./helpers.js";

// One task under several concurrency limits at once (test/fixtures/limited.ts: "multi" is under the shared "pair",
// two at once, and one per group; "lease_multi" the same on the short-lease runner). Checked from the journals.

const byGroup = (steps: Interval[], tasks: Started[], groups: string[]) =>
  groups.map((_, g) => steps.filter((s) => tasks.findIndex((t) => t.taskId === s.taskId) % groups.length === g));

describe("several concurrency limits at once", () => {
  it("neither the shared limit nor a group's own is ever exceeded, and every task finishes", async () => {
    const p = unique("mia");
    const groups = [unique("g"), unique("g"), unique("g")];
    const tasks: Started[] = [];
    // Interleaved: task i is of group i % 3.
    for (let i = 0; i < 9; i++) tasks.push(await startLimited("multi", { ms: 150, group: groups[i % 3] }, p));
    const done = await finished(tasks, 60_000);
    expect(done.map((t) => t.status)).toEqual(Array(9).fill("completed"));
    const steps = await intervalsOf(tasks);
    expect(steps).toHaveLength(9);
    expect(maxConcurrent(steps)).toBeLessThanOrEqual(2);
    // Both limits bit: two ran at once at some point (the shared one's), never two of one group.
    expect(maxConcurrent(steps)).toBe(2);
    for (const group of byGroup(steps, tasks, groups)) expect(maxConcurrent(group)).toBe(1);
    expect(await limiterStatus("named:pair")).toMatchObject({ inUse: 0, queued: 0 });
    for (const group of groups) {
      expect(await limiterStatus(`task:multi:${group}`)).toMatchObject({ inUse: 0, queued: 0 });
    }
  }, 90_000);

  it("a task waits in the first full limit holding no slot of the others", async () => {
    const p = unique("moe");
    const group = unique("g");
    const blocker = await startLimited("multi", { ms: 1_000, group }, p);
    await waitForTask(blocker, () => startedStep(blocker), 5_000);
    const waiter = await startLimited("multi", { ms: 20, group }, p);
    await waitForTask(waiter, (t) => t.statusMessage?.startsWith("queued:") === true, 5_000);
    // Key order: "named:pair" before "task:multi:<group>". The waiter took a pair slot, found its group full, and
    // gave the pair slot back: the pair holds the blocker's alone (another test's tasks do not run now).
    expect(await limiterStatus("named:pair")).toMatchObject({ inUse: 1 });
    expect(await limiterStatus(`task:multi:${group}`)).toMatchObject({ inUse: 1, queued: 1 });
    await finished([blocker, waiter], 10_000);
    expect(maxConcurrent(await intervalsOf([blocker, waiter]))).toBe(1);
    expect(await limiterStatus("named:pair")).toMatchObject({ inUse: 0, queued: 0 });
  }, 30_000);

  it("killed while running and waiting: none lost, neither limit exceeded, no slot leaked in either", async () => {
    const leased = fixtureEnv.LEASED_RUNNER;
    const stubOf = (task: Started) => leased.get(leased.idFromName(task.taskId));
    const p = unique("mo");
    const groups = [unique("g"), unique("g")];
    const tasks: Started[] = [];
    for (let i = 0; i < 4; i++)
      tasks.push(await startLimited("lease_multi", { ms: 800, group: groups[i % 2] }, p, leased));
    await waitForTask(tasks[0]!, () => startedStep(tasks[0]!), 5_000);
    const killedAt = Date.now();
    // The first runs; the third waits (its group is full).
    for (const task of [tasks[0]!, tasks[2]!]) {
      await runInDurableObject(stubOf(task), (_, state) => state.abort("test: killed")).catch(() => undefined);
    }
    const revived = tasks.map((task) => ({ ...task, stub: stubOf(task) as unknown as Started["stub"] }));
    const done = await Promise.all(revived.map((task) => waitForTask(task, isFinal, 40_000)));
    expect(done.map((t) => t.status)).toEqual(Array(4).fill("completed"));
    const steps = await intervalsOf(revived, killedAt);
    expect(maxConcurrent(steps)).toBeLessThanOrEqual(2);
    for (const group of byGroup(steps, revived, groups)) expect(maxConcurrent(group)).toBe(1);
    expect(await limiterStatus("named:lease-pair")).toMatchObject({ inUse: 0, queued: 0 });
    for (const group of groups) {
      expect(await limiterStatus(`task:lease_multi:${group}`)).toMatchObject({ inUse: 0, queued: 0 });
    }
  }, 90_000);
});

const definition = (limits: TaskDefinition["limits"]): TaskDefinition => ({
  name: "t",
  parseInput: (args) => ({ ok: true, value: args }),
  handler: async () => "ok",
  ttlMs: null,
  pollIntervalMs: 100,
  limits,
});
const record = { taskId: "x", tool: "t", principal: "pam", input: '{"group":"g1"}' } as TaskRecord;
const settings = (everyTask: boolean) => ({
  binding: "TASK_LIMITER",
  runnerBinding: "LIMITED_RUNNER",
  named: { api: 3 },
  perPrincipal: 4,
  perPrincipalEveryTask: everyTask,
});

describe("which slots a run takes", () => {
  const own = definition({
    concurrency: [{ limit: 2, key: (input) => (input as { group: string }).group }, { named: "api" }],
  });

  it("every declared limit, in key order; the principal's too with appliesTo every-task", () => {
    expect(slotPlansOf(own, record, settings(false)).map((p) => [p.key, p.limit])).toEqual([
      ["named:api", 3],
      ["task:t:g1", 2],
    ]);
    expect(slotPlansOf(own, record, settings(true)).map((p) => [p.key, p.limit])).toEqual([
      ["named:api", 3],
      ["principal:pam", 4],
      ["task:t:g1", 2],
    ]);
    // A task with none of its own is under its principal's either way.
    expect(slotPlansOf(definition(undefined), record, settings(false)).map((p) => p.key)).toEqual(["principal:pam"]);
  });

  it("two declarations of one key are one slot, under the lower limit", () => {
    const twice = definition({ concurrency: [{ limit: 5 }, { limit: 2 }] });
    expect(slotPlansOf(twice, record, settings(false)).map((p) => [p.key, p.limit])).toEqual([["task:t", 2]]);
  });
});

const plain = () => new McpServer({ name: "x", version: "1" });

const register = (concurrency: unknown) => () =>
  new McpServer({ name: "x", version: "1" }).registerTask(
    "t",
    { inputSchema: z.object({}), concurrency: concurrency as never },
    async () => "ok",
  );

describe("several limits: bad declarations are a TypeError at registration", () => {
  it.each([
    [[], /concurrency lists 1 to 4 limits, got 0/],
    [[{ limit: 1 }, { limit: 1 }, { limit: 1 }, { limit: 1 }, { limit: 1 }], /concurrency lists 1 to 4 limits, got 5/],
    [[{ limit: 1 }, { limit: 0 }], /concurrency\[1\].limit must be a positive integer/],
    [[{ limit: 1 }, { limit: 2, key: "tenant" }], /concurrency\[1\].key must be a function/],
    [[{ limit: 1 }, null], /concurrency\[1\] must be \{ limit, key\? \}/],
  ])("%j", (concurrency, message) => {
    expect(register(concurrency)).toThrow(TypeError);
    expect(register(concurrency)).toThrow(message);
  });

  it("and in durableMcp's perPrincipal.appliesTo", () => {
    expect(() => durableMcp(plain, { limits: { perPrincipal: { concurrent: 2, appliesTo: "all" as never } } })).toThrow(
      /appliesTo must be "unlimited-tasks" or "every-task"/,
    );
  });
});
