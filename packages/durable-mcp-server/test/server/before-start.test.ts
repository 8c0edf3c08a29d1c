// What a tools/call answers when a task's `beforeStart` throws, before any task exists: a `TaskProtocolError` (the
// SDK's `ProtocolError`) is the call's JSON-RPC error with its own code and data; any other error is -32603.
import { describe, expect, it } from "vitest";
import { rpc } from "../jsonrpc.js";

describe("beforeStart", () => {
  it("a TaskProtocolError answers the call with that JSON-RPC error", async () => {
    const reply = await rpc("tools/call", { name: "gated", arguments: { refuse: "protocol" } });
    expect(reply.body.result).toBeUndefined();
    expect(reply.body.error).toEqual({ code: -32602, message: "not today", data: { reason: "closed" } });
  });

  it("any other error is -32603", async () => {
    const reply = await rpc("tools/call", { name: "gated", arguments: { refuse: "plain" } });
    expect(reply.body.result).toBeUndefined();
    expect(reply.body.error).toMatchObject({ code: -32603 });
    expect(reply.body.error?.message).toBe("gate jammed");
  });

  it("returning nothing starts the task as called", async () => {
    const reply = await rpc("tools/call", { name: "gated", arguments: { refuse: "no" } });
    expect(reply.body.result).toMatchObject({ resultType: "task", status: "working" });
  });
});
