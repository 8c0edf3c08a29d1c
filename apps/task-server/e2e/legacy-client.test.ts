// A 2025-era MCP client (@modelcontextprotocol/sdk 1.x, `initialize` handshake over Streamable HTTP) against the
// demo. It knows nothing of tasks: task tools answer it with ordinary tool results, and it drives the task's whole
// lifecycle (progress, a question, cancel, completion, a handler failure) through the facade tools
// durable_task_get / durable_task_respond / durable_task_cancel, by following the text of those results.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sleep, TASKS } from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { randomTaskId, renderedPages, UNKNOWN_BUCKET_ERROR } from "./mcp-http.js";
import { followText, textOf, type TextResult, type ToolCall, type User } from "./text-model.js";

const { url } = inject("wrangler");
const FACADE = ["durable_task_get", "durable_task_respond", "durable_task_cancel"];
const FILE_TOOLS = [
  "file_upload_url",
  "file_download_url",
  "file_upload_open",
  "file_upload_write",
  "file_upload_commit",
  "file_download_read",
  "file_status",
];
/** Where a finished task's own result names the task, in `_meta`. */
const TASK_ID_META = "durable-mcp-server/taskId";
const clients: Client[] = [];
let client: Client;

/** A new connection: a new Client and transport, through the whole initialize handshake. */
async function connect(): Promise<Client> {
  const fresh = new Client({ name: "demo-e2e-2025", version: "1.0.0" });
  await fresh.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(fresh);
  return fresh;
}

async function call(name: string, args: Record<string, unknown>, via: Client = client): Promise<TextResult> {
  return (await via.callTool({ name, arguments: args })) as TextResult;
}

/** The live handle's structuredContent, or undefined for a final result. */
function handle(result: TextResult) {
  return result.structuredContent as
    | { taskId: string; tool: string; status?: string; statusMessage?: string; next?: ToolCall }
    | undefined;
}

/** Polls durable_task_get until the task is no longer live (the result carries no handle status). */
async function getUntilFinal(taskId: string, via: Client = client): Promise<TextResult> {
  for (;;) {
    const result = await call("durable_task_get", { taskId }, via);
    if (typeof handle(result)?.status !== "string") return result;
    await sleep(250);
  }
}

function errorOf(result: TextResult) {
  return (result.structuredContent as { error?: Record<string, unknown> } | undefined)?.error;
}

const CONFIRM_SCHEMA = {
  type: "object",
  properties: { send: { type: "boolean", title: "Send it" } },
  required: ["send"],
};

/** A user who says yes to every yes/no field of the question (and leaves any other field unanswered). */
const agreeingUser: User = (question) => ({
  action: "accept",
  values: Object.fromEntries(
    Object.entries(question.schema.properties ?? {}).flatMap(([name, field]) =>
      field.type === "boolean" ? [[name, true]] : [],
    ),
  ),
});

beforeAll(async () => {
  client = await connect();
});

afterAll(async () => {
  await Promise.all(clients.map((each) => each.close()));
});

describe("2025 client (@modelcontextprotocol/sdk 1.x, initialize flow)", () => {
  it("negotiates a 2025 protocol version with the demo server", () => {
    expect(client.getServerVersion()).toMatchObject({ name: "task-server", version: "1.0.0" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect((client.transport as StreamableHTTPClientTransport).protocolVersion).toMatch(/^2025-/);
    // The demo binds TASK_INDEX, so its 2025-11-25 tasks wire offers tasks/list too (docs/clients.md).
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  it("lists the caller's tasks on the 2025-11-25 wire, whatever wire created them", async () => {
    const started = await call("send_report", { to: "dave@example.com", pages: 1, secondsPerPage: 0 });
    const taskId = handle(started)?.taskId as string;
    expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks.find((task) => task.taskId === taskId)).toMatchObject({ taskId, status: "input_required" });
    await call("durable_task_cancel", { taskId });
  });

  it("lists the task tools as task-optional, and the facade tools with their annotations", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].toSorted()).toEqual(
      [
        "ping",
        "send_report",
        "await_approval",
        "export_contacts",
        "dataset_report",
        "fan_out",
        ...FACADE,
        ...FILE_TOOLS,
      ].toSorted(),
    );
    expect(byName.get("dataset_report")?._meta?.[TASKS]).toEqual({ taskSupport: "optional" });
    expect(byName.get("send_report")?.inputSchema).toMatchObject({ type: "object", required: ["to"] });
    expect(byName.get("send_report")?._meta?.[TASKS]).toEqual({ taskSupport: "optional" });
    expect(byName.get("export_contacts")?._meta?.[TASKS]).toEqual({ taskSupport: "optional" });
    expect(byName.get("ping")?._meta?.[TASKS]).toBeUndefined();

    expect(byName.get("durable_task_get")?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get("durable_task_respond")?.annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get("durable_task_cancel")?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get("durable_task_get")?.inputSchema).toMatchObject({ type: "object", required: ["taskId"] });
    expect(byName.get("durable_task_cancel")?.inputSchema).toMatchObject({ type: "object", required: ["taskId"] });
    expect(byName.get("durable_task_respond")?.inputSchema).toMatchObject({
      type: "object",
      required: ["taskId", "answers"],
    });
    for (const name of FACADE) expect(byName.get(name)?._meta?.[TASKS]).toBeUndefined();
  });

  it("calls ping", async () => {
    const result = await call("ping", {});
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: "text", text: "pong" }]);
  });

  it("send_report waits for the task and returns its handle at the question, never a task", async () => {
    const result = await call("send_report", { to: "carol@example.com", pages: 3, secondsPerPage: 0.2 });
    expect(result.isError ?? false).toBe(false);
    expect(result).not.toHaveProperty("resultType");
    expect(result).not.toHaveProperty("taskId");
    const taskId = handle(result)?.taskId as string;
    expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const example = { taskId, answers: { "confirm send": { action: "accept", content: { send: "<boolean>" } } } };
    expect(result.structuredContent).toEqual({
      taskId,
      tool: "send_report",
      status: "input_required",
      statusMessage: "rendered 3/3 pages",
      progress: 1,
      questions: [
        {
          key: "confirm send",
          method: "elicitation/create",
          message: "Send the 3-page report to carol@example.com?",
          requestedSchema: CONFIRM_SCHEMA,
        },
      ],
      next: { tool: "durable_task_respond", arguments: example },
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      pollIntervalMs: 1000,
    });
    const text = textOf(result);
    expect(text).toContain(
      `Task ${taskId} (send_report) is waiting for an answer before it can continue: rendered 3/3 pages.`,
    );
    expect(text).toContain(
      `Question "confirm send": Send the 3-page report to carol@example.com? Answer schema: ${JSON.stringify(CONFIRM_SCHEMA)}`,
    );
    expect(text).toContain(`call durable_task_respond with ${JSON.stringify(example)}`);
    expect(text).toContain("Do not call send_report again");
    expect(text).toContain(`To stop it, call durable_task_cancel with {"taskId":"${taskId}"}.`);

    // Declining through the facade ends the task with the handler's own result.
    await call("durable_task_respond", { taskId, answers: { "confirm send": { action: "decline" } } });
    const final = await getUntilFinal(taskId);
    expect(final).toMatchObject({
      content: [{ type: "text", text: "Report not sent (decline)." }],
      _meta: { [TASK_ID_META]: taskId },
    });
    expect(final.isError ?? false).toBe(false);
  });

  it(
    "runs a task longer than the client's request timeout to completion by following only the text",
    { timeout: 180_000 },
    async () => {
      // 3 pages of 25 s each: longer than the 20 s the call waits, and than the SDK's 60 s request timeout.
      const asked: string[] = [];
      const turns = await followText(
        (next) => call(next.tool, next.arguments),
        { tool: "send_report", arguments: { to: "frank@example.com", pages: 3, secondsPerPage: 25 } },
        (question) => {
          asked.push(`${question.key}: ${question.message}`);
          return agreeingUser(question);
        },
      );
      const [first, ...rest] = turns;
      const last = turns.at(-1);
      const taskId = handle(first!.result)?.taskId;
      expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);

      // The start came back while the task was still rendering, and said how to follow it.
      expect(first?.text).toContain(`Task ${taskId} (send_report) is running in the background`);
      expect(first?.text).toContain(`Call durable_task_get with {"taskId":"${taskId}"} in about 1 s`);
      // Every later call went to a facade tool for this task; send_report was never called again.
      expect(rest.length).toBeGreaterThan(2);
      for (const turn of rest) {
        expect(["durable_task_get", "durable_task_respond"]).toContain(turn.tool);
        expect(turn.arguments.taskId).toBe(taskId);
      }
      // The model saw progress while polling, never going backwards.
      const pages = rest.map((turn) => renderedPages(handle(turn.result)?.statusMessage)).filter((n) => n !== null);
      expect(pages.length).toBeGreaterThan(0);
      expect(pages).toEqual(pages.toSorted((a, b) => a - b));
      // It was asked the one question, answered it once with content built from the schema in the text.
      expect(asked).toEqual(["confirm send: Send the 3-page report to frank@example.com?"]);
      const responds = rest.filter((turn) => turn.tool === "durable_task_respond");
      expect(responds.map((turn) => turn.arguments)).toEqual([
        { taskId, answers: { "confirm send": { action: "accept", content: { send: true } } } },
      ]);
      // And it stopped at the task's own result.
      expect(last?.text).toBe("Sent 3 pages to frank@example.com.");
      expect(last?.isError).toBe(false);
      expect(last?.result.structuredContent).toEqual({
        pages: 3,
        messageId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(last?.result._meta).toEqual({ [TASK_ID_META]: taskId });
    },
  );

  it("a step that fails for good reaches the text-following model as a step_failed error", async () => {
    const turns = await followText(
      (next) => call(next.tool, next.arguments),
      { tool: "send_report", arguments: { to: "gone@invalid.example", pages: 1, secondsPerPage: 0 } },
      agreeingUser,
    );
    const taskId = handle(turns[0]!.result)?.taskId;
    expect(turns.map((turn) => turn.tool)).toContain("durable_task_respond");
    const last = turns.at(-1)!;
    expect(last.isError).toBe(true);
    expect(errorOf(last.result)).toEqual({
      code: "step_failed",
      message: expect.stringContaining("mailbox gone@invalid.example does not exist"),
      retryable: false,
      recoveryHint: 'Step "send" cannot succeed with this input; change the arguments before starting the task again.',
      details: { step: "send", attempts: 1, cause: "NonRetryableError" },
      partial: { completedSteps: ["render page 1"] },
    });
    expect(last.text).toMatch(/^Error step_failed: .*mailbox gone@invalid\.example does not exist/);
    expect(last.result._meta).toEqual({ [TASK_ID_META]: taskId });
  });

  it("a handler failure after some steps surfaces as isError with the handler's repairable envelope", async () => {
    // export_contacts hands out its handle at once (fallback "handle") and looks the bucket up after exporting.
    const started = await call("export_contacts", { bucket: "contacts-backup", batches: 2, secondsPerBatch: 1 });
    expect(started.isError ?? false).toBe(false);
    const taskId = handle(started)?.taskId as string;
    expect(handle(started)).toMatchObject({
      taskId: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      tool: "export_contacts",
      status: "working",
      next: { tool: "durable_task_get", arguments: { taskId } },
    });

    const failed = await getUntilFinal(taskId);
    expect(failed.isError).toBe(true);
    expect(errorOf(failed)).toEqual(UNKNOWN_BUCKET_ERROR);
    expect(failed._meta).toEqual({ [TASK_ID_META]: taskId });
    expect(textOf(failed)).toBe(
      'Error unknown_bucket: There is no archive bucket named "contacts-backup". ' +
        "Start export_contacts again with bucket set to one of: contacts-archive, contacts-archive-eu.",
    );
    // The failure is final: polling again gives the same result, and cancelling changes nothing.
    expect(await call("durable_task_get", { taskId })).toEqual(failed);
    expect(errorOf(await call("durable_task_cancel", { taskId }))).toMatchObject({ code: "already_final" });
  });

  it("cancels a running task through durable_task_cancel; a second cancel is already_final", async () => {
    const started = await call("export_contacts", { bucket: "contacts-archive", batches: 20, secondsPerBatch: 30 });
    const taskId = handle(started)?.taskId as string;
    expect(handle(started)?.status).toBe("working");
    expect(textOf(started)).toContain(`To stop it, call durable_task_cancel with {"taskId":"${taskId}"}.`);

    // The cancel did what was asked: an ordinary result, not a tool error.
    const cancelled = await call("durable_task_cancel", { taskId });
    expect(cancelled.isError ?? false).toBe(false);
    expect(handle(cancelled)).toEqual({ taskId, tool: "export_contacts", status: "cancelled" });
    expect(textOf(cancelled)).toBe(
      `Task ${taskId} (export_contacts) is cancelled; it will not continue. ` +
        "Start export_contacts again if the work is still needed.",
    );
    // Polling shows the cancellation from now on: the task has no result, so that view is a task_cancelled error.
    const polled = await call("durable_task_get", { taskId });
    expect(polled.isError).toBe(true);
    expect(errorOf(polled)).toEqual({
      code: "task_cancelled",
      message: `Task ${taskId} (export_contacts) was cancelled before it finished.`,
      retryable: false,
      recoveryHint: "Start export_contacts again if the work is still needed.",
    });

    const again = await call("durable_task_cancel", { taskId });
    expect(again.isError).toBe(true);
    expect(errorOf(again)).toEqual({
      code: "already_final",
      message: `Task ${taskId} already ended cancelled; nothing was changed.`,
      retryable: false,
      recoveryHint: "Call durable_task_get for its outcome.",
    });
  });

  it("a new connection with the same taskId answers the question and polls to completion", async () => {
    const first = await connect();
    const started = await call("send_report", { to: "grace@example.com", pages: 2, secondsPerPage: 0.5 }, first);
    const taskId = handle(started)?.taskId as string;
    expect(handle(started)?.status).toBe("input_required");
    await first.close();

    const second = await connect();
    const seen = await call("durable_task_get", { taskId }, second);
    expect(handle(seen)).toMatchObject({ taskId, tool: "send_report", status: "input_required" });
    const answered = await call(
      "durable_task_respond",
      { taskId, answers: { "confirm send": { action: "accept", content: { send: true } } } },
      second,
    );
    expect(answered.isError ?? false).toBe(false);
    const final = await getUntilFinal(taskId, second);
    expect(final.isError ?? false).toBe(false);
    expect(final).toMatchObject({
      content: [{ type: "text", text: "Sent 2 pages to grace@example.com." }],
      structuredContent: { pages: 2, messageId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
      _meta: { [TASK_ID_META]: taskId },
    });

    // A task that is no longer waiting refuses answers, and says what to do instead.
    const late = await call(
      "durable_task_respond",
      { taskId, answers: { "confirm send": { action: "accept", content: { send: false } } } },
      second,
    );
    expect(late.isError).toBe(true);
    expect(errorOf(late)).toEqual({
      code: "not_waiting_for_input",
      message: `Task ${taskId} is completed and is not waiting for an answer.`,
      retryable: false,
      recoveryHint: "Call durable_task_get to see what the task is doing.",
    });
  });

  it("refuses unknown task ids and answers that do not match the question's schema, changing nothing", async () => {
    for (const taskId of [randomTaskId(), "../../etc/passwd"]) {
      for (const [tool, args] of [
        ["durable_task_get", { taskId }],
        ["durable_task_cancel", { taskId }],
        ["durable_task_respond", { taskId, answers: { "confirm send": { action: "decline" } } }],
      ] as const) {
        const result = await call(tool, args);
        expect(result.isError).toBe(true);
        expect(errorOf(result)).toMatchObject({ code: "unknown_task", retryable: false, param: "taskId" });
        expect(textOf(result)).toMatch(/^Error unknown_task: /);
      }
    }

    const started = await call("send_report", { to: "heidi@example.com", pages: 1, secondsPerPage: 0 });
    const taskId = handle(started)?.taskId as string;
    expect(handle(started)?.status).toBe("input_required");
    const respond = (answers: Record<string, unknown>) => call("durable_task_respond", { taskId, answers });

    const wrongType = await respond({ "confirm send": { action: "accept", content: { send: "yes" } } });
    expect(wrongType.isError).toBe(true);
    expect(errorOf(wrongType)).toMatchObject({
      code: "invalid_param",
      retryable: true,
      param: "answers.confirm send.content.send",
      message: expect.stringContaining("must be a boolean"),
      recoveryHint: expect.stringContaining("Pending questions: confirm send."),
    });
    const missing = await respond({ "confirm send": { action: "accept", content: {} } });
    expect(errorOf(missing)).toMatchObject({
      code: "invalid_param",
      param: "answers.confirm send.content.send",
      message: expect.stringContaining("is required"),
    });
    const unasked = await respond({ confirm: { action: "accept", content: { send: true } } });
    expect(errorOf(unasked)).toMatchObject({ code: "invalid_param", param: "answers.confirm" });
    const noAction = await respond({ "confirm send": { content: { send: true } } });
    expect(errorOf(noAction)).toMatchObject({ code: "invalid_param", param: "answers.confirm send.action" });

    // None of that reached the task: it still waits on the same question.
    const still = await call("durable_task_get", { taskId });
    expect(handle(still)).toMatchObject({ status: "input_required", statusMessage: "rendered 1/1 pages" });
    expect(handle(await call("durable_task_cancel", { taskId }))).toMatchObject({ status: "cancelled" });
  });
});
