import { describe, expect, it } from "vitest";
import { SELF } from "cloudflare:test";
import { callTaskUntil, final, pollTask, rpc, rpcRequest } from "../jsonrpc.js";

describe("tools/call of a task tool", () => {
  it("returns a flat CreateTaskResult that tasks/get resolves at once, then the completed result", async () => {
    const reply = await rpc("tools/call", { name: "send_report", arguments: { to: "ada@example.com", pages: 3 } });
    expect(reply.status).toBe(200);
    const created = reply.body.result!;
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000, pollIntervalMs: 50 });
    expect(created.taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(created.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    for (const key of ["task", "result", "error", "inputRequests", "ttl", "pollInterval"])
      expect(created).not.toHaveProperty(key);

    const immediately = await rpc("tasks/get", { taskId: created.taskId });
    expect(immediately.body.result).toMatchObject({ taskId: created.taskId, resultType: "complete" });

    const task = await pollTask(created.taskId, final);
    expect(task).toMatchObject({
      status: "completed",
      statusMessage: "built 3 pages",
      result: { resultType: "complete", content: [{ type: "text", text: "sent to ada@example.com (true)" }] },
    });
  });

  it("keeps plain registerTool tools working beside tasks", async () => {
    const reply = await rpc("tools/call", { name: "echo", arguments: { text: "hi" } });
    expect(reply.body.result).toMatchObject({ content: [{ type: "text", text: "hi" }] });
    const list = await rpc("tools/list", {});
    const names = list.body.result!.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "send_report", "confirm", "slow", "broken"]));
  });

  it("advertises the extension in server/discover", async () => {
    const reply = await rpc("server/discover", {});
    expect(reply.body.result!.capabilities.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} });
  });

  it("refuses a task-only tool with -32021 (HTTP 400) when the request does not declare the extension", async () => {
    const reply = await rpc(
      "tools/call",
      { name: "send_report", arguments: { to: "ada@example.com", pages: 1 } },
      { declare: false },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({
      code: -32021,
      message: expect.any(String),
      data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
    });
  });

  it("answers an optional task tool inline to a client without the extension", async () => {
    const reply = await rpc("tools/call", { name: "slow", arguments: { ms: 30 } }, { declare: false });
    expect(reply.body.result).toMatchObject({ content: [{ type: "text", text: "slept 30" }] });
    expect(reply.body.result).not.toHaveProperty("taskId");
  });

  it("rejects schema-invalid arguments with a tool error and creates no task", async () => {
    const reply = await rpc("tools/call", { name: "send_report", arguments: { to: "not-an-email", pages: 0 } });
    expect(reply.body.result).toMatchObject({ isError: true });
    expect(reply.body.result!.content[0].text).toMatch(/Input validation error: .*to.*pages/s);
    expect(reply.body.result).not.toHaveProperty("taskId");
    // The repairable envelope, with the first failing argument and every issue.
    expect(reply.body.result!.structuredContent.error).toMatchObject({
      code: "invalid_arguments",
      retryable: false,
      param: "to",
      recoveryHint: 'Fix the argument "to" (every problem is listed in details.issues) and call send_report again.',
      details: {
        tool: "send_report",
        issues: [
          { path: "to", message: expect.any(String), code: "invalid_format" },
          { path: "pages", message: expect.any(String), code: "too_small" },
        ],
      },
    });
    // The same for a client without the extension, and for arguments that are not an object at all.
    const legacy = await rpc("tools/call", { name: "slow", arguments: { ms: "soon" } }, { declare: false });
    expect(legacy.body.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: "invalid_arguments", param: "ms", details: { tool: "slow" } } },
    });
    const plain = await rpc("tools/call", { name: "echo", arguments: {} });
    expect(plain.body.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: "invalid_arguments", param: "text", details: { tool: "echo" } } },
    });
  });

  it("ends failed with the JSON-RPC error for a protocol-level failure", async () => {
    const { task } = await callTaskUntil("broken", {}, final);
    expect(task).toMatchObject({ status: "failed", error: { code: -32603, message: "broken on purpose" } });
    expect(task).not.toHaveProperty("result");
  });
});

describe("tasks/update and tasks/cancel", () => {
  it("resumes an input_required task with tasks/update, ignoring unknown keys", async () => {
    const { created, task } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    expect(task.inputRequests).toEqual({
      ok: {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "Proceed?",
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
        },
      },
    });
    const ack = await rpc("tasks/update", {
      taskId: created.taskId,
      inputResponses: { ok: { action: "accept", content: { ok: true } }, never_asked: { action: "accept" } },
    });
    expect(ack.body.result).toEqual({ resultType: "complete", _meta: expect.any(Object) });
    const done = await pollTask(created.taskId, final);
    expect(done.result.content[0].text).toBe("accept");
  });

  it("refuses an answer that does not fit its question, recording nothing", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const wrong = await rpc("tasks/update", {
      taskId: created.taskId,
      inputResponses: { ok: { action: "accept", content: { ok: "yes" } } },
    });
    expect(wrong.body.error).toEqual({
      code: -32602,
      message: 'input response "ok" does not fit its question: content.ok must be a boolean',
      data: { key: "ok", path: "content.ok" },
    });
    const noAction = await rpc("tasks/update", {
      taskId: created.taskId,
      inputResponses: { ok: { content: { ok: true } } },
    });
    expect(noAction.body.error).toMatchObject({ code: -32602, data: { key: "ok", path: "action" } });
    const task = await rpc("tasks/get", { taskId: created.taskId });
    expect(task.body.result).toMatchObject({ status: "input_required", inputRequests: { ok: expect.any(Object) } });
  });

  it("refuses an answer too large to journal, leaving the task waiting", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const huge = { action: "accept", content: { ok: true, padding: "x".repeat(1_100_000) } };
    const reply = await rpc("tasks/update", { taskId: created.taskId, inputResponses: { ok: huge } });
    expect(reply.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/"ok" is larger than 1048576 bytes/),
    });
    const task = await rpc("tasks/get", { taskId: created.taskId });
    expect(task.body.result).toMatchObject({ status: "input_required", inputRequests: { ok: expect.any(Object) } });
  });

  it("cancels with an empty ack, idempotently", async () => {
    const { created } = await callTaskUntil("slow", { ms: 60_000 }, (t) => t.status === "working");
    const first = await rpc("tasks/cancel", { taskId: created.taskId });
    expect(first.body.result).toMatchObject({ resultType: "complete" });
    expect(Object.keys(first.body.result!).toSorted()).toEqual(["_meta", "resultType"]);
    const again = await rpc("tasks/cancel", { taskId: created.taskId });
    expect(again.body.result).toMatchObject({ resultType: "complete" });
    expect((await pollTask(created.taskId, final)).status).toBe("cancelled");
  });
});

describe("errors and isolation", () => {
  it("answers unknown, malformed and foreign task ids identically with -32602 at HTTP 200", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const replies = await Promise.all([
      rpc("tasks/get", { taskId: created.taskId }, { principal: "mallory" }),
      rpc("tasks/get", { taskId: "A".repeat(32) }),
      rpc("tasks/get", { taskId: "not-a-task" }),
      rpc(
        "tasks/update",
        { taskId: created.taskId, inputResponses: { ok: { action: "decline" } } },
        { principal: "mallory" },
      ),
      rpc("tasks/cancel", { taskId: created.taskId }, { principal: "mallory" }),
    ]);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.body.error).toEqual({ code: -32602, message: "Unknown task" });
    }
    // Mallory's update and cancel changed nothing.
    const task = await rpc("tasks/get", { taskId: created.taskId });
    expect(task.body.result).toMatchObject({ status: "input_required", inputRequests: { ok: expect.any(Object) } });
  });

  it("requires the extension for tasks/* (-32021, HTTP 400) before looking the task up", async () => {
    const reply = await rpc("tasks/get", { taskId: "gate-test" }, { declare: false });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32021);
  });

  it("answers tasks/result and tasks/list with -32601 (HTTP 404)", async () => {
    for (const method of ["tasks/result", "tasks/list"]) {
      const reply = await rpc(method, {});
      expect(reply.status).toBe(404);
      expect(reply.body.error?.code).toBe(-32601);
    }
  });

  it("answers a mismatched Mcp-Name with -32020 (HTTP 400)", async () => {
    const reply = await rpc("tasks/get", { taskId: "A".repeat(32) }, { headers: { "mcp-name": "B".repeat(32) } });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32020);
  });

  it("answers malformed JSON with -32700 and never throws", async () => {
    const reply = await rpc("tools/call", {}, { rawBody: "{not json" });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32700);
  });

  it("refuses a request without credentials through the authenticate hook", async () => {
    const response = await SELF.fetch(rpcRequest("server/discover", {}, { principal: null }));
    expect(response.status).toBe(401);
  });
});

describe("malformed requests", () => {
  it("answers each with the spec's error and creates nothing", async () => {
    const cases: Array<[string, Request, number, number]> = [
      ["unknown tool", rpcRequest("tools/call", { name: "nope", arguments: {} }), 200, -32602],
      ["tasks/get without taskId", rpcRequest("tasks/get", {}), 200, -32602],
      [
        "tasks/get with a numeric taskId",
        rpcRequest("tasks/get", { taskId: 42 }, { headers: { "mcp-name": "42" } }),
        200,
        -32602,
      ],
      [
        "missing protocol version header",
        rpcRequest("server/discover", {}, { headers: { "mcp-protocol-version": null } }),
        400,
        -32020,
      ],
      [
        "method header mismatch",
        rpcRequest(
          "tools/call",
          { name: "echo", arguments: { text: "x" } },
          { headers: { "mcp-method": "tasks/get" } },
        ),
        400,
        -32020,
      ],
    ];
    for (const [label, request, status, code] of cases) {
      const response = await SELF.fetch(request);
      const body = (await response.json()) as { error?: { code: number } };
      expect({ label, status: response.status, code: body.error?.code }).toEqual({ label, status, code });
    }
  });
});

const withKey = (key: string) => ({ _meta: { "durable-mcp-server/idempotencyKey": key } });

describe("idempotency keys", () => {
  const args = { to: "ada@example.com", pages: 2 };

  it("joins the task a repeated call started, by _meta key or Idempotency-Key header", async () => {
    const key = `report-${crypto.randomUUID()}`;
    const first = await rpc("tools/call", { name: "send_report", arguments: args, ...withKey(key) });
    const again = await rpc("tools/call", { name: "send_report", arguments: args, ...withKey(key) });
    const byHeader = await rpc(
      "tools/call",
      { name: "send_report", arguments: args },
      { headers: { "idempotency-key": key } },
    );
    expect(first.body.result!.taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(again.body.result!.taskId).toBe(first.body.result!.taskId);
    expect(byHeader.body.result!.taskId).toBe(first.body.result!.taskId);
    // Another caller's identical key is another task.
    const mallory = await rpc(
      "tools/call",
      { name: "send_report", arguments: args, ...withKey(key) },
      { principal: "mallory" },
    );
    expect(mallory.body.result!.taskId).not.toBe(first.body.result!.taskId);
  });

  it("refuses a key reused with other arguments, and changes nothing", async () => {
    const key = `report-${crypto.randomUUID()}`;
    const first = await rpc("tools/call", { name: "send_report", arguments: args, ...withKey(key) });
    const other = await rpc("tools/call", { name: "send_report", arguments: { ...args, pages: 9 }, ...withKey(key) });
    expect(other.body.error).toMatchObject({ code: -32602, data: { reason: "idempotency_key_reused" } });
    const task = await pollTask(first.body.result!.taskId, final);
    expect(task.statusMessage).toBe("built 2 pages");
  });
});
