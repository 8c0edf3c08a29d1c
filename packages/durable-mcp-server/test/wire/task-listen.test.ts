import { runInDurableObject, SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callTaskUntil, rpc, rpcRequest, sseFrames } from "../jsonrpc.js";

describe("subscriptions/listen for task ids", () => {
  it("acknowledges owned ids only, pushes every change, and ends once the task is final", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const foreign = await rpc("tools/call", { name: "confirm", arguments: {} }, { principal: "mallory" });
    const listen = rpcRequest(
      "subscriptions/listen",
      { notifications: { taskIds: [created.taskId, foreign.body.result!.taskId, "Z".repeat(32), "junk"] } },
      { id: "listen-1" },
    );
    const response = await SELF.fetch(listen);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const stream = sseFrames(response);

    const ack = (await stream.next()).value!;
    expect(ack).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { taskIds: [created.taskId] },
        _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" },
      },
    });

    const first = (await stream.next()).value!;
    expect(first).toMatchObject({
      method: "notifications/tasks",
      params: {
        taskId: created.taskId,
        status: "input_required",
        _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" },
      },
    });

    await rpc("tasks/update", {
      taskId: created.taskId,
      inputResponses: { ok: { action: "accept", content: { ok: true } } },
    });
    const statuses: string[] = [];
    let last: Record<string, any> | undefined;
    for await (const frame of stream) {
      last = frame;
      if (frame.method === "notifications/tasks") statuses.push(frame.params.status);
    }
    expect(statuses.at(-1)).toBe("completed");
    expect(statuses).toContain("working");
    expect(last).toEqual({
      jsonrpc: "2.0",
      id: "listen-1",
      result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } },
    });
  });

  it("ends with a JSON-RPC error, not silence, when the task's object goes away mid-listen", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const response = await SELF.fetch(
      rpcRequest("subscriptions/listen", { notifications: { taskIds: [created.taskId] } }, { id: 7 }),
    );
    const stream = sseFrames(response);
    expect((await stream.next()).value!.method).toBe("notifications/subscriptions/acknowledged");
    expect((await stream.next()).value!.params.status).toBe("input_required");
    const namespace = (env as unknown as { MCP_TASK_RUNNER: DurableObjectNamespace }).MCP_TASK_RUNNER;
    // Reset the object the way a deploy or a crash would (eviction waits for the open stream instead).
    await runInDurableObject(namespace.get(namespace.idFromName(created.taskId)), (_, state) =>
      state.abort("simulated reset"),
    ).catch((error: unknown) => expect(String(error)).toMatch(/simulated reset/));
    const rest: Array<Record<string, any>> = [];
    for await (const frame of stream) rest.push(frame);
    expect(rest).toEqual([
      { jsonrpc: "2.0", id: 7, error: { code: -32603, message: "Task stream interrupted; listen again" } },
    ]);
    // The task itself is intact.
    expect((await rpc("tasks/get", { taskId: created.taskId })).body.result).toMatchObject({
      status: "input_required",
    });
  });

  it("requires the extension to be declared", async () => {
    const reply = await rpc(
      "subscriptions/listen",
      { notifications: { taskIds: ["A".repeat(32)] } },
      { declare: false },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32021);
  });
});

describe("tools/list", () => {
  it("lists task tools with their schema and task support", async () => {
    const reply = await rpc("tools/list", {});
    const report = reply.body.result!.tools.find((tool: { name: string }) => tool.name === "send_report");
    expect(report.inputSchema).toMatchObject({
      type: "object",
      properties: { to: { type: "string" }, pages: { type: "integer" } },
    });
    expect(report._meta).toEqual({ "io.modelcontextprotocol/tasks": { taskSupport: "required" } });
  });
});
