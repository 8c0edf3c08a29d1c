// A 2026-07-28 MCP client (@modelcontextprotocol/client) with the Tasks extension session from
// @modelcontextprotocol/ext-tasks, driving the demo's tasks natively (tasks/get, tasks/update, tasks/cancel) over
// the wire: the same lifecycle legacy-client.test.ts drives through the facade tools.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type ApplicationElicitResult,
  type ApplicationInputRequest,
  type JsonRpcResponse,
  type RawClientDispatch,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type TaskExecutionEvent,
} from "@modelcontextprotocol/ext-tasks/client";
import { PROTOCOL_VERSION, TASKS, type JsonObject } from "@durable-mcp/test-harness";
import { afterEach, describe, expect, inject, it } from "vitest";
import { CLIENT_INFO, demoClient, renderedPages, UNKNOWN_BUCKET_ERROR } from "./mcp-http.js";

const { url } = inject("wrangler");
const mcp = demoClient(url);

/** The session's V2 task traffic goes through here: it frames the envelope, we add JSON-RPC and HTTP headers. */
const rawDispatch: RawClientDispatch = async (request, options = {}) => {
  const { method, params } = request as { method: string; params: JsonObject };
  const { response } = await mcp.rpc(method, params, {
    headers: { ...options.context?.headers },
    signal: options.signal,
  });
  return (
    response.error ? { kind: "error", error: response.error } : { kind: "result", result: response.result ?? {} }
  ) as JsonRpcResponse;
};

interface Elicitation {
  request: ApplicationInputRequest;
  taskId: string | undefined;
}

async function openSession(answer: ApplicationElicitResult) {
  const client = new Client(CLIENT_INFO, {
    capabilities: { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const elicitations: Elicitation[] = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: "demo-e2e",
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: CLIENT_INFO,
      clientCapabilities: { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
    },
    onInputRequest: async (request, context) => {
      elicitations.push({ request, taskId: context.taskId });
      if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind} input request`);
      return answer as never;
    },
  });
  return { client, session, elicitations };
}

let opened: Array<{ client: Client; session: TaskEnabledSession }> = [];
afterEach(async () => {
  for (const { client, session } of opened) {
    await session.close();
    await client.close();
  }
  opened = [];
});

/** A connected session, closed after the test. */
async function open(answer: ApplicationElicitResult) {
  const connection = await openSession(answer);
  opened.push(connection);
  return connection;
}

/** A task tool's result, as the ext-tasks session hands it over. */
interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

async function runReport(answer: ApplicationElicitResult, to: string) {
  const { client, session, elicitations } = await open(answer);
  expect(client.getServerCapabilities()?.extensions?.[TASKS]).toEqual({});

  const execution = await session.callTool("send_report", { to, pages: 3, secondsPerPage: 0.2 });
  expect(execution.kind).toBe("task");
  const taskId = execution.handle?.taskId;
  expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);

  const events: TaskExecutionEvent<unknown>[] = [];
  const { outcome, lastTask } = await execution.settle({ onEvent: (event) => void events.push(event) });
  return { taskId, outcome, lastTask, events, elicitations };
}

describe("2026-07-28 client with the Tasks extension (ext-tasks session)", () => {
  it("runs send_report to completion, answering the confirmation through onInputRequest", async () => {
    const { taskId, outcome, lastTask, events, elicitations } = await runReport(
      { action: "accept", content: { send: true } },
      "alice@example.com",
    );

    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as {
      content: Array<{ type: string; text?: string }>;
      structuredContent?: { pages?: number; messageId?: string };
      isError?: boolean;
    };
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: "text", text: "Sent 3 pages to alice@example.com." }]);
    expect(result.structuredContent).toEqual({ pages: 3, messageId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(lastTask?.taskId).toBe(taskId);
    expect(lastTask?.status).toBe("completed");

    // The one elicitation reached the application handler, tied to this task, with the server's message.
    expect(elicitations).toHaveLength(1);
    expect(elicitations[0]?.taskId).toBe(taskId);
    expect(elicitations[0]?.request.kind).toBe("elicitation");
    expect(elicitations[0]?.request.params).toMatchObject({
      message: "Send the 3-page report to alice@example.com?",
      requestedSchema: { type: "object", required: ["send"] },
    });

    // What polling showed: the task asked for input with the rendering progress as its status message, the
    // progress never went backwards, and the last event is the outcome.
    const views = events.flatMap((event) => (event.type === "task" ? [event.task] : []));
    const inputRequired = views.find((view) => view.status === "input_required");
    expect(inputRequired?.statusMessage).toBe("rendered 3/3 pages");
    expect(inputRequired?.raw._meta).toMatchObject({ "durable-mcp-server/progress": 1 });
    const counts = views.map((view) => renderedPages(view.statusMessage)).filter((n): n is number => n !== null);
    expect(counts).toEqual(counts.toSorted((a, b) => a - b));
    expect(events.at(-1)?.type).toBe("outcome");
  });

  it("declining the confirmation completes the task without sending", async () => {
    const { outcome, elicitations } = await runReport({ action: "decline" }, "bob@example.com");

    expect(elicitations).toHaveLength(1);
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as { content: Array<{ type: string; text?: string }> };
    expect(result.content).toEqual([{ type: "text", text: "Report not sent (decline)." }]);
    expect(result).not.toHaveProperty("structuredContent");
  });
});

describe("the task lifecycle natively: cancel, a handler failure, a new connection", () => {
  it("cancelling through the session's task controller ends the running task cancelled", async () => {
    const { session } = await open({ action: "cancel" });
    const execution = await session.callTool("export_contacts", {
      bucket: "contacts-archive",
      batches: 20,
      secondsPerBatch: 30,
    });
    if (execution.kind !== "task") throw new Error("export_contacts did not run as a task");
    const taskId = execution.handle.taskId;
    const controller = session.task(taskId);
    expect((await controller.snapshot()).status).toBe("working");

    await controller.cancel();
    const { outcome, lastTask } = await execution.settle();
    expect(outcome.status).toBe("cancelled");
    expect(lastTask?.taskId).toBe(taskId);
    expect(lastTask?.status).toBe("cancelled");
    // The server agrees, over a plain tasks/get.
    expect((await controller.snapshot()).status).toBe("cancelled");
    const raw = await mcp.rpc("tasks/get", { taskId, _meta: mcp.envelope() });
    expect(raw.response.result).toMatchObject({ taskId, status: "cancelled" });
  });

  it("a handler failure ends the task completed, with isError and the handler's envelope", async () => {
    const { session } = await open({ action: "cancel" });
    const execution = await session.callTool("export_contacts", {
      bucket: "contacts-backup",
      batches: 2,
      secondsPerBatch: 0.2,
    });
    expect(execution.kind).toBe("task");
    const taskId = execution.handle?.taskId;
    const { outcome } = await execution.settle();

    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: UNKNOWN_BUCKET_ERROR,
    });
    expect(result.content).toEqual([
      {
        type: "text",
        text:
          'Error unknown_bucket: There is no archive bucket named "contacts-backup". ' +
          "Start export_contacts again with bucket set to one of: contacts-archive, contacts-archive-eu.",
      },
    ]);
    expect(taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it("a TaskProtocolError from the handler ends the task failed with that JSON-RPC error, and no result", async () => {
    // send_report to a refused.example recipient: the mail service refuses the job once the send is confirmed.
    const created = await mcp.startTask("send_report", { to: "ops@refused.example", pages: 1, secondsPerPage: 0 });
    const asking = await mcp.pollTask(created.taskId, (task) => task.status !== "working");
    expect(asking.status).toBe("input_required");
    await mcp.updateTask(created.taskId, { "confirm send": { action: "accept", content: { send: true } } });
    const final = await mcp.pollTask(created.taskId, (task) => !["working", "input_required"].includes(task.status));
    expect(final.status).toBe("failed");
    expect(final.error).toEqual({
      code: -32603,
      message: "the mail service refused the job for ops@refused.example",
      data: { reason: "mail_service_refused" },
    });
    expect(final.result).toBeUndefined();
  });

  it("a new connection resumes the same task by its reference, answers its question and settles it", async () => {
    const first = await open({ action: "decline" });
    const execution = await first.session.callTool("send_report", {
      to: "ivan@example.com",
      pages: 3,
      secondsPerPage: 0.5,
    });
    if (execution.kind !== "task") throw new Error("send_report did not run as a task");
    const taskId = execution.handle.taskId;
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((saved) => void (reference = saved));
    expect(reference).toMatchObject({ taskId, generation: "v2" });
    // Let the detached execution wind down first: ext-tasks 0.2.2 closes an execution that has not settled yet by
    // cancelling its task, even after handoff().
    await execution.result();
    // The first connection goes away before the task has asked anything.
    await first.session.close();
    await first.client.close();
    expect(first.elicitations).toEqual([]);

    const second = await open({ action: "accept", content: { send: true } });
    const resumed = await second.session.resumeTask(reference as SerializedTaskReference);
    expect(resumed.kind).toBe("task");
    const { outcome, lastTask } = await resumed.settle();

    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as ToolResult;
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: "text", text: "Sent 3 pages to ivan@example.com." }]);
    expect(result.structuredContent).toEqual({ pages: 3, messageId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(lastTask?.taskId).toBe(taskId);
    // The question went to the second connection's handler, for this task.
    expect(second.elicitations.map((each) => each.taskId)).toEqual([taskId]);
  });
});
