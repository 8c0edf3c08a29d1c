import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import {
  PREPARED_RUNNER_LEAD_MS,
  PREPARED_RUNNER_RATE_WINDOW_MS,
  PREPARED_RUNNER_REFILL_DELAY_MS,
} from "../../src/limits.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { fixtureEnv } from "../helpers.js";
import { callTaskUntil, final, rpc } from "../jsonrpc.js";

type Runner = DurableObjectStub & TaskRunnerRpc;
const runnerFor = (taskId: string) =>
  fixtureEnv.MCP_TASK_RUNNER.get(fixtureEnv.MCP_TASK_RUNNER.idFromName(taskId)) as unknown as Runner;

/** When the runner's schema was applied, and when its task was created. */
const timesOf = (taskId: string) =>
  runInDurableObject(runnerFor(taskId), (_, state) => ({
    schemaAt: state.storage.sql.exec<{ t: number }>("SELECT MIN(applied_at) AS t FROM schema_migrations").one().t,
    createdAt: state.storage.sql.exec<{ t: number }>("SELECT created_at AS t FROM task").one().t,
  }));

const args = { to: "a@example.com", pages: 1 };

const objectCount = async () => (await listDurableObjectIds(fixtureEnv.MCP_TASK_RUNNER)).length;

describe("creates on pre-created TaskRunners, over the wire", () => {
  // First in this file: the router's pool is the isolate's, and counts the creates of its rate window.
  it("prepares no runner at a low create rate: one object per task, and none made while idle", async () => {
    const before = await objectCount();
    for (let i = 0; i < 4; i++) {
      expect((await callTaskUntil("send_report", args, final)).task.status).toBe("completed");
      // Idle between creates: long enough for any refill the create asked for to have run.
      await new Promise((resolve) => setTimeout(resolve, PREPARED_RUNNER_REFILL_DELAY_MS + 250));
    }
    expect((await objectCount()) - before).toBe(4);
  });

  it("gives a create a runner prepared after an earlier reply once the create rate asks for one, one object per task", async () => {
    // Enough creates within the rate window for the pool to hold a runner (PREPARED_RUNNER_LEAD_MS).
    const burst = Math.ceil(PREPARED_RUNNER_RATE_WINDOW_MS / PREPARED_RUNNER_LEAD_MS / 2) + 2;
    for (let i = 0; i < burst; i++) {
      const created = await rpc("tools/call", { name: "send_report", arguments: args });
      expect(created.body.result?.taskId).toEqual(expect.any(String));
    }
    const first = await callTaskUntil("send_report", args, final);
    // The refill starts PREPARED_RUNNER_REFILL_DELAY_MS after the first reply (ctx.waitUntil); give it that and its
    // prepares, then create again. How long the prepares take depends on the machine's load (each is a new object),
    // so a create that still found the pool empty (its object made on the call) is followed by another, a little later.
    let second: Awaited<ReturnType<typeof callTaskUntil>> | undefined;
    let times: Awaited<ReturnType<typeof timesOf>> | undefined;
    for (let attempt = 0; attempt < 10; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, PREPARED_RUNNER_REFILL_DELAY_MS + 250));
      second = await callTaskUntil("send_report", args, final);
      times = await timesOf(second.created.taskId as string);
      // Its runner existed, schema applied, before the call that created the task arrived.
      if (times.createdAt - times.schemaAt >= 50) break;
    }
    expect(second!.task.status).toBe("completed");
    expect(second!.created.taskId).not.toBe(first.created.taskId);
    expect(times!.createdAt - times!.schemaAt).toBeGreaterThanOrEqual(50);
    // Its task is the caller's only: another principal sees it as unknown.
    const foreign = await rpc("tasks/get", { taskId: second!.created.taskId }, { principal: "mallory" });
    expect(foreign.body.error?.code).toBe(-32602);
  });

  it("answers tasks/get of a prepared, unclaimed id exactly as of an unknown id, on both paths", async () => {
    const preparedId = newTaskId();
    await runnerFor(preparedId).prepare();
    const unknownId = newTaskId();
    for (const path of ["/mcp", "/mcp-sdk"]) {
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const prepared = await rpc(method, { taskId: preparedId }, { path, id: 7 });
        const unknown = await rpc(method, { taskId: unknownId }, { path, id: 7 });
        const bytes = (reply: typeof prepared, taskId: string) =>
          JSON.stringify({ status: reply.status, body: reply.body }).replaceAll(taskId, "<id>");
        expect(bytes(prepared, preparedId)).toBe(bytes(unknown, unknownId));
        expect(prepared.body.error?.code).toBe(-32602);
      }
    }
  });
});
