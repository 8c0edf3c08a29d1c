import { describe, expect, it } from "vitest";
import { rpc } from "../jsonrpc.js";

/** A client that knows nothing of tasks: no extension declared, only tools/call. */
const legacy = { declare: false } as const;
const call = (name: string, args: Record<string, unknown>, principal = "alice") =>
  rpc("tools/call", { name, arguments: args }, { ...legacy, principal }).then((reply) => reply.body.result!);

async function getUntil(taskId: string, done: (result: Record<string, any>) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await call("durable_task_get", { taskId });
    if (done(result)) return result;
    if (Date.now() > deadline) throw new Error(`never got there: ${JSON.stringify(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("fallback for clients without the Tasks extension", () => {
  it("hands out a handle and lets the model drive the task by following the text", async () => {
    const started = await call("paced", {});
    expect(started.isError).toBeUndefined();
    expect(started).not.toHaveProperty("resultType", "task");
    const { taskId } = started.structuredContent;
    expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(started.structuredContent).toMatchObject({
      tool: "paced",
      next: { tool: "durable_task_get", arguments: { taskId } },
    });
    expect(started.content[0].text).toContain(`durable_task_get with {"taskId":"${taskId}"}`);
    expect(started.content[0].text).toContain("Do not call paced again");

    const asking = await getUntil(taskId, (r) => r.structuredContent?.status === "input_required");
    expect(asking.structuredContent.questions).toEqual([
      {
        key: "format",
        method: "elicitation/create",
        message: "Which format?",
        requestedSchema: expect.objectContaining({ required: ["format"] }),
      },
    ]);
    expect(asking.content[0].text).toContain('Question "format": Which format?');
    expect(asking.structuredContent.next).toEqual({
      tool: "durable_task_respond",
      arguments: { taskId, answers: { format: { action: "accept", content: { format: "csv", rows: "<integer>" } } } },
    });

    // An answer that does not match the asked schema is refused with a pointer to the field; nothing changes.
    const wrong = await call("durable_task_respond", {
      taskId,
      answers: { format: { action: "accept", content: { format: "xml" } } },
    });
    expect(wrong).toMatchObject({
      isError: true,
      structuredContent: { error: { code: "invalid_param", retryable: true, param: "answers.format.content.format" } },
    });
    const unknownKey = await call("durable_task_respond", {
      taskId,
      answers: { colour: { action: "accept", content: {} } },
    });
    expect(unknownKey.structuredContent.error).toMatchObject({ code: "invalid_param", param: "answers.colour" });
    expect((await call("durable_task_get", { taskId })).structuredContent.status).toBe("input_required");

    const answered = await call("durable_task_respond", {
      taskId,
      answers: { format: { action: "accept", content: { format: "json", rows: 3 } } },
    });
    expect(answered.isError).toBeUndefined();
    const done = await getUntil(taskId, (r) => !r.structuredContent?.status);
    expect(done.content).toEqual([{ type: "text", text: "exported as json" }]);
    expect(done.isError).toBeUndefined();

    const again = await call("durable_task_respond", { taskId, answers: { format: { action: "decline" } } });
    expect(again.structuredContent.error).toMatchObject({ code: "not_waiting_for_input", retryable: false });
    const cancelDone = await call("durable_task_cancel", { taskId });
    expect(cancelDone.structuredContent.error).toMatchObject({ code: "already_final", retryable: false });
  });

  it("returns the result inline when a waiting task finishes in time, and a handle when it does not", async () => {
    const quick = await call("slow", { ms: 20 });
    expect(quick).toMatchObject({ content: [{ type: "text", text: "slept 20" }] });
    // The fixture server waits at most 2 s.
    const slow = await call("slow", { ms: 60_000 });
    expect(slow.structuredContent).toMatchObject({ tool: "slow", status: "working" });
    const taskId = slow.structuredContent.taskId;
    // A cancel that took effect is a success, not a tool error.
    const cancelled = await call("durable_task_cancel", { taskId });
    expect(cancelled.isError).toBeUndefined();
    expect(cancelled.structuredContent).toEqual({ taskId, tool: "slow", status: "cancelled" });
    expect(cancelled.content[0].text).toMatch(new RegExp(`^Task ${taskId} \\(slow\\) is cancelled`));
    // Other views of the cancelled task are unchanged: it has no result, so polling reports task_cancelled.
    const polled = await call("durable_task_get", { taskId });
    expect(polled).toMatchObject({ isError: true, structuredContent: { error: { code: "task_cancelled" } } });
    const again = await call("durable_task_cancel", { taskId });
    expect(again).toMatchObject({ isError: true, structuredContent: { error: { code: "already_final" } } });
  });

  it("answers unknown, malformed and foreign ids alike with unknown_task", async () => {
    const started = await call("paced", { pauseMs: 60_000 });
    const results = await Promise.all([
      call("durable_task_get", { taskId: started.structuredContent.taskId }, "mallory"),
      call("durable_task_cancel", { taskId: started.structuredContent.taskId }, "mallory"),
      call("durable_task_get", { taskId: "Q".repeat(32) }),
      call("durable_task_respond", { taskId: "../../etc/passwd", answers: {} }),
    ]);
    for (const result of results) {
      expect(result).toMatchObject({
        isError: true,
        structuredContent: { error: { code: "unknown_task", retryable: false, param: "taskId" } },
      });
    }
    expect(
      (await call("durable_task_get", { taskId: started.structuredContent.taskId })).structuredContent.status,
    ).toBe("working");
  });

  it("answers facade arguments that fail the schema with the invalid_arguments envelope", async () => {
    const wrongType = await call("durable_task_get", { taskId: 42 });
    expect(wrongType).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "invalid_arguments",
          retryable: false,
          param: "taskId",
          details: { tool: "durable_task_get", issues: [{ path: "taskId", code: "invalid_type" }] },
        },
      },
    });
    const missing = await call("durable_task_respond", { taskId: "Q".repeat(32) });
    expect(missing.structuredContent.error).toMatchObject({
      code: "invalid_arguments",
      param: "answers",
      recoveryHint:
        'Fix the argument "answers" (every problem is listed in details.issues) and call durable_task_respond again.',
    });
  });

  it("lists the facade tools, with their annotations, only to clients without the extension", async () => {
    const native = (await rpc("tools/list", {})).body.result!.tools as Array<{ name: string }>;
    expect(native.map((tool) => tool.name)).toContain("paced");
    expect(native.map((tool) => tool.name).filter((name) => name.startsWith("durable_task_"))).toEqual([]);
    const tools = (await rpc("tools/list", {}, legacy)).body.result!.tools as Array<{
      name: string;
      annotations?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    }>;
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.durable_task_get?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.durable_task_cancel?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(byName.durable_task_respond).toBeDefined();
    expect(byName.paced?._meta).toEqual({ "io.modelcontextprotocol/tasks": { taskSupport: "optional" } });
  });
});
