// Real clients of the 2025-11-25 tasks wire against the bench server (`pnpm --filter bench-server test`, after the
// smoke test): @modelcontextprotocol/sdk 1.x's experimental tasks client, as VS Code-era hosts use it. It proves
// docs/clients.md end to end over `wrangler dev`: a task-augmented call whose question reaches the client's
// elicitation handler exactly once, getTask, cancelTask, a tasks/result held past the client's request timeout by
// progress heartbeats, and a second client that picks up the first one's session and task, also after a crash and
// restart of the Worker (the bench configures MCP_SESSION_SECRET). `tasks/list` is not served on /mcp (no
// authenticate: every caller is "anonymous"); /mcp-session-list opts into a list per session, and two sessions see
// only their own tasks. Then the MCP Inspector CLI (2.12, installed by the repo) calls the task-only tool in both
// eras: the 2025-11-25 task wire (legacy) and SEP-2663 (modern).
import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
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

/** Runs the MCP Inspector CLI (its launcher, from the devDependency) and parses its one JSON answer. */
async function inspector(args: string[]): Promise<Record<string, any>> {
  const manifest = createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json");
  const bin = (JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> }).bin["mcp-inspector"]!;
  // Its catalog and client config go to a scratch directory, never the developer's home.
  const home = mkdtempSync(join(tmpdir(), "inspector-"));
  const { stdout } = await promisify(execFile)(process.execPath, [join(dirname(manifest), bin), "--cli", ...args], {
    env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json") },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, any>;
}

/** The ids `tasks/list` shows the client (one page), sorted. */
async function idsOf(client: Client): Promise<string[]> {
  return (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId).toSorted();
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
  // No `list`: without authenticate every caller is one principal, and a list would show anyone every task.
  assert.deepEqual(tasksCapability, { cancel: {}, requests: { tools: { call: {} } } });
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
  await assert.rejects(
    first.client.experimental.tasks.listTasks(),
    (error) => error instanceof McpError && error.code === -32601,
    "tasks/list is not served without authenticate",
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

  // A tasks/result longer than the client's request timeout: the open stream sends progress every 15 s, and a client
  // with resetTimeoutOnProgress keeps waiting (16 s timeout, a 24 s task). Without the heartbeat this times out.
  const long = await first.client.request(
    {
      method: "tools/call",
      params: { name: "bench_sleep", arguments: { before: 0, sleepMs: 24_000, after: 0 }, task: { ttl: 600_000 } },
    },
    CreateTaskResultSchema,
  );
  let progressSeen = 0;
  const outlived = await first.client.request(
    { method: "tasks/result", params: { taskId: long.task.taskId } },
    CallToolResultSchema,
    { timeout: 16_000, resetTimeoutOnProgress: true, onprogress: () => void progressSeen++ },
  );
  assert.equal(outlived.isError ?? false, false, JSON.stringify(outlived));
  assert.ok(progressSeen >= 1, "the held tasks/result sent progress");

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

  // The same session after the Worker crashed (SIGKILL) and started again on the same state: still honoured (its
  // declared elicitation lets a new task ask, and the question reaches this client's handler).
  await second.client.close();
  await server.restart("SIGKILL");
  const restarted = await legacyClient(url, sessionId);
  const afterRestart = await restarted.client.request(
    { method: "tools/call", params: { name: "bench_input", arguments: {}, task: { ttl: 600_000 } } },
    CreateTaskResultSchema,
  );
  const answered = await restarted.client.experimental.tasks.getTaskResult(
    afterRestart.task.taskId,
    CallToolResultSchema,
  );
  assert.deepEqual(textOf(answered), { action: "accept", content: { ok: true } }, "the session survives a restart");
  assert.equal(restarted.asked.length, 1);

  // Per-session lists (/mcp-session-list): each session lists the tasks it created, and only those.
  const sessionListUrl = new URL("/mcp-session-list", url);
  const a = await legacyClient(sessionListUrl);
  const b = await legacyClient(sessionListUrl);
  assert.deepEqual(a.client.getServerCapabilities()?.tasks, {
    list: {},
    cancel: {},
    requests: { tools: { call: {} } },
  });
  const quick = { name: "bench_steps", arguments: { steps: 1, payloadBytes: 0 }, task: { ttl: 600_000 } };
  const ofA: string[] = [];
  for (let i = 0; i < 2; i++) {
    ofA.push((await a.client.request({ method: "tools/call", params: quick }, CreateTaskResultSchema)).task.taskId);
  }
  const ofB = (await b.client.request({ method: "tools/call", params: quick }, CreateTaskResultSchema)).task.taskId;
  assert.deepEqual(await idsOf(a.client), ofA.toSorted(), "session A lists its own tasks");
  assert.deepEqual(await idsOf(b.client), [ofB], "session B does not see A's tasks");
  await assert.rejects(
    b.client.experimental.tasks.listTasks(Buffer.from(JSON.stringify([0, ofA[0]])).toString("base64url")),
    (error) => error instanceof McpError && error.code === -32602,
    "a cursor the server did not issue is -32602",
  );
  await a.client.close();
  const aAgain = await legacyClient(sessionListUrl, a.transport.sessionId);
  assert.deepEqual(await idsOf(aAgain.client), ofA.toSorted(), "reconnecting with A's session lists A's tasks");
  await Promise.all([aAgain.client.close(), b.client.close()]);

  // MCP Inspector CLI, both eras, on the task-only tool (it calls a `required` tool as a task).
  const call = ["--method", "tools/call", "--tool-name", "bench_task_only", "--tool-args-json", '{"steps":2}'];
  const legacy = await inspector([server.url, "--protocol-era", "legacy", ...call, "--format", "json"]);
  assert.deepEqual(textOf(legacy.result), { steps: 2 }, JSON.stringify(legacy));
  const inspectorTask = legacy.result._meta?.[RELATED_TASK]?.taskId as string;
  assert.match(inspectorTask ?? "", /^[A-Za-z0-9_-]{32}$/, "the legacy call went through tasks/result");
  const modern = await inspector([server.url, "--protocol-era", "modern", ...call, "--format", "json"]);
  assert.deepEqual(textOf(modern.result), { steps: 2 }, JSON.stringify(modern));
  assert.equal(modern.result.resultType, "complete");
  await restarted.client.close();
});

console.log(
  `legacy clients: @modelcontextprotocol/sdk 1.32.2 tasks client and MCP Inspector CLI 2.12 (both eras) ok (${Math.round(performance.now() - began)} ms)`,
);
