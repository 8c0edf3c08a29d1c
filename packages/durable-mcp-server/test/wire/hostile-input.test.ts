// Property-based: whatever arrives over HTTP, the Worker answers with a spec-shaped JSON-RPC error or result,
// never a 5xx or an unhandled exception, and no task changes.
import { SELF } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callTaskUntil, envelope, rpc } from "../jsonrpc.js";

const methods = [
  "tools/call",
  "tools/list",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
  "tasks/result",
  "tasks/list",
  "server/discover",
  "subscriptions/listen",
  "initialize",
  "ping",
  "nope/x",
  "",
];
const hostileIds = fc.oneof(
  fc.string(),
  fc.constantFrom("../../etc/passwd", "A".repeat(5000), "%00", "\u0000\u0001", "😀".repeat(20), " ", "null"),
  fc.stringMatching(/^[A-Za-z0-9_-]{32}$/),
);
const paramsArb = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue(),
  fc.record(
    {
      taskId: fc.oneof(hostileIds, fc.jsonValue()),
      name: fc.oneof(
        fc.constantFrom("send_report", "confirm", "echo", "slow", "paced", "durable_task_get"),
        fc.string(),
      ),
      arguments: fc.oneof(
        fc.jsonValue(),
        fc.record({ to: fc.string(), pages: fc.oneof(fc.integer(), fc.string()), taskId: hostileIds }),
      ),
      inputResponses: fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue())),
      notifications: fc.oneof(fc.jsonValue(), fc.record({ taskIds: fc.array(hostileIds, { maxLength: 5 }) })),
      _meta: fc.oneof(fc.jsonValue(), fc.constant(envelope(true)), fc.constant(envelope(false))),
    },
    { requiredKeys: [] },
  ),
);
const bodyArb = fc.oneof(
  fc
    .record(
      {
        jsonrpc: fc.constantFrom("2.0", "1.0"),
        id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
        method: fc.constantFrom(...methods),
        params: paramsArb,
      },
      { requiredKeys: ["method"] },
    )
    .map((b) => JSON.stringify(b)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
  fc.constantFrom("", "{", "[]", "[{}]", '{"jsonrpc":"2.0"}', "\uFFFD\uD800"),
  // Nesting around the 64-level bound, and JSON-RPC batches (refused on every revision but 2025-03-26).
  fc.integer({ min: 60, max: 3000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
  fc
    .array(fc.constantFrom("ping", "tools/list", "tasks/get", "initialize"), { minLength: 1, maxLength: 3 })
    .map((batch) => JSON.stringify(batch.map((method, id) => ({ jsonrpc: "2.0", id, method, params: {} })))),
);
const headerArb = fc.record(
  {
    "content-type": fc.constantFrom("application/json", "text/plain", "application/json; charset=utf-8", ""),
    "mcp-protocol-version": fc.constantFrom("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "v999", ""),
    "mcp-method": fc.oneof(fc.constantFrom(...methods), fc.string({ maxLength: 20 })),
    "mcp-name": hostileIds.filter((s) => /^[\x20-\x7e]*$/.test(s) && s.length < 200),
    accept: fc.constantFrom("application/json, text/event-stream", "application/json", "*/*"),
  },
  { requiredKeys: [] },
);

/** A tools/list POST with a raw body. */
const post = (body: BodyInit) =>
  SELF.fetch("http://fixture.test/mcp", {
    method: "POST",
    headers: {
      authorization: "Bearer alice",
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    },
    body,
  });

describe("hostile input over HTTP", () => {
  it("never answers 5xx, and every JSON-RPC error is spec-shaped", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const before = (await rpc("tasks/get", { taskId: created.taskId })).body.result;
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        headerArb,
        fc.constantFrom("POST", "GET", "DELETE", "PUT"),
        async (body, headers, method) => {
          const response = await SELF.fetch("http://fixture.test/mcp", {
            method,
            headers: { authorization: "Bearer mallory", ...headers },
            body: method === "GET" ? undefined : body,
          });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.headers.get("content-type")?.includes("application/json") && text.length > 0) {
            const message = JSON.parse(text) as { error?: { code: unknown; message: unknown } };
            if (message.error) {
              expect(Number.isInteger(message.error.code)).toBe(true);
              expect(typeof message.error.message).toBe("string");
            }
          }
        },
      ),
      { numRuns: 300, seed: 20261129 },
    );
    // Mallory's barrage changed nothing of Alice's task.
    expect((await rpc("tasks/get", { taskId: created.taskId })).body.result).toEqual(before);
  });

  it("refuses invalid UTF-8 and oversized bodies cleanly", async () => {
    const bad = await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    const huge = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${"x".repeat(5 * 1024 * 1024)}"}}`,
    );
    expect(huge.status).toBe(413);
  });
});
