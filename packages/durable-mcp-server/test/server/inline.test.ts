// Inline results (issue 12, item 3): a task with `inline` answers a task-capable call with the ordinary
// CallToolResult when it completes within the budget, else with the task. The work runs on its TaskRunner and
// journal either way. Over the fixture Worker's wire.
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { McpServer, type Duration } from "../../src/index.js";
import { MAX_INLINE_MS } from "../../src/limits.js";
import { testTasks } from "../../src/testing/index.js";
import { env } from "cloudflare:workers";
import type { FixtureEnv } from "../fixtures/worker.js";
import { pollTask, rpc } from "../jsonrpc.js";

const TASK_ID_META = "durable-mcp-server/taskId";
const kit = testTasks({
  url: "http://fixture.test/mcp",
  binding: (env as unknown as FixtureEnv).MCP_TASK_RUNNER,
  principal: "alice",
  headers: { authorization: "Bearer alice" },
});

describe("inline results", () => {
  it("answers with the ordinary result when the task completes within its budget, and keeps the task", async () => {
    const reply = await rpc("tools/call", { name: "inline_quick", arguments: {} });
    const result = reply.body.result!;
    expect(result.resultType).toBe("complete");
    expect(result.taskId).toBeUndefined();
    expect(result.content).toEqual([{ type: "text", text: "value 42" }]);
    // The work ran as a task: its record and its journal are there, readable by id until its TTL.
    const taskId = result._meta[TASK_ID_META] as string;
    const task = await rpc("tasks/get", { taskId });
    expect(task.body.result).toMatchObject({ status: "completed", result: { content: result.content } });
    expect(await kit.task(taskId).steps()).toMatchObject([{ name: "compute", kind: "do", state: "done" }]);
  });

  it("answers with the task when the budget runs out first", async () => {
    const reply = await rpc("tools/call", { name: "inline_slow", arguments: {} });
    const created = reply.body.result!;
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number) });
    expect(created.content ?? []).toEqual([]);
    await rpc("tasks/cancel", { taskId: created.taskId });
  });

  it("answers with the task as it stands when it waits for input within the budget", async () => {
    const reply = await rpc("tools/call", { name: "inline_ask", arguments: {} });
    const created = reply.body.result!;
    expect(created).toMatchObject({ resultType: "task", status: "input_required" });
    // The questions are for tasks/get, as with any task.
    expect(created.inputRequests).toBeUndefined();
    const waiting = await rpc("tasks/get", { taskId: created.taskId });
    expect(Object.keys(waiting.body.result!.inputRequests)).toEqual(["ok"]);
    await rpc("tasks/update", { taskId: created.taskId, inputResponses: { ok: { action: "accept", content: {} } } });
    const done = await pollTask(created.taskId, (task) => task.status === "completed");
    expect(done.result.content[0].text).toBe('"accept"');
  });

  it("leaves clients without the extension to the fallback policy", async () => {
    // inline_quick's fallback is the fixture server's "refuse": a call without the extension is refused as before.
    const refused = await rpc("tools/call", { name: "inline_quick", arguments: {} }, { declare: false });
    expect(refused.body.error).toMatchObject({ code: -32021 });
  });

  it("refuses a budget over the limit, or one it cannot read, when the task is registered", () => {
    const server = new McpServer({ name: "t", version: "1" });
    const register = (inline: Duration) =>
      server.registerTask(`t${Math.random()}`, { inputSchema: z.object({}), inline }, async () => 1);
    expect(() => register(MAX_INLINE_MS + 1)).toThrow(RangeError);
    expect(() => register("1 minute")).toThrow(/at most 10000 ms/);
    // @ts-expect-error -- not a duration the type allows; refused at run time too
    expect(() => register("soon")).toThrow(/cannot read duration/);
    expect(() => register(MAX_INLINE_MS)).not.toThrow();
  });
});
