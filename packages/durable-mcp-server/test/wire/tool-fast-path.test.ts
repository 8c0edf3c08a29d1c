import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_KEY_META } from "../../src/wire/meta-keys.js";
import { wireApp } from "../fixtures/mcp-server.js";
import { rpc, type RpcOptions, type RpcReply } from "../jsonrpc.js";

/**
 * What varies between two creates of the same call — the task id and the instants — replaced by placeholders; every
 * other byte of the answer must be the same on both paths.
 */
function normalized(reply: RpcReply): string {
  const taskIds = new Set<string>();
  const text = JSON.stringify({ status: reply.status, contentType: reply.contentType, body: reply.body });
  for (const match of text.matchAll(/"(?:taskId|durable-mcp-server\/taskId)":"([A-Za-z0-9_-]{32})"/g))
    taskIds.add(match[1]!);
  let out = text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<instant>");
  for (const id of taskIds) out = out.replaceAll(id, "<taskId>");
  return out;
}

/** Requests /mcp handed to the SDK's handler (counted around the router's one call of it). */
let sdkRequests = 0;
const sdkFetch = wireApp.handler.fetch;
beforeAll(() => {
  wireApp.handler.fetch = (...args) => (sdkRequests++, sdkFetch.apply(wireApp.handler, args));
});
afterAll(() => {
  wireApp.handler.fetch = sdkFetch;
});

/** The same tools/call through the fast path (/mcp) and through the SDK only (/mcp-sdk). */
async function both(params: Record<string, unknown>, options: RpcOptions = {}, sdkParams = params) {
  const before = sdkRequests;
  const fast = await rpc("tools/call", params, { ...options, id: 1 });
  const fastWentToSdk = sdkRequests > before;
  const sdk = await rpc("tools/call", sdkParams, { ...options, id: 1, path: "/mcp-sdk" });
  return { fast: normalized(fast), sdk: normalized(sdk), fastWentToSdk, reply: fast };
}

const report = { name: "send_report", arguments: { to: "a@example.com", pages: 2 } };

describe("the tools/call fast path for task tools", () => {
  it("creates the task without the SDK's pipeline, answering exactly as the SDK path does", async () => {
    for (const params of [report, { name: "inline_quick", arguments: {} }, { name: "broken" }]) {
      const { fast, sdk, fastWentToSdk, reply } = await both(params);
      expect(fast).toBe(sdk);
      expect({ params, fastWentToSdk }).toEqual({ params, fastWentToSdk: false });
      expect(reply.status).toBe(200);
    }
  });

  it("leaves everything that is not plainly a task tool's create to the SDK, with the same answer", async () => {
    const cases: Array<[string, Record<string, unknown>, RpcOptions?]> = [
      ["invalid arguments", { name: "send_report", arguments: { to: "nope", pages: 0 } }],
      ["arguments not an object", { name: "send_report", arguments: ["a"] }],
      ["unknown tool", { name: "nope", arguments: {} }],
      ["a tool that is not a task", { name: "echo", arguments: { text: "hi" } }],
      ["beforeStart refusing", { name: "gated", arguments: { refuse: "protocol" } }],
      ["without the extension", report, { declare: false }],
      ["Mcp-Name naming another tool", report, { headers: { "mcp-name": "echo" } }],
      ["no Mcp-Name", report, { headers: { "mcp-name": null } }],
    ];
    for (const [label, params, options] of cases) {
      const { fast, sdk, fastWentToSdk } = await both(params, options);
      expect({ label, fast }).toEqual({ label, fast: sdk });
      expect({ label, fastWentToSdk }).toEqual({ label, fastWentToSdk: true });
    }
    // The 2025-11-25 wire is served in front of both paths (routing/wire-2025/), the same way.
    const legacy = await both(report, { headers: { "mcp-protocol-version": "2025-11-25" } });
    expect(legacy.fast).toBe(legacy.sdk);
    // beforeStart letting the call through: the SDK path creates the task, as before.
    const gated = await both({ name: "gated", arguments: { refuse: "no" } });
    expect(gated.fast).toBe(gated.sdk);
    expect(gated.fastWentToSdk).toBe(true);
    expect(gated.reply.body.result).toMatchObject({ resultType: "task", status: "working" });
  });

  it("leaves a call with an idempotency key to the SDK", async () => {
    const keyed = (key: string) => ({ ...report, _meta: { [IDEMPOTENCY_KEY_META]: key } });
    const { fast, sdk, fastWentToSdk } = await both(keyed(crypto.randomUUID()), {}, keyed(crypto.randomUUID()));
    expect(fast).toBe(sdk);
    expect(fastWentToSdk).toBe(true);
    const header = await both(report, { headers: { "idempotency-key": crypto.randomUUID() } });
    expect(header.fastWentToSdk).toBe(true);
    expect(header.reply.body.result).toMatchObject({ resultType: "task" });
  });
});
