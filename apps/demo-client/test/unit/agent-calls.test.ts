// The page's calls to its agent (src/agent-calls.ts): queued until the connection is attached, then made through
// it; an MCP request's outcome turned back into its result or the agent's McpError. The "connection" here is a
// function that answers like the agent's callables would.
import { describe, expect, it } from "vitest";
import { McpError } from "../../shared/mcp.ts";
import type { CallOutcome } from "../../shared/watcher-state.ts";
import { AgentCalls, type Caller } from "../../src/agent-calls.ts";

/** A caller that records each call and answers with `answer(method, args)`. */
function recording(answer: (method: string, args: unknown[]) => unknown = () => "done") {
  const calls: Array<[string, unknown[]]> = [];
  const caller = (async (method: string, args: unknown[] = []) => {
    calls.push([method, args]);
    return answer(method, args);
  }) as Caller;
  return { calls, caller };
}

describe("calls to the page's agent", () => {
  it("queues calls made before the connection is attached, and makes them in order once it is", async () => {
    const agent = new AgentCalls();
    const first = agent.call<string>("listTools");
    const second = agent.call<string>("cancel", ["task-1"]);
    const { calls, caller } = recording((method) => `${method} answered`);
    agent.attach(caller);
    await expect(first).resolves.toBe("listTools answered");
    await expect(second).resolves.toBe("cancel answered");
    expect(calls).toEqual([
      ["listTools", []],
      ["cancel", ["task-1"]],
    ]);
  });

  it("calls through the attached connection at once, and queues again once it is detached", async () => {
    const agent = new AgentCalls();
    const one = recording();
    const detach = agent.attach(one.caller);
    await agent.call("remove", ["task-2"]);
    expect(one.calls).toEqual([["remove", ["task-2"]]]);
    detach();
    let settled = false;
    const later = agent.call("log", ["task-2"]).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    const two = recording();
    agent.attach(two.caller);
    await later;
    expect(two.calls).toEqual([["log", ["task-2"]]]);
    expect(one.calls).toHaveLength(1);
  });

  it("a stale detach does not drop a newer connection", async () => {
    const agent = new AgentCalls();
    const detachOld = agent.attach(recording().caller);
    const current = recording();
    agent.attach(current.caller);
    detachOld();
    await agent.call("listTools");
    expect(current.calls).toEqual([["listTools", []]]);
  });

  it("hands a queued call's failure to its caller", async () => {
    const agent = new AgentCalls();
    const call = agent.call("connectTo", ["/mcp"]);
    agent.attach((async () => {
      throw new Error("RPC call to connectTo timed out after 30000ms");
    }) as Caller);
    await expect(call).rejects.toThrow("timed out after 30000ms");
  });
});

/** An AgentCalls whose agent answers every request with `outcome`. */
function answering(outcome: CallOutcome): AgentCalls {
  const agent = new AgentCalls();
  agent.attach((async () => outcome) as Caller);
  return agent;
}

describe("an MCP request through the agent", () => {
  it("answers the result", async () => {
    const result = { structuredContent: { state: "ready" } };
    await expect(answering({ ok: true, result }).tool("fileStatus", ["/mcp", "file_1"])).resolves.toEqual(result);
  });

  it("rebuilds the agent's McpError with its kind, JSON-RPC error and HTTP status", async () => {
    const failed = answering({
      ok: false,
      kind: "rpc",
      message: "Unknown handle",
      rpcError: { code: -32602, message: "Unknown handle" },
      httpStatus: 200,
    }).tool("fileStatus", ["/mcp", "file_x"]);
    const error = await failed.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({
      kind: "rpc",
      message: "Unknown handle",
      rpcError: { code: -32602 },
      httpStatus: 200,
    });
  });

  it("makes an agent that does not answer an unreachable McpError", async () => {
    const agent = new AgentCalls();
    agent.attach((async () => {
      throw new Error("Connection closed");
    }) as Caller);
    const error = await agent.tool("fileUploadUrl", []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({
      kind: "unreachable",
      message: "The page's agent did not answer (Connection closed).",
    });
  });
});
