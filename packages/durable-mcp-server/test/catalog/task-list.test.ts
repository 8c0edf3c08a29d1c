// The 2025-11-25 `tasks/list` answered from the task catalog (design/operations.md): per principal and per session,
// newest first, paged with the signed cursors, purged tasks left out, and no TaskIndex call on the create path.
// Real TaskRunners, real local D1, the real TaskIndex objects (read back, not mocked).
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { taskIndexOf } from "../../src/runner/task-index.js";
import { encodeJson } from "../../src/routing/wire-2025/signing.js";
import { readRpcMessage } from "../jsonrpc.js";
import { applyCatalogMigrations, catalogEnv, db, waitForRow } from "./helpers.js";

const VERSION = "2025-11-25";
const LISTED = "http://localhost/catalog-list/mcp";
const SESSIONS = "http://localhost/catalog-session/mcp";
let nextId = 1;

interface Call {
  url?: string;
  principal?: string;
  session?: string | null;
}

async function call(method: string, params: Record<string, unknown>, options: Call = {}) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (method !== "initialize") headers["mcp-protocol-version"] = VERSION;
  if (options.principal) headers.authorization = `Bearer ${options.principal}`;
  if (options.session) headers["mcp-session-id"] = options.session;
  const response = await SELF.fetch(options.url ?? LISTED, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  return { session: response.headers.get("mcp-session-id"), body: await readRpcMessage(response) };
}

async function initialize(options: Call) {
  const reply = await call(
    "initialize",
    { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "catalog-list-test", version: "1.0.0" } },
    options,
  );
  return { session: reply.session!, capabilities: reply.body.result.capabilities as Record<string, any> };
}

async function start(options: Call, tool = "wait_long", args: Record<string, unknown> = { customer: "c" }) {
  const reply = await call("tools/call", { name: tool, arguments: args, task: {} }, options);
  const taskId = reply.body.result?.task?.taskId as string | undefined;
  if (!taskId) throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return taskId;
}

async function page(options: Call, cursor?: string) {
  const reply = await call("tasks/list", cursor === undefined ? {} : { cursor }, options);
  if (!reply.body.result) throw new Error(`no list: ${JSON.stringify(reply.body)}`);
  const result = reply.body.result as { tasks: Array<{ taskId: string }>; nextCursor?: string };
  return { ids: result.tasks.map((task) => task.taskId), nextCursor: result.nextCursor };
}

/** The catalog follows its runners a moment after each create: waits until every id has its row. */
async function filed(ids: readonly string[]) {
  for (const id of ids) await waitForRow(id, (row) => row !== null);
}

/** What the principal's TaskIndex object holds (a fresh object holds nothing). */
function indexed(principal: string) {
  return taskIndexOf(catalogEnv.TASK_INDEX, principal).page(null, 100);
}

beforeAll(() => applyCatalogMigrations());

describe("tasks/list from the catalog, per principal", () => {
  it("is advertised, lists the caller's tasks newest first, and indexes nothing at create", async () => {
    const { capabilities } = await initialize({ principal: "cl-owner" });
    expect(capabilities.tasks).toMatchObject({ list: {} });
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push(await start({ principal: "cl-owner" }));
    const theirs = await start({ principal: "cl-other" });
    await filed([...mine, theirs]);
    expect((await page({ principal: "cl-owner" })).ids).toEqual(mine.toReversed());
    expect((await page({ principal: "cl-other" })).ids).toEqual([theirs]);
    expect((await page({ principal: "cl-nobody" })).ids).toEqual([]);
    // No TaskIndex write on the create path: the principals' index objects hold nothing.
    expect(await indexed("cl-owner")).toEqual([]);
    expect(await indexed("cl-other")).toEqual([]);
  });

  it("lists a task once its row is filed, a moment after the create returned", async () => {
    const taskId = await start({ principal: "cl-soon" });
    const deadline = Date.now() + 10_000;
    let ids: string[] = [];
    while (Date.now() < deadline && !(ids = (await page({ principal: "cl-soon" })).ids).includes(taskId)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(ids).toEqual([taskId]);
  });

  it("pages with signed cursors: every task once, newest first, then no cursor", async () => {
    const principal = "cl-pager";
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await start({ principal }));
    await filed(ids);
    const first = await page({ principal });
    expect(first.ids).toHaveLength(50);
    expect(first.nextCursor).toMatch(/^dmcp-c1\./);
    const second = await page({ principal }, first.nextCursor);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.ids, ...second.ids]).toEqual(ids.toReversed());
  });

  it("answers -32602 to another principal's cursor and to a forged one", async () => {
    const principal = "cl-cursor";
    const ids: string[] = [];
    for (let i = 0; i < 51; i++) ids.push(await start({ principal }));
    await filed(ids);
    const { nextCursor } = await page({ principal });
    expect(nextCursor).toBeDefined();
    const stolen = await call("tasks/list", { cursor: nextCursor }, { principal: "cl-thief" });
    expect(stolen.body.error).toMatchObject({ code: -32602 });
    const forged = `dmcp-c1.${encodeJson([Date.now(), ids[0]])}.${"A".repeat(43)}`;
    const reply = await call("tasks/list", { cursor: forged }, { principal });
    expect(reply.body.error).toMatchObject({ code: -32602 });
  });

  it("leaves out a task once it is purged", async () => {
    const principal = "cl-purged";
    const kept = await start({ principal });
    const gone = await start({ principal }, "short_lived", {});
    await filed([kept, gone]);
    // short_lived keeps its result 300 ms, and the fixture's runners purge 200 ms after that.
    const row = await waitForRow(gone, (r) => r === null || (r.purgeAt !== null && r.purgeAt < Date.now()));
    expect(row === null || row.status === "completed").toBe(true);
    expect((await page({ principal })).ids).toEqual([kept]);
  });
});

describe("tasks/list from the catalog, per session", () => {
  it("lists each session's own tasks, files them with the task's row, and indexes nothing", async () => {
    const a = await initialize({ url: SESSIONS });
    const b = await initialize({ url: SESSIONS });
    expect(a.capabilities.tasks).toMatchObject({ list: {} });
    const mine = [
      await start({ url: SESSIONS, session: a.session }),
      await start({ url: SESSIONS, session: a.session }),
    ];
    const theirs = await start({ url: SESSIONS, session: b.session });
    const sessionless = await start({ url: SESSIONS });
    await filed([...mine, theirs, sessionless]);
    const deadline = Date.now() + 10_000;
    let ids: string[] = [];
    while (Date.now() < deadline && (ids = (await page({ url: SESSIONS, session: a.session })).ids).length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(ids).toEqual(mine.toReversed());
    expect((await page({ url: SESSIONS, session: b.session })).ids).toEqual([theirs]);
    expect((await page({ url: SESSIONS })).ids).toEqual([]);
    // One session entry per task created in a session; none for the one created without.
    const entries = await db
      .prepare("SELECT task_id FROM durable_mcp_task_sessions WHERE task_id IN (?, ?, ?, ?)")
      .bind(...mine, theirs, sessionless)
      .all<{ task_id: string }>();
    expect(entries.results.map((e) => e.task_id).toSorted()).toEqual([...mine, theirs].toSorted());
    // A session's cursor is refused in another session.
    const more: string[] = [];
    for (let i = 0; i < 49; i++) more.push(await start({ url: SESSIONS, session: a.session }));
    await filed(more);
    let first = await page({ url: SESSIONS, session: a.session });
    while (Date.now() < deadline && first.nextCursor === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      first = await page({ url: SESSIONS, session: a.session });
    }
    expect(first.nextCursor).toBeDefined();
    const foreign = await call("tasks/list", { cursor: first.nextCursor }, { url: SESSIONS, session: b.session });
    expect(foreign.body.error).toMatchObject({ code: -32602 });
    expect(
      await taskIndexOf(catalogEnv.TASK_INDEX, { principal: "anonymous", session: { id: "x", expiresAt: 0 } }).page(
        null,
        1,
      ),
    ).toEqual([]);
  });
});
