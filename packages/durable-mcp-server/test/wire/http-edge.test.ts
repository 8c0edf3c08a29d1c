// The HTTP edge's bounds, on every path: body size (with and without Content-Length), JSON nesting depth,
// JSON-RPC batches by protocol revision, the number of task ids a listen may name, and DNS-rebinding protection
// (Host and Origin) with the library's defaults and with allow-lists.
import { runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { MAX_BODY_BYTES } from "../../src/limits.js";
import { fixtureEnv } from "../helpers.js";
import { callTaskUntil, envelope, rpc, rpcRequest, sseFrames } from "../jsonrpc.js";

const MIB = 1024 * 1024;

/** A well-formed request of `method` (as rpcRequest frames it) whose params carry `pad`. */
function framed(method: string, params: Record<string, unknown>, id: number | string = 1) {
  const request = rpcRequest(method, params, { id });
  return { url: request.url, headers: Object.fromEntries(request.headers), id };
}

/** The same request with a body of `size` bytes, sent as a stream of 1 MiB chunks with no Content-Length. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + MIB));
      offset += MIB;
    },
  });
}

function paddedBody(method: string, params: Record<string, unknown>, bytes: number) {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method,
    params: { ...params, _meta: envelope(true), pad: "x".repeat(bytes) },
  });
}

/** `levels` nested arrays around 0. */
const nested = (levels: number) => JSON.parse(`${"[".repeat(levels)}0${"]".repeat(levels)}`) as unknown;

describe("one size bound for every JSON body", () => {
  const paths: Array<[string, string, Record<string, unknown>]> = [
    ["tasks/get (fast path)", "tasks/get", { taskId: "A".repeat(32) }],
    ["tasks/update (fast path)", "tasks/update", { taskId: "A".repeat(32), inputResponses: {} }],
    ["subscriptions/listen", "subscriptions/listen", { notifications: { taskIds: ["A".repeat(32)] } }],
    ["tools/call (SDK)", "tools/call", { name: "echo", arguments: {} }],
  ];
  for (const [label, method, params] of paths) {
    it(`answers 413 over ${MAX_BODY_BYTES} bytes on ${label}, with and without Content-Length`, async () => {
      const { url, headers } = framed(method, params);
      const body = paddedBody(method, params, MAX_BODY_BYTES);
      for (const sent of [body, chunked(body)]) {
        const response = await SELF.fetch(url, { method: "POST", headers, body: sent });
        expect(response.status).toBe(413);
        expect(await response.json()).toEqual({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes` },
        });
      }
    });
  }

  it("serves a body just under the bound on the fast path", async () => {
    const { url, headers } = framed("tasks/get", { taskId: "A".repeat(32) });
    const body = paddedBody("tasks/get", { taskId: "A".repeat(32) }, MAX_BODY_BYTES - 1024);
    const response = await SELF.fetch(url, { method: "POST", headers, body: chunked(body) });
    expect(response.status).toBe(200);
    expect((await response.json()) as object).toMatchObject({ id: 1, error: { code: -32602 } });
  });
});

describe("JSON nesting depth", () => {
  it("refuses a tasks/update answer nested 5,000 deep with -32602 and the request's id, not a 500", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const reply = await rpc(
      "tasks/update",
      { taskId: created.taskId, inputResponses: { ok: { action: "accept", content: { ok: nested(5000) } } } },
      { id: "deep-1" },
    );
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      jsonrpc: "2.0",
      id: "deep-1",
      error: { code: -32602, message: "Invalid params: JSON nested deeper than 64 levels" },
    });
    // The task never saw it.
    expect((await rpc("tasks/get", { taskId: created.taskId })).body.result).toMatchObject({
      status: "input_required",
    });
  });

  it("accepts 64 levels and refuses 65, on the fast path and through the SDK", async () => {
    // Root object (1), params (2), pad (3): 62 arrays inside reach 64.
    for (const path of ["/mcp", "/mcp-sdk"]) {
      const ok = await rpc("tasks/get", { taskId: "A".repeat(32), pad: nested(62) }, { path, id: 2 });
      expect(ok.body.error?.message).not.toMatch(/nested/);
      const deep = await rpc("tasks/get", { taskId: "A".repeat(32), pad: nested(63) }, { path, id: 3 });
      expect(deep.status).toBe(400);
      expect(deep.body).toMatchObject({ id: 3, error: { code: -32602 } });
      const tool = await rpc("tools/call", { name: "echo", arguments: { deep: nested(63) } }, { path, id: 4 });
      expect(tool.status).toBe(400);
      expect(tool.body).toMatchObject({ id: 4, error: { code: -32602 } });
    }
  });

  it("does not count brackets inside strings", async () => {
    const reply = await rpc("tasks/get", { taskId: "A".repeat(32), pad: "[{".repeat(500) + '\\"[' }, { id: 5 });
    expect(reply.status).toBe(200);
    expect(reply.body.error?.message).not.toMatch(/nested/);
  });
});

const legacyPost = (version: string | null, body: unknown) =>
  SELF.fetch("http://fixture.test/mcp", {
    method: "POST",
    headers: {
      authorization: "Bearer alice",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(version ? { "mcp-protocol-version": version } : {}),
    },
    body: JSON.stringify(body),
  });
const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
const initialize = (protocolVersion: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "batch-test", version: "1.0.0" } },
});

describe("JSON-RPC batches", () => {
  for (const version of ["2025-06-18", "2025-11-25"]) {
    it(`refuses a batch on ${version} with -32600 (HTTP 400)`, async () => {
      const response = await legacyPost(version, [ping(1), ping(2)]);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: JSON-RPC batches are not supported on protocol version ${version}`,
        },
      });
    });

    it(`refuses an initialize batch asking for ${version}, by its body`, async () => {
      const response = await legacyPost(null, [initialize(version), ping(2)]);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
    });
  }

  it("still serves a batch on 2025-03-26, the revision that had batching", async () => {
    const response = await legacyPost("2025-03-26", [ping(1), ping(2)]);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"id":1');
    expect(text).toContain('"id":2');
  });

  it("refuses a batch on 2026-07-28 too", async () => {
    const response = await legacyPost("2026-07-28", [ping(1)]);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});

describe("subscriptions/listen bounds", () => {
  it("refuses more than 100 task ids with -32602 naming the limit", async () => {
    const taskIds = Array.from({ length: 101 }, () => newTaskId());
    const response = await SELF.fetch(rpcRequest("subscriptions/listen", { notifications: { taskIds } }, { id: 9 }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32602, message: "Invalid params: a listen names at most 100 task ids (got 101)" },
    });
  });

  it("serves 100 ids; unknown and foreign ones end at once, hold no stream and write nothing", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const foreign = await rpc("tools/call", { name: "confirm", arguments: {} }, { principal: "mallory" });
    const unknown = Array.from({ length: 98 }, () => newTaskId());
    const taskIds = [...unknown, foreign.body.result!.taskId, created.taskId];
    const started = Date.now();
    const response = await SELF.fetch(rpcRequest("subscriptions/listen", { notifications: { taskIds } }, { id: 10 }));
    const frames = sseFrames(response);
    expect((await frames.next()).value).toMatchObject({ params: { notifications: { taskIds: [created.taskId] } } });
    expect((await frames.next()).value).toMatchObject({ params: { taskId: created.taskId } });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Only the owned task holds the listen open: once it is final, the listen ends.
    await rpc("tasks/cancel", { taskId: created.taskId });
    let last: Record<string, any> | undefined;
    for await (const frame of frames) last = frame;
    expect(last).toMatchObject({ id: 10, result: { resultType: "complete" } });

    // An unknown id's object was only asked, and has no tables.
    const namespace = fixtureEnv.MCP_TASK_RUNNER;
    for (const taskId of unknown.slice(0, 5)) {
      const tables = await runInDurableObject(namespace.get(namespace.idFromName(taskId)), (_, state) =>
        state.storage.sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
          .toArray(),
      );
      expect(tables).toEqual([]);
    }
  });

  it("ends at once with an empty acknowledgement when no id is the caller's", async () => {
    const taskIds = Array.from({ length: 100 }, () => newTaskId());
    const response = await SELF.fetch(rpcRequest("subscriptions/listen", { notifications: { taskIds } }, { id: 11 }));
    const frames: Array<Record<string, any>> = [];
    for await (const frame of sseFrames(response)) frames.push(frame);
    expect(frames).toEqual([
      expect.objectContaining({ params: expect.objectContaining({ notifications: { taskIds: [] } }) }),
      expect.objectContaining({ id: 11, result: expect.objectContaining({ resultType: "complete" }) }),
    ]);
  });
});

const discover = (url: string, headers: Record<string, string> = {}) =>
  SELF.fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: { _meta: envelope(false) },
    }),
  });
const refused = async (response: Response, what: RegExp) => {
  expect(response.status).toBe(403);
  const body = (await response.json()) as { id: unknown; error: { code: number; message: string } };
  expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
  expect(body.error.message).toMatch(what);
};

describe("DNS-rebinding protection", () => {
  it("by default serves loopback Hosts only", async () => {
    for (const host of ["localhost", "localhost:8787", "127.0.0.1:9", "[::1]:8787"]) {
      const response = await discover(`http://${host}/open/mcp`);
      expect(response.status, host).toBe(200);
    }
    await refused(await discover("http://fixture.test/open/mcp"), /Invalid Host: fixture\.test/);
    await refused(await discover("http://evil.example.com:8787/open/mcp"), /Invalid Host/);
  });

  it("by default refuses a foreign Origin, and serves a loopback one or none", async () => {
    await refused(
      await discover("http://localhost/open/mcp", { origin: "http://evil.example.com" }),
      /Invalid Origin: evil\.example\.com/,
    );
    await refused(await discover("http://localhost/open/mcp", { origin: "null" }), /Invalid Origin/);
    expect((await discover("http://localhost/open/mcp", { origin: "http://localhost:5173" })).status).toBe(200);
  });

  it("guards the file endpoints the same way", async () => {
    const foreign = await SELF.fetch("http://fixture.test/open/files", { method: "OPTIONS" });
    expect(foreign.status).toBe(403);
    const local = await SELF.fetch("http://localhost/open/files", { method: "OPTIONS" });
    expect(local.status).not.toBe(403);
    const evilOrigin = await SELF.fetch("http://localhost/open/files", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example.com" },
    });
    expect(evilOrigin.status).toBe(403);
  });

  it("serves the listed hosts and origins, and still refuses others", async () => {
    expect((await discover("https://mcp.example.com/listed/mcp")).status).toBe(200);
    expect((await discover("http://localhost/listed/mcp")).status).toBe(200);
    for (const origin of ["https://app.example.com", "https://mcp.example.com", "http://localhost:3000"]) {
      expect((await discover("https://mcp.example.com/listed/mcp", { origin })).status, origin).toBe(200);
    }
    await refused(await discover("https://evil.example.com/listed/mcp"), /Invalid Host/);
    await refused(
      await discover("https://mcp.example.com/listed/mcp", { origin: "https://evil.example.com" }),
      /Invalid Origin/,
    );
  });

  it("with authenticate, checks nothing unless a list is given", async () => {
    const bearer = { authorization: "Bearer alice" };
    expect((await discover("http://fixture.test/mcp", { ...bearer, origin: "https://evil.example.com" })).status).toBe(
      200,
    );
    await refused(await discover("http://fixture.test/auth-listed/mcp", bearer), /Invalid Host/);
    expect((await discover("https://mcp.example.com/auth-listed/mcp", bearer)).status).toBe(200);
    await refused(
      await discover("https://mcp.example.com/auth-listed/mcp", { ...bearer, origin: "https://evil.example.com" }),
      /Invalid Origin/,
    );
  });
});
