import { describe, expect, it } from "vitest";
import { SELF } from "cloudflare:test";
import { callTaskUntil, rpc, rpcRequest, type RpcOptions } from "../jsonrpc.js";

/** The same request through the fast path (/mcp) and through the SDK only (/mcp-sdk): the wire must not differ. */
async function both(method: string, params: Record<string, unknown>, options: RpcOptions = {}) {
  const fast = await rpc(method, params, { ...options, id: 1 });
  const sdk = await rpc(method, params, { ...options, id: 1, path: "/mcp-sdk" });
  return { fast: { status: fast.status, body: fast.body }, sdk: { status: sdk.status, body: sdk.body } };
}

/** The raw request through both paths, with its id, body and headers exactly as given; answers parsed. */
async function bothRaw(
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string>,
  principal = "alice",
) {
  const send = async (path: string) => {
    const stream = typeof body === "string" ? body : body.tee();
    const response = await SELF.fetch(`http://fixture.test${path}`, {
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${principal}` },
      body: typeof stream === "string" ? stream : stream[0],
    });
    if (typeof stream !== "string") body = stream[1];
    // Compared as JSON, like the cases above (the SDK orders an answer's keys its own way).
    return { status: response.status, body: JSON.parse(await response.text()) as unknown };
  };
  return { fast: await send("/mcp"), sdk: await send("/mcp-sdk") };
}

/**
 * A tasks/get's record is fetched from its Mcp-Name header while the body is read, and the SDK's classification
 * of an envelope is remembered: neither may answer anything the body itself would not be answered.
 */
async function sameAnswersForTheGetPrefetchAndTheEnvelopeMemo(taskId: string) {
  const base = rpcRequest("tasks/get", { taskId }, { id: 7 });
  const headers = Object.fromEntries(base.headers);
  delete headers.authorization;
  const body = JSON.parse(await base.text()) as { id: unknown; params: Record<string, any> };
  const variants: Array<[string, unknown, Record<string, string>?, string?]> = [
    ["as sent", body],
    // The header names the caller's task, the body another one (unknown, or of bad shape): no answer about the first.
    ["body names another task", { ...body, params: { ...body.params, taskId: "Z".repeat(32) } }],
    ["body names a garbage id", { ...body, params: { ...body.params, taskId: "not-an-id" } }],
    ["header names another task", body, { "mcp-name": "Z".repeat(32) }],
    ["another principal", body, {}, "mallory"],
    // The same envelope under ids the memo keeps apart: a fraction, a huge number, a string.
    ["fractional id", { ...body, id: 1.5 }],
    ["unsafe integer id", { ...body, id: 2 ** 60 }],
    ["string id", { ...body, id: "seven" }],
    // After the valid envelope was classified: one that differs in a field the SDK checks.
    [
      "invalid clientInfo",
      {
        ...body,
        params: {
          ...body.params,
          _meta: { ...body.params._meta, "io.modelcontextprotocol/clientInfo": { version: 1 } },
        },
      },
    ],
    [
      "the step timeline asked for",
      { ...body, params: { ...body.params, _meta: { ...body.params._meta, "durable-mcp-server/steps": true } } },
    ],
  ];
  for (const [name, message, extraHeaders, principal] of variants) {
    const { fast, sdk } = await bothRaw(JSON.stringify(message), { ...headers, ...extraHeaders }, principal);
    expect({ name, ...fast }).toEqual({ name, ...sdk });
  }
  // A body without Content-Length (streamed) is read and bounded the other way: the same answer.
  const text = JSON.stringify(body);
  const streamed = new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(text);
      controller.enqueue(bytes.slice(0, 10));
      controller.enqueue(bytes.slice(10));
      controller.close();
    },
  });
  const chunked = await bothRaw(streamed, headers);
  expect(chunked.fast).toEqual(chunked.sdk);
  expect(chunked.fast.status).toBe(200);
  expect(chunked.fast).toEqual((await bothRaw(text, headers)).fast);
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
    await sameAnswersForTheGetPrefetchAndTheEnvelopeMemo(taskId);
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
