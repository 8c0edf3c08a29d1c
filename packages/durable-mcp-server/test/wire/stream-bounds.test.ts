// Bounds on long-lived streams (docs/limits.md): 2025-11-25 `tasks/result` streams and SEP-2663 task listens, per task
// (enforced by the TaskRunner) and per principal (per Worker instance). Over a bound: HTTP 429 with a JSON-RPC error
// naming it; below it again once a stream closes; the task itself is untouched.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_STREAMS_PER_PRINCIPAL, MAX_STREAMS_PER_TASK } from "../../src/limits.js";
import { openStreamsOf } from "../../src/routing/stream-budget.js";
import { rpc, rpcRequest } from "../jsonrpc.js";

let nextId = 1;

function legacyRequest(method: string, params: Record<string, unknown>, principal: string): Request {
  return new Request("http://fixture.test/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${principal}`,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
}

/** A task that sleeps an hour: it holds every stream open until the test cancels it. */
async function sleepingTask(principal: string): Promise<string> {
  const response = await SELF.fetch(
    legacyRequest("tools/call", { name: "slow", arguments: { ms: 3_600_000 }, task: {} }, principal),
  );
  const body = (await response.json()) as { result?: { task?: { taskId: string } } };
  if (!body.result?.task) throw new Error(`no task: ${JSON.stringify(body)}`);
  return body.result.task.taskId;
}

function resultStream(taskId: string, principal: string): Promise<Response> {
  return SELF.fetch(legacyRequest("tasks/result", { taskId }, principal));
}

async function expectRefused(response: Response, scope: "task" | "principal", limit: number) {
  expect(response.status).toBe(429);
  expect(await response.json()).toMatchObject({
    jsonrpc: "2.0",
    error: { code: -32600, message: expect.stringMatching(/^Too many open streams/), data: { limit, scope } },
  });
}

async function closeAll(streams: Response[]) {
  await Promise.allSettled(streams.map((response) => response.body?.cancel()));
}

describe("tasks/result streams", () => {
  it(`serves ${MAX_STREAMS_PER_TASK} on one task and refuses the next with 429; a closed one frees its place`, async () => {
    const principal = "streams-per-task";
    const taskId = await sleepingTask(principal);
    const open: Response[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_TASK; i++) {
      const response = await resultStream(taskId, principal);
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      open.push(response);
    }
    await expectRefused(await resultStream(taskId, principal), "task", MAX_STREAMS_PER_TASK);
    // A listen naming the task is refused the same way (it would hold one more stream of it).
    const listen = await SELF.fetch(
      rpcRequest("subscriptions/listen", { notifications: { taskIds: [taskId] } }, { principal }),
    );
    await expectRefused(listen, "task", MAX_STREAMS_PER_TASK);
    // The refusals gave their principal slots back.
    expect(openStreamsOf(principal)).toBe(MAX_STREAMS_PER_TASK);

    // The TaskRunner sees the close at its stream's next keep-alive write (WATCH_PING_MS), then frees the place.
    await open.shift()!.body!.cancel();
    let again: Response | undefined;
    for (let tries = 0; tries < 1_000 && again === undefined; tries++) {
      const response = await resultStream(taskId, principal);
      if (response.status === 200) again = response;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(again?.headers.get("content-type")).toContain("text/event-stream");
    open.push(again!);

    // The task is untouched, and ending it ends every stream (and frees every slot).
    expect((await rpc("tasks/get", { taskId }, { principal })).body.result).toMatchObject({ status: "working" });
    await rpc("tasks/cancel", { taskId }, { principal });
    const texts = await Promise.all(open.map((response) => response.text()));
    for (const text of texts) expect(text).toContain('"status":"cancelled"');
    expect(openStreamsOf(principal)).toBe(0);
  });

  it(`holds ${MAX_STREAMS_PER_PRINCIPAL} per principal across tasks, refuses the next, and other principals are not affected`, async () => {
    const principal = "streams-per-principal";
    const tasks = await Promise.all(
      Array.from({ length: Math.ceil(MAX_STREAMS_PER_PRINCIPAL / MAX_STREAMS_PER_TASK) + 1 }, () =>
        sleepingTask(principal),
      ),
    );
    const open: Response[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_PRINCIPAL; i++) {
      open.push(await resultStream(tasks[Math.floor(i / MAX_STREAMS_PER_TASK)]!, principal));
    }
    expect(openStreamsOf(principal)).toBe(MAX_STREAMS_PER_PRINCIPAL);
    // A task with no stream yet: refused for the principal, not the task.
    const spare = tasks.at(-1)!;
    await expectRefused(await resultStream(spare, principal), "principal", MAX_STREAMS_PER_PRINCIPAL);
    const listen = await SELF.fetch(
      rpcRequest("subscriptions/listen", { notifications: { taskIds: [spare] } }, { principal }),
    );
    await expectRefused(listen, "principal", MAX_STREAMS_PER_PRINCIPAL);
    // Another principal still gets its streams.
    const other = "streams-other";
    const otherTask = await sleepingTask(other);
    const otherStream = await resultStream(otherTask, other);
    expect(otherStream.status).toBe(200);
    await otherStream.body!.cancel();

    await closeAll(open.splice(0, 1));
    const freed = await resultStream(spare, principal);
    expect(freed.headers.get("content-type")).toContain("text/event-stream");
    open.push(freed);
    await closeAll(open);
    for (const taskId of [...tasks, otherTask]) {
      await rpc("tasks/cancel", { taskId }, { principal: taskId === otherTask ? other : principal });
    }
    expect(openStreamsOf(principal)).toBe(0);
  });
});
