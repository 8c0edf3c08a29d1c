// Concurrency limits over child tasks (step.invoke), on the public API (durableMcp's named limits, registerTask's
// concurrency) and real TaskRunner and TaskLimiter objects: children take slots like any task, and a parent waiting
// for its children holds none, so a parent and its child under one limit of 1 cannot deadlock.
import { describe, expect, it } from "vitest";
import { rpc } from "../jsonrpc.js";
import { fixtureEnv, isFinal, waitForTask } from "../helpers.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { intervalsOf, limiterStatus, maxConcurrent, unique, type Started } from "./helpers.js";

const PATH = "/limits/mcp";
const namespace = fixtureEnv.LIMITS_APP_RUNNER;

/** A task of the limits fixture (test/fixtures/limited.ts) created over the wire, as a client would. */
async function start(tool: string, args: Record<string, unknown>, principal: string): Promise<Started> {
  const reply = await rpc("tools/call", { name: tool, arguments: args }, { path: PATH, principal });
  const taskId = reply.body.result?.taskId as string | undefined;
  if (!taskId) throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return taskOf(taskId, principal);
}

function taskOf(taskId: string, principal: string): Started {
  const stub = namespace.get(namespace.idFromName(taskId)) as unknown as Started["stub"];
  return { taskId, principal, access: { taskId, principal }, stub, createdAt: Date.now() } as Started;
}

/** The children a parent started, as tasks of their own (each a real task of the parent's principal). */
async function childrenOf(parent: Started): Promise<Started[]> {
  const children = (await (parent.stub as unknown as TaskRunnerRpc).children(parent.taskId)) ?? [];
  return children.map((child) => taskOf(child.taskId, parent.principal));
}

const valueOf = (task: { result?: unknown }) =>
  JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text) as unknown;

/** Waits for the parent to end; if it does not, says what a held slot would look like instead of timing out bare. */
async function parentEnds(parent: Started, timeoutMs: number) {
  try {
    return await waitForTask(parent, isFinal, timeoutMs);
  } catch (error) {
    const children = await childrenOf(parent);
    const states = await Promise.all(children.map(async (c) => (await c.stub.get(c.access))?.statusMessage));
    throw new Error(
      `the parent did not end within ${timeoutMs} ms: if it held its slot while waiting, its children (under the ` +
        `same limit) could never run. Children's status: ${JSON.stringify(states)}. ${(error as Error).message}`,
      { cause: error },
    );
  }
}

describe("concurrency limits over child tasks", () => {
  it("a parent and its child under one named limit of 1: the parent waits holding no slot, and gets the result", async () => {
    const principal = unique("ivy");
    const parent = await start("solo_parent", { n: 7, ms: 200 }, principal);
    const done = await parentEnds(parent, 30_000);
    expect(done.status).toBe("completed");
    expect(valueOf(done)).toBe(42);
    const [child] = await childrenOf(parent);
    expect((await child!.stub.get(child!.access))?.status).toBe("completed");

    // One at a time, by the journals' step timestamps: the parent's "before", then the child's "work" while the
    // parent waited, then the parent's "after".
    const steps = await intervalsOf([parent, child!]);
    expect(steps.map((s) => s.step)).toEqual(["before", "after", "work"]);
    expect(maxConcurrent(steps)).toBe(1);
    const [before, after, work] = steps;
    expect(work!.start).toBeGreaterThanOrEqual(before!.end);
    expect(after!.start).toBeGreaterThanOrEqual(work!.end);
    expect(await limiterStatus("named:invoke-solo")).toMatchObject({ inUse: 0, queued: 0 });
  });

  it("a parent fanning out to 8 children under a limit of 2: never more than 2 run, all finish, all results back", async () => {
    const principal = unique("jack");
    const parent = await start("fan_parent", { n: 8, ms: 400 }, principal);
    const done = await parentEnds(parent, 60_000);
    expect(done.status).toBe("completed");
    expect(valueOf(done)).toEqual({ values: [0, 6, 12, 18, 24, 30, 36, 42] });
    const children = await childrenOf(parent);
    expect(children).toHaveLength(8);
    const states = await Promise.all(children.map(async (c) => (await c.stub.get(c.access))?.status));
    expect(states).toEqual(Array(8).fill("completed"));

    const steps = await intervalsOf(children);
    expect(steps).toHaveLength(8);
    // At most two at once, and two did run together: the parent, under the same limit, held no slot while it
    // waited (holding one, it would have left its children one slot, one at a time).
    expect(maxConcurrent(steps)).toBe(2);
    expect(await limiterStatus("named:fan-pair")).toMatchObject({ inUse: 0, queued: 0 });
  });
});
