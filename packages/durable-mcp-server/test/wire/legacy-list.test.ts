// The 2025-11-25 `tasks/list`: who may list (never everyone when every caller is one principal), which cursors are
// read back (only the server's own, for the same list), and what a listing does with an index entry whose task does
// not exist (a create on its way: kept; a create that failed: dropped). Over the fixture Worker's real TaskRunners
// and TaskIndex.
import { describe, expect, it } from "vitest";
import { env, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { readRpcMessage } from "../jsonrpc.js";
import { durableMcp } from "../../src/index.js";
import { newTaskId } from "../../src/ids.js";
import { INDEX_PENDING_MS } from "../../src/limits.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { taskIndexOf } from "../../src/runner/task-index.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import type { NewTask } from "../../src/runner/task-store.js";
import { encodeJson } from "../../src/routing/wire-2025/signing.js";
import type { FixtureEnv } from "../fixtures/worker.js";
import { createServer } from "../fixtures/mcp-server.js";

const fixture = env as unknown as FixtureEnv;
const VERSION = "2025-11-25";
let nextId = 1;

interface Call {
  /** Default: the authenticated fixture endpoint. */
  url?: string;
  principal?: string;
  session?: string | null;
}

async function call(method: string, params: Record<string, unknown>, options: Call = {}) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
  };
  if (options.principal) headers.authorization = `Bearer ${options.principal}`;
  if (options.session) headers["mcp-session-id"] = options.session;
  if (method === "initialize") delete headers["mcp-protocol-version"];
  const response = await SELF.fetch(options.url ?? "http://fixture.test/mcp", {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  const body = await readRpcMessage(response);
  return { status: response.status, session: response.headers.get("mcp-session-id"), body };
}

async function initialize(options: Call) {
  const reply = await call(
    "initialize",
    { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "list-test", version: "1.0.0" } },
    options,
  );
  return { session: reply.session!, capabilities: reply.body.result.capabilities as Record<string, any> };
}

async function startTask(options: Call): Promise<string> {
  const reply = await call("tools/call", { name: "slow", arguments: { ms: 60_000 }, task: {} }, options);
  if (!reply.body.result?.task) throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return reply.body.result.task.taskId;
}

async function listed(options: Call, cursor?: string): Promise<string[]> {
  const reply = await call("tasks/list", cursor === undefined ? {} : { cursor }, options);
  if (!reply.body.result) throw new Error(`no list: ${JSON.stringify(reply.body)}`);
  return reply.body.result.tasks.map((task: { taskId: string }) => task.taskId);
}

/** A page's worth of index entries and one more, so that the first page has a nextCursor. */
async function fullIndex(principal: string) {
  const index = taskIndexOf(fixture.TASK_INDEX, principal);
  for (let i = 0; i < 51; i++) await index.add(newTaskId(), Date.now() - i);
}

function spec(principal: string): NewTask {
  return {
    taskId: newTaskId(),
    principal,
    tool: "slow",
    input: JSON.stringify({ ms: 60_000 }),
    ttlMs: 60_000,
    pollIntervalMs: 50,
    origin: "http://fixture.test",
    clientCapabilities: {},
  };
}

const OPEN = "http://localhost/open/mcp";
const SESSION_LIST = "http://localhost/session-list/mcp";

describe("tasks/list without authenticate", () => {
  it("is neither advertised nor served by default: -32601, and nothing is listed", async () => {
    const { session, capabilities } = await initialize({ url: OPEN });
    expect(capabilities.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
    await startTask({ url: OPEN, session });
    const reply = await call("tasks/list", {}, { url: OPEN, session });
    expect(reply.body.error).toMatchObject({ code: -32601 });
    expect(reply.body.result).toBeUndefined();
  });

  it("opted into per-session lists: each session lists its own tasks only", async () => {
    const a = await initialize({ url: SESSION_LIST });
    const b = await initialize({ url: SESSION_LIST });
    expect(a.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const mine = [await startTask({ url: SESSION_LIST, session: a.session })];
    mine.push(await startTask({ url: SESSION_LIST, session: a.session }));
    const theirs = await startTask({ url: SESSION_LIST, session: b.session });
    expect((await listed({ url: SESSION_LIST, session: a.session })).toSorted()).toEqual(mine.toSorted());
    expect(await listed({ url: SESSION_LIST, session: b.session })).toEqual([theirs]);
    // Without a session there is no list to show.
    expect(await listed({ url: SESSION_LIST })).toEqual([]);
    // Every task stays reachable by its id (the id is the handle), from any session.
    const got = await call("tasks/get", { taskId: mine[0] }, { url: SESSION_LIST, session: b.session });
    expect(got.body.result).toMatchObject({ taskId: mine[0] });
  });

  it("refuses a per-principal list without authenticate when the server is built", () => {
    expect(() => durableMcp(createServer, { taskList: "principal" })).toThrow(
      /taskList "principal" needs authenticate/,
    );
  });
});

describe("tasks/list cursors", () => {
  it("reads back its own cursor, for the same list only", async () => {
    await fullIndex("cursor-owner");
    const first = await call("tasks/list", {}, { principal: "cursor-owner" });
    const cursor = first.body.result.nextCursor as string;
    expect(typeof cursor).toBe("string");
    const next = await call("tasks/list", { cursor }, { principal: "cursor-owner" });
    expect(next.body.result).toBeDefined();
    const foreign = await call("tasks/list", { cursor }, { principal: "cursor-thief" });
    expect(foreign.body.error).toMatchObject({ code: -32602 });
  });

  it("answers -32602 to a cursor it did not issue, however well shaped", async () => {
    const taskId = "A".repeat(32);
    const forged = [
      encodeJson([0, taskId]),
      encodeJson([1e308, taskId]),
      `dmcp-c1.${encodeJson([0, taskId])}.${"A".repeat(43)}`,
      "garbage",
    ];
    for (const cursor of forged) {
      const reply = await call("tasks/list", { cursor }, { principal: "forger" });
      expect(reply.body.error, cursor).toMatchObject({ code: -32602 });
    }
    // Nor does a cursor mean anything where there is no list.
    const { session } = await initialize({ url: SESSION_LIST });
    const reply = await call("tasks/list", { cursor: forged[0] }, { url: SESSION_LIST, session });
    expect(reply.body.error).toMatchObject({ code: -32602 });
  });
});

describe("tasks/list and index entries without a task", () => {
  it("keeps the entry of a create still on its way: the task is listed once it exists", async () => {
    const principal = "interleaved";
    // The runner namespace, with each create held until released: the create has written its index entry and not
    // yet reached its TaskRunner, the moment between the two awaits of RunnerClient.create.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atRunner = new Promise<void>((resolve) => (reached = resolve));
    const namespace = fixture.MCP_TASK_RUNNER;
    const heldRunners = {
      idFromName: (name: string) => namespace.idFromName(name),
      get: (id: DurableObjectId) => {
        const runner = namespace.get(id) as unknown as TaskRunnerRpc;
        return {
          create: async (task: NewTask) => {
            reached();
            await held;
            return runner.create(task);
          },
        };
      },
    } as unknown as DurableObjectNamespace;
    const runners = new RunnerClient(heldRunners, undefined, { namespace: fixture.TASK_INDEX, scope: "principal" });
    const task = spec(principal);
    const creating = runners.create(task);
    await atRunner;
    expect(await listed({ principal })).toEqual([]);
    release();
    expect(await creating).toMatchObject({ taskId: task.taskId });
    expect(await listed({ principal })).toEqual([task.taskId]);
  });

  it("drops the entry of a create that failed, once no create can still land", async () => {
    const principal = "failed-create";
    const index = taskIndexOf(fixture.TASK_INDEX, principal);
    const [stale, recent] = [newTaskId(), newTaskId()];
    await index.add(stale, Date.now() - INDEX_PENDING_MS - 1_000);
    await index.add(recent, Date.now());
    expect(await listed({ principal })).toEqual([]);
    const left = (await index.page(null, 10)).map((entry) => entry.taskId);
    expect(left).toEqual([recent]);
  });
});

describe("per-session task indexes", () => {
  it("drop everything when their session expires, and start again if a late create comes", async () => {
    const scope = { principal: "anonymous", session: { id: "expiring", expiresAt: Date.now() + 60_000 } };
    const index = taskIndexOf(fixture.TASK_INDEX, scope);
    await index.add(newTaskId(), Date.now(), scope.session.expiresAt);
    expect(await index.page(null, 10)).toHaveLength(1);
    expect(await runDurableObjectAlarm(index as unknown as DurableObjectStub)).toBe(true);
    expect(await index.page(null, 10)).toEqual([]);
    const late = newTaskId();
    await index.add(late, Date.now(), scope.session.expiresAt);
    expect((await index.page(null, 10)).map((entry) => entry.taskId)).toEqual([late]);
  });
});
