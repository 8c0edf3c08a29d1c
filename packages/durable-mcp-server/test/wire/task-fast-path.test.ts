import { describe, expect, it } from "vitest";
import { callTaskUntil, rpc, type RpcOptions } from "../jsonrpc.js";

/** The same request through the fast path (/mcp) and through the SDK only (/mcp-sdk): the wire must not differ. */
async function both(method: string, params: Record<string, unknown>, options: RpcOptions = {}) {
  const fast = await rpc(method, params, { ...options, id: 1 });
  const sdk = await rpc(method, params, { ...options, id: 1, path: "/mcp-sdk" });
  return { fast: { status: fast.status, body: fast.body }, sdk: { status: sdk.status, body: sdk.body } };
}

describe("the tasks/* fast path", () => {
  it("answers exactly as the SDK path does", async () => {
    const { created } = await callTaskUntil("confirm", {}, (t) => t.status === "input_required");
    const taskId = created.taskId as string;
    const cases: Array<[string, Record<string, unknown>, RpcOptions?]> = [
      ["tasks/get", { taskId }],
      ["tasks/get", { taskId }, { principal: "mallory" }],
      ["tasks/get", { taskId: "Z".repeat(32) }],
      ["tasks/get", { taskId: "not-an-id" }],
      ["tasks/update", { taskId, inputResponses: { never_asked: { action: "accept" } } }],
      [
        "tasks/update",
        { taskId, inputResponses: { ok: { action: "accept", content: { pad: "x".repeat(1_100_000) } } } },
      ],
      [
        "tasks/update",
        { taskId, inputResponses: { ok: { method: "elicitation/create", result: { action: "accept" } } } },
      ],
      ["tasks/cancel", { taskId }, { principal: "mallory" }],
    ];
    for (const [method, params, options] of cases) {
      const { fast, sdk } = await both(method, params, options);
      expect({ method, ...fast }).toEqual({ method, ...sdk });
    }
    // Nothing above changed the task; now cancel it through each path in turn.
    const { fast, sdk } = await both("tasks/cancel", { taskId });
    expect(fast).toEqual(sdk);
    expect(fast.body.result).toEqual({
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "wire-fixture", version: "1.0.0" } },
    });
    const final = await both("tasks/get", { taskId });
    expect(final.fast).toEqual(final.sdk);
    expect(final.fast.body.result).toMatchObject({ status: "cancelled" });
  });
});
