// The 2025-11-25 tasks wire (SEP-1686) beside SEP-2663, over the fixture Worker's real TaskRunners and TaskIndex.
import { describe, expect, it, vi } from "vitest";
import { env, SELF } from "cloudflare:test";
import { readRpcMessage, rpc, sseFrames } from "../jsonrpc.js";
import { issueSession, readSession } from "../../src/routing/wire-2025/session.js";
import { Signer } from "../../src/routing/wire-2025/signing.js";
import { taskIndexOf } from "../../src/runner/task-index.js";
import type { FixtureEnv } from "../fixtures/worker.js";

const VERSION = "2025-11-25";
let nextId = 1;

interface LegacyOptions {
  principal?: string;
  session?: string | null;
  /** MCP-Protocol-Version header (default 2025-11-25; null: none). */
  version?: string | null;
  id?: string | number;
}

function legacyRequest(body: unknown, options: LegacyOptions = {}): Request {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${options.principal ?? "alice"}`,
  };
  const version = options.version === undefined ? VERSION : options.version;
  if (version) headers["mcp-protocol-version"] = version;
  if (options.session) headers["mcp-session-id"] = options.session;
  return new Request("http://fixture.test/mcp", { method: "POST", headers, body: JSON.stringify(body) });
}

async function call(method: string, params: Record<string, unknown>, options: LegacyOptions = {}) {
  const id = options.id ?? nextId++;
  const response = await SELF.fetch(legacyRequest({ jsonrpc: "2.0", id, method, params }, options));
  return { status: response.status, headers: response.headers, body: await readRpcMessage(response) };
}

async function initialize(principal = "alice", capabilities: Record<string, unknown> = { elicitation: {} }) {
  const reply = await call(
    "initialize",
    { protocolVersion: VERSION, capabilities, clientInfo: { name: "legacy-test", version: "1.0.0" } },
    { principal, version: null },
  );
  return { session: reply.headers.get("mcp-session-id"), result: reply.body.result };
}

async function startTask(name: string, args: Record<string, unknown>, options: LegacyOptions = {}, ttl?: number) {
  const reply = await call("tools/call", { name, arguments: args, task: ttl === undefined ? {} : { ttl } }, options);
  if (!reply.body.result?.task) throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return reply.body.result.task as Record<string, any>;
}

/** The next SSE frame that matches (reading on from where the last call stopped). */
async function nextFrame(frames: AsyncGenerator<Record<string, any>>, match: (frame: Record<string, any>) => boolean) {
  for (;;) {
    const { done, value } = await frames.next();
    if (done) throw new Error("the stream ended first");
    if (match(value)) return value;
  }
}

async function until(taskId: string, done: (task: Record<string, any>) => boolean, options: LegacyOptions = {}) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = (await call("tasks/get", { taskId }, options)).body.result;
    if (task && done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never got there`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("2025-11-25 initialize and listing", () => {
  it("issues a signed session and advertises tasks; tools/list shows each task tool's taskSupport", async () => {
    const { session, result } = await initialize();
    expect(session).toMatch(/^dmcp-s1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(result.protocolVersion).toBe(VERSION);
    expect(result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await call("tools/list", {}, { session })).body.result.tools as Array<Record<string, any>>;
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.send_report.execution).toEqual({ taskSupport: "required" });
    expect(byName.slow.execution).toEqual({ taskSupport: "optional" });
    expect(byName.echo.execution).toBeUndefined();
  });

  it("shows none of it on 2026-07-28", async () => {
    const discover = await rpc("server/discover", {});
    expect(discover.body.result!.capabilities).not.toHaveProperty("tasks");
    const tools = (await rpc("tools/list", {})).body.result!.tools as Array<Record<string, unknown>>;
    for (const tool of tools) expect(tool).not.toHaveProperty("execution");
    const result = await rpc("tasks/result", { taskId: "x".repeat(32) });
    expect(result.body.error?.code).toBe(-32601);
  });
});

describe("2025-11-25 task-augmented tools/call", () => {
  it("answers a nested CreateTaskResult in ms; tasks/get resolves at once; tasks/result holds until the result", async () => {
    const { session } = await initialize();
    const task = await startTask("send_report", { to: "ada@example.com", pages: 2 }, { session }, 60_000);
    expect(task).toMatchObject({ status: "working", ttl: 60_000, pollInterval: 50 });
    expect(task.taskId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    for (const key of ["ttlMs", "pollIntervalMs", "resultType"]) expect(task).not.toHaveProperty(key);
    const got = await call("tasks/get", { taskId: task.taskId }, { session });
    expect(got.body.result).toMatchObject({ taskId: task.taskId, ttl: 60_000 });

    const response = await SELF.fetch(
      legacyRequest({ jsonrpc: "2.0", id: 77, method: "tasks/result", params: { taskId: task.taskId } }, { session }),
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const frames = [];
    for await (const frame of sseFrames(response)) frames.push(frame);
    const final = frames.at(-1)!;
    expect(final).toMatchObject({
      id: 77,
      result: {
        content: [{ type: "text", text: "sent to ada@example.com (true)" }],
        _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
      },
    });
    expect(final.result).not.toHaveProperty("resultType");
    const statuses = frames.filter((f) => f.method === "notifications/tasks/status").map((f) => f.params.status);
    expect(statuses.at(-1)).toBe("completed");
  });

  it("caps the ttl asked for at the tool's and refuses a malformed one with -32602", async () => {
    const task = await startTask("send_report", { to: "ada@example.com", pages: 1 }, {}, 10 * 3_600_000);
    expect(task.ttl).toBe(3_600_000);
    const bad = await call("tools/call", { name: "send_report", arguments: {}, task: { ttl: "soon" } });
    expect(bad.body.error).toMatchObject({ code: -32602 });
  });

  it("answers -32601 for a required task tool called without params.task", async () => {
    const reply = await call("tools/call", { name: "send_report", arguments: { to: "ada@example.com", pages: 1 } });
    expect(reply.body.error).toMatchObject({ code: -32601 });
  });

  it("gives the ordinary result for params.task on a tool that is not a task", async () => {
    const reply = await call("tools/call", { name: "echo", arguments: { text: "hi" }, task: { ttl: 1000 } });
    expect(reply.body.result).toMatchObject({ content: [{ type: "text", text: "hi" }] });
    expect(reply.body.result).not.toHaveProperty("task");
  });

  it("answers arguments that fail the schema with a tool error and creates no task", async () => {
    const reply = await call("tools/call", { name: "send_report", arguments: { to: "x" }, task: {} });
    expect(reply.body.result).toMatchObject({ isError: true });
    expect(reply.body.result.structuredContent.error.code).toBe("invalid_arguments");
  });
});

describe("2025-11-25 questions on tasks/result", () => {
  it("asks on the stream under a signed id; the response POST is the answer, once, for its principal only", async () => {
    const { session } = await initialize();
    const task = await startTask("confirm", {}, { session });
    const response = await SELF.fetch(
      legacyRequest({ jsonrpc: "2.0", id: "r1", method: "tasks/result", params: { taskId: task.taskId } }, { session }),
    );
    const frames = sseFrames(response);
    const question = await nextFrame(frames, (frame) => frame.method === "elicitation/create");
    expect(question.id).toMatch(/^dmcp-q1\./);
    expect(question.params).toMatchObject({
      message: "Proceed?",
      _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
    });
    const answer = { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { ok: true } } };

    // Another principal, a tampered id and a question never asked are refused, and record nothing.
    const foreign = await SELF.fetch(legacyRequest(answer, { principal: "bob" }));
    expect(foreign.status).toBe(400);
    expect((await foreign.json()) as object).toMatchObject({ error: { code: -32602 } });
    const tampered = await SELF.fetch(legacyRequest({ ...answer, id: `${question.id.slice(0, -2)}AA` }));
    expect(tampered.status).toBe(400);
    // The refusal's bytes, member order included, as the wire has always sent them.
    expect(await tampered.text()).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params: no such question was asked"}}',
    );
    expect((await until(task.taskId, () => true)).status).toBe("input_required");

    const accepted = await SELF.fetch(legacyRequest(answer, { session }));
    expect(accepted.status).toBe(202);
    const again = await SELF.fetch(legacyRequest(answer, { session }));
    expect(again.status).toBe(400);

    const final = await nextFrame(frames, (frame) => frame.id === "r1");
    expect(final.result.content).toEqual([{ type: "text", text: "accept" }]);
  });

  it("an error response to an elicitation is its cancel: the task goes on with action cancel", async () => {
    const { session } = await initialize();
    const task = await startTask("confirm", {}, { session });
    const response = await SELF.fetch(
      legacyRequest({ jsonrpc: "2.0", id: "r2", method: "tasks/result", params: { taskId: task.taskId } }, { session }),
    );
    const frames = sseFrames(response);
    const question = await nextFrame(frames, (frame) => frame.method === "elicitation/create");
    const declined = await SELF.fetch(
      legacyRequest(
        { jsonrpc: "2.0", id: question.id, error: { code: -32603, message: "dialog closed" } },
        { session },
      ),
    );
    expect(declined.status).toBe(202);
    const final = await nextFrame(frames, (frame) => frame.id === "r2");
    expect(final.result.content).toEqual([{ type: "text", text: "cancel" }]);
  });

  it("refuses an answer that does not fit the question, and records nothing", async () => {
    const { session } = await initialize();
    const task = await startTask("confirm", {}, { session });
    const response = await SELF.fetch(
      legacyRequest({ jsonrpc: "2.0", id: 5, method: "tasks/result", params: { taskId: task.taskId } }),
    );
    const frames = sseFrames(response);
    const question = await nextFrame(frames, (frame) => frame.method === "elicitation/create");
    const wrong = await SELF.fetch(
      legacyRequest({ jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { ok: "yes" } } }),
    );
    expect(wrong.status).toBe(400);
    expect((await until(task.taskId, () => true)).status).toBe("input_required");
    await frames.return(undefined);
  });
});

describe("2025-11-25 questions only where they can be answered", () => {
  it("a task created without a session (declaring nothing) never asks: input_unavailable, never input_required", async () => {
    const task = await startTask("confirm", {});
    const seen: string[] = [];
    const final = await until(task.taskId, (t) => {
      seen.push(t.status);
      return t.status !== "working";
    });
    expect(seen).not.toContain("input_required");
    expect(final.status).toBe("completed");
    const result = await readRpcMessage(
      await SELF.fetch(
        legacyRequest({ jsonrpc: "2.0", id: 7, method: "tasks/result", params: { taskId: task.taskId } }),
      ),
    );
    expect(result.result.isError).toBe(true);
    expect(JSON.stringify(result.result)).toContain("input_unavailable");
  });

  it("a session that declared no elicitation gives its tasks no question either", async () => {
    const { session } = await initialize("alice", { sampling: {} });
    const task = await startTask("confirm", {}, { session });
    const final = await until(task.taskId, (t) => t.status !== "working");
    expect(final.status).toBe("completed");
  });
});

describe("2025-11-25 tasks/get, tasks/result, tasks/cancel and tasks/list", () => {
  it("answers unknown, foreign and purged tasks with the same -32602", async () => {
    const task = await startTask("send_report", { to: "ada@example.com", pages: 1 }, {}, 50);
    await until(task.taskId, (t) => t.status === "completed" || t.status === "failed");
    const answers = [];
    for (const [taskId, principal] of [
      ["A".repeat(32), "alice"],
      [task.taskId, "bob"],
    ]) {
      answers.push((await call("tasks/get", { taskId }, { principal, id: 1 })).body);
      answers.push((await call("tasks/result", { taskId }, { principal, id: 1 })).body);
    }
    // Purged: its TTL (50 ms) and the grace (200 ms) are past.
    const deadline = Date.now() + 10_000;
    while ((await call("tasks/get", { taskId: task.taskId })).body.result && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    answers.push((await call("tasks/get", { taskId: task.taskId }, { id: 1 })).body);
    answers.push((await call("tasks/result", { taskId: task.taskId }, { id: 1 })).body);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ error: { code: -32602 } });
    // The purge took it out of alice's index.
    const indexed = await taskIndexOf((env as unknown as FixtureEnv).TASK_INDEX, "alice").page(null, 1000);
    expect(indexed.map((entry) => entry.taskId)).not.toContain(task.taskId);
  });

  it("cancels a live task (the cancelled task) and refuses a final one with -32602", async () => {
    const task = await startTask("slow", { ms: 60_000 }, { principal: "carol" });
    const cancelled = await call("tasks/cancel", { taskId: task.taskId }, { principal: "carol" });
    expect(cancelled.body.result).toMatchObject({ taskId: task.taskId, status: "cancelled" });
    const again = await call("tasks/cancel", { taskId: task.taskId }, { principal: "carol" });
    expect(again.body.error).toMatchObject({ code: -32602 });
    const foreign = await call("tasks/cancel", { taskId: task.taskId }, { principal: "bob" });
    expect(foreign.body.error).toMatchObject({ code: -32602 });
  });

  it("lists every task of the caller's principal, whichever wire created it, a page at a time", async () => {
    const principal = "lister";
    const legacy = await startTask("slow", { ms: 60_000 }, { principal });
    const modern = await rpc("tools/call", { name: "slow", arguments: { ms: 60_000 } }, { principal });
    await startTask("slow", { ms: 60_000 }, { principal: "someone-else" });
    const listed = await call("tasks/list", {}, { principal });
    const ids = listed.body.result.tasks.map((task: { taskId: string }) => task.taskId);
    expect(ids.toSorted()).toEqual([legacy.taskId, modern.body.result!.taskId].toSorted());
    expect(listed.body.result.tasks[0]).toHaveProperty("ttl");
    expect(listed.body.result).not.toHaveProperty("nextCursor");

    const many = "pager";
    for (let i = 0; i < 51; i++) await startTask("slow", { ms: 60_000 }, { principal: many });
    const first = await call("tasks/list", {}, { principal: many });
    expect(first.body.result.tasks).toHaveLength(50);
    const second = await call("tasks/list", { cursor: first.body.result.nextCursor }, { principal: many });
    expect(second.body.result.tasks).toHaveLength(1);
    expect(second.body.result).not.toHaveProperty("nextCursor");
    const all = new Set([...first.body.result.tasks, ...second.body.result.tasks].map((t) => t.taskId));
    expect(all.size).toBe(51);

    const bad = await call("tasks/list", { cursor: "garbage" }, { principal });
    expect(bad.body.error).toMatchObject({ code: -32602 });
  });
});

describe("2025-11-25 sessions", () => {
  it("serves a valid session without the version header, and treats forged and foreign ones as no session", async () => {
    const { session } = await initialize("alice");
    const args = { name: "send_report", arguments: { to: "ada@example.com", pages: 1 }, task: {} };
    const valid = await call("tools/call", args, { session, version: null });
    expect(valid.body.result).toHaveProperty("task");
    const forged = `${session!.slice(0, session!.lastIndexOf(".") + 1)}${"A".repeat(43)}`;
    for (const options of [
      { session: forged, version: null },
      { session, version: null, principal: "bob" },
    ]) {
      const reply = await call("tools/call", args, options);
      expect(reply.body.result?.task).toBeUndefined();
    }
  });

  it("expires a session after 24 hours", async () => {
    const signer = new Signer("s".repeat(32));
    const id = await issueSession(signer, "alice", { version: VERSION, capabilities: { elicitation: {} } });
    const request = () => new Request("http://x/", { headers: { "mcp-session-id": id } });
    expect(await readSession(signer, "alice", request())).toEqual({
      version: VERSION,
      capabilities: { elicitation: {} },
      // Its own random id (what a per-session list is keyed by) and its expiry.
      sessionId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      expiresAt: expect.any(Number),
    });
    expect(await readSession(new Signer("t".repeat(32)), "alice", request())).toBeNull();
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 24 * 60 * 60_000 + 1);
      expect(await readSession(signer, "alice", request())).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });
});
