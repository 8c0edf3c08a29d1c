import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_KEPT_RESULT_CHARS } from "../../src/limits.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { toDetailedTask } from "../../src/runner/task-view.js";
import { StepJournal } from "../../src/steps/journal.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import { fixtureEnv, isFinal, startTask, waitForTask } from "../helpers.js";
import { rpc, type RpcOptions } from "../jsonrpc.js";

// The TaskRunner keeps its task's row in memory and its last tasks/get answer as text (docs/performance.md,
// "tasks/get, round 3"). Neither may ever answer stale: every answer here is compared with the row and journal
// read straight from SQLite by a fresh TaskStore, as the runner read them before it kept anything.

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

type Stub = DurableObjectStub & TaskRunnerRpc;

const stubOf = (taskId: string, namespace = fixtureEnv.MCP_TASK_RUNNER) =>
  namespace.get(namespace.idFromName(taskId)) as unknown as Stub;

/** The task as SQLite holds it now, viewed as the runner's get views it; null when there is no row. */
function fromSqlite(stub: Stub): Promise<DetailedTask | null> {
  return runInDurableObject(stub, (_, state) => {
    const tables = state.storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'task'")
      .toArray();
    if (tables.length === 0) return null;
    const record = new TaskStore(state.storage.sql).read();
    if (!record) return null;
    const pending = record.status === "input_required" ? new StepJournal(state.storage.sql).pendingInputs() : [];
    return toDetailedTask(record, pending);
  });
}

/** A tasks/get over the wire (the fast path), as the task it answers: resultType and the server's _meta taken off. */
async function wireGet(taskId: string, options: RpcOptions = {}): Promise<DetailedTask | { error: unknown }> {
  const reply = await rpc("tasks/get", { taskId }, options);
  if (reply.body.error) return { error: reply.body.error };
  const { resultType, _meta, ...task } = reply.body.result!;
  expect(resultType).toBe("complete");
  const { [SERVER_INFO]: info, ...meta } = _meta as Record<string, unknown>;
  expect(info).toEqual({ name: "wire-fixture", version: "1.0.0" });
  return (Object.keys(meta).length > 0 ? { ...task, _meta: meta } : task) as DetailedTask;
}

/**
 * The wire's answer equals SQLite's state read just before or just after it (a run may write between the two
 * reads; both are true states, and a kept answer older than the first read would match neither).
 */
async function expectCurrent(stub: Stub, taskId: string): Promise<DetailedTask> {
  const before = await fromSqlite(stub);
  const answer = await wireGet(taskId);
  // Straight from the runner too (the SDK path's RPC reads the same kept row).
  const direct = await stub.get({ taskId, principal: "alice" });
  const after = await fromSqlite(stub);
  expect(before ?? after).not.toBeNull();
  expect([before, after]).toContainEqual(answer);
  expect([before, after]).toContainEqual(direct);
  return answer as DetailedTask;
}

describe("the kept task record and tasks/get answer", () => {
  it("follow every state change of a task, an eviction, and never reach another principal", async () => {
    const created = await rpc("tools/call", { name: "paced", arguments: { pauseMs: 400 } });
    const taskId = created.body.result!.taskId;
    expect(typeof taskId).toBe("string");
    const stub = stubOf(taskId);
    const seen = new Set<string>();
    // working → working with a status message and progress → input_required: a get at every poll.
    for (let task = await expectCurrent(stub, taskId); task.status !== "input_required";) {
      seen.add(`${task.status}:${task.statusMessage ?? ""}`);
      task = await expectCurrent(stub, taskId);
    }
    expect(seen).toContain("working:prepared");
    // A second read of an unchanged task is the kept answer; it must equal SQLite's still.
    const asking = await expectCurrent(stub, taskId);
    expect(asking.inputRequests).toHaveProperty("format");
    expect(await wireGet(taskId, { principal: "mallory" })).toEqual({
      error: { code: -32602, message: "Unknown task" },
    });
    // A fresh instance reads SQLite again.
    await evictDurableObject(stub);
    expect(await expectCurrent(stub, taskId)).toEqual(asking);

    const answered = await rpc("tasks/update", {
      taskId,
      inputResponses: { format: { action: "accept", content: { format: "csv" } } },
    });
    expect(answered.body.error).toBeUndefined();
    let task = await expectCurrent(stub, taskId);
    for (const deadline = Date.now() + 10_000; task.status !== "completed" && Date.now() < deadline;) {
      task = await expectCurrent(stub, taskId);
    }
    expect(task.status).toBe("completed");
    expect(task.result).toMatchObject({ content: [{ type: "text", text: "exported as csv" }] });
    // Cancelling a finished task changes nothing; the answer stays the same, and current.
    await rpc("tasks/cancel", { taskId });
    expect(await expectCurrent(stub, taskId)).toEqual(task);
    expect(await wireGet(taskId, { principal: "mallory" })).toEqual({
      error: { code: -32602, message: "Unknown task" },
    });
  });

  it("follow a cancel and a failure", async () => {
    const slow = await rpc("tools/call", { name: "slow", arguments: { ms: 3_600_000 } });
    const slowId = slow.body.result!.taskId;
    const slowStub = stubOf(slowId);
    expect((await expectCurrent(slowStub, slowId)).status).toBe("working");
    expect((await expectCurrent(slowStub, slowId)).status).toBe("working");
    await rpc("tasks/cancel", { taskId: slowId });
    expect((await expectCurrent(slowStub, slowId)).status).toBe("cancelled");

    const broken = await rpc("tools/call", { name: "broken", arguments: {} });
    const brokenId = broken.body.result!.taskId;
    const brokenStub = stubOf(brokenId);
    let task = await expectCurrent(brokenStub, brokenId);
    for (const deadline = Date.now() + 10_000; task.status !== "failed" && Date.now() < deadline;) {
      task = await expectCurrent(brokenStub, brokenId);
    }
    expect(task.error).toEqual({ code: -32603, message: "broken on purpose" });
  });

  it("follow an expiry and a purge, and a task created again under the purged id", async () => {
    // TTL 300 ms, purge grace 200 ms (the fixture's TaskRunner), a handler that sleeps an hour.
    const started = await startTask("sleeper", { ms: 3_600_000 }, { ttlMs: 300 });
    const get = () => started.stub.get(started.access);
    expect((await get())?.status).toBe("working");
    expect((await get())?.status).toBe("working");
    await new Promise((resolve) => setTimeout(resolve, 350));
    // The expiry and both reads in one call into the object: the purge grace (200 ms) starts at the expiry, and reads
    // made in separate calls could, on a loaded machine, land after it.
    const [expired, text] = await runInDurableObject(started.stub, async (instance) => {
      const runner = instance as unknown as TaskRunnerRpc & { alarm(): Promise<void> };
      await runner.alarm();
      return [await runner.get(started.access), await runner.getText(started.access)] as const;
    });
    expect(expired).toMatchObject({ status: "failed", error: { data: { reason: "expired" } } });
    expect(JSON.parse(text!.body)).toMatchObject({ status: "failed" });
    // Past TTL + grace the alarm purges: unknown from then on, to get and getText alike.
    for (const deadline = Date.now() + 5_000; (await get()) !== null && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await runDurableObjectAlarm(started.stub);
    }
    expect(await get()).toBeNull();
    expect(await started.stub.getText(started.access)).toBeNull();
    // The same id created again is a new task, not the purged one remembered.
    const again = await started.stub.create({
      taskId: started.taskId,
      principal: "alice",
      tool: "sleeper",
      input: JSON.stringify({ probe: started.probeName, ms: 3_600_000 }),
      ttlMs: 60_000,
      pollIntervalMs: 100,
    });
    expect(again).toMatchObject({ status: "working", ttlMs: 60_000 });
    expect(await get()).toMatchObject({ status: "working", ttlMs: 60_000 });
    await started.stub.cancel(started.access);
  });

  for (const [name, chars, kept] of [
    ["a short result is kept", 1_000, true],
    ["a long result is read afresh every time", MAX_KEPT_RESULT_CHARS, false],
  ] as const) {
    it(name, async () => {
      const started = await startTask("long_result", { chars });
      const done = await waitForTask(started, isFinal);
      expect(done.status).toBe("completed");
      for (let i = 0; i < 2; i++) {
        const text = await started.stub.getText(started.access);
        expect({ ...JSON.parse(text!.body), _meta: undefined }).toEqual({ ...done, _meta: undefined });
      }
      // What the instance holds after those reads: the row and the answer, or neither.
      const held = await runInDurableObject(started.stub, (instance) => {
        const runner = instance as unknown as { store: { cached: unknown }; answered: unknown };
        return { row: runner.store.cached !== undefined, answer: runner.answered !== undefined };
      });
      expect(held).toEqual({ row: kept, answer: kept });
    });
  }
});
