// Real clients of the 2025-11-25 tasks wire against the bench server (`pnpm --filter bench-server test`, after the
// smoke test): @modelcontextprotocol/sdk 1.x's experimental tasks client, as VS Code-era hosts use it. It proves
// docs/clients.md end to end over `wrangler dev`: a task-augmented call whose question reaches the client's
// elicitation handler exactly once, getTask/listTasks, cancelTask, and a second client that picks up the first
// one's session and task.
import { strict as assert } from "node:assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  type ElicitRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { withServer } from "./server.ts";

const port = Number(process.env.BENCH_TEST_PORT ?? 8796);
const RELATED_TASK = "io.modelcontextprotocol/related-task";
const began = performance.now();

/** A 1.x client that answers every elicitation with `ok: true` and records what it was asked. */
async function legacyClient(url: URL, sessionId?: string) {
  const asked: ElicitRequest[] = [];
  const client = new Client({ name: "sdk-1x-tasks", version: "1.32.2" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return { action: "accept", content: { ok: true } };
  });
  const transport = new StreamableHTTPClientTransport(url, sessionId ? { sessionId } : {});
  await client.connect(transport);
  return { client, transport, asked };
}

function textOf(result: { content?: unknown }): unknown {
  const content = result.content as Array<{ type: string; text?: string }>;
  return JSON.parse(content[0]?.text ?? "null");
}

await withServer(port, async (server) => {
  const url = new URL(server.url);
  const first = await legacyClient(url);
  assert.match(first.transport.sessionId ?? "", /^dmcp-s1\./, "initialize issues a signed session");
  const tasksCapability = first.client.getServerCapabilities()?.tasks;
  assert.deepEqual(tasksCapability, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const { tools } = await first.client.listTools();
  assert.deepEqual(tools.find((tool) => tool.name === "bench_input")?.execution, { taskSupport: "optional" });

  // callToolStream: taskCreated, the question reaches the elicitation handler once, the stream ends with the result.
  const messages = [];
  for await (const message of first.client.experimental.tasks.callToolStream(
    { name: "bench_input", arguments: {} },
    CallToolResultSchema,
    { task: { ttl: 600_000 } },
  )) {
    messages.push(message);
  }
  const created = messages[0];
  assert.equal(created?.type, "taskCreated", JSON.stringify(messages));
  const taskId = created.type === "taskCreated" ? created.task.taskId : "";
  assert.equal(created.type === "taskCreated" && created.task.ttl, 600_000);
  const last = messages.at(-1)!;
  assert.equal(last.type, "result", JSON.stringify(last));
  assert.deepEqual(textOf(last.type === "result" ? last.result : {}), { action: "accept", content: { ok: true } });
  assert.equal(first.asked.length, 1, "the handler is asked exactly once");
  assert.equal(first.asked[0]!.params.message, "Continue?");
  assert.deepEqual(first.asked[0]!.params._meta?.[RELATED_TASK], { taskId });

  const got = await first.client.experimental.tasks.getTask(taskId);
  assert.equal(got.status, "completed");
  const listed = await first.client.experimental.tasks.listTasks();
  assert.ok(
    listed.tasks.some((task) => task.taskId === taskId),
    "listTasks shows the task",
  );

  // cancelTask: a long sleeper ends cancelled; cancelling it again is -32602.
  const sleeper = await first.client.request(
    {
      method: "tools/call",
      params: { name: "bench_sleep", arguments: { before: 0, sleepMs: 600_000, after: 0 }, task: { ttl: 600_000 } },
    },
    CreateTaskResultSchema,
  );
  const cancelled = await first.client.experimental.tasks.cancelTask(sleeper.task.taskId);
  assert.equal(cancelled.status, "cancelled");
  await assert.rejects(
    first.client.experimental.tasks.cancelTask(sleeper.task.taskId),
    (error) => error instanceof McpError && error.code === -32602,
  );

  // A client that reconnects with the first one's session id picks up a task the first one started and left.
  const left = await first.client.request(
    { method: "tools/call", params: { name: "bench_input", arguments: {}, task: { ttl: 600_000 } } },
    CreateTaskResultSchema,
  );
  const sessionId = first.transport.sessionId!;
  await first.client.close();
  const second = await legacyClient(url, sessionId);
  assert.equal(second.transport.sessionId, sessionId);
  const resumed = await second.client.experimental.tasks.getTaskResult(left.task.taskId, CallToolResultSchema);
  assert.deepEqual(textOf(resumed), { action: "accept", content: { ok: true } });
  assert.equal(second.asked.length, 1);
  const relisted = await second.client.experimental.tasks.listTasks();
  for (const id of [taskId, sleeper.task.taskId, left.task.taskId]) {
    assert.ok(
      relisted.tasks.some((task) => task.taskId === id),
      `listTasks after reconnecting shows ${id}`,
    );
  }
  await second.client.close();
});

console.log(
  `legacy clients: @modelcontextprotocol/sdk 1.32.2 tasks client ok (${Math.round(performance.now() - began)} ms)`,
);
