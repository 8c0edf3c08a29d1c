// A 2025-era MCP client (@modelcontextprotocol/sdk 1.x, `initialize` handshake over Streamable HTTP) against the
// demo: ordinary tools work; the task-only `send_report` must never hand it a task.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TASKS } from "./mcp-http.js";

const { url } = inject("wrangler");
let client: Client;

beforeAll(async () => {
  client = new Client({ name: "demo-e2e-2025", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
});

afterAll(async () => {
  await client?.close();
});

describe("2025 client (@modelcontextprotocol/sdk 1.x, initialize flow)", () => {
  it("negotiates a 2025 protocol version with the demo server", () => {
    expect(client.getServerVersion()).toMatchObject({ name: "reports", version: "1.0.0" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
  });

  it("lists ping and send_report, with send_report marked task-only", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain("ping");
    expect(names).toContain("send_report");
    const sendReport = tools.find((tool) => tool.name === "send_report");
    expect(sendReport?.inputSchema).toMatchObject({ type: "object", required: ["to"] });
    expect(sendReport?._meta?.[TASKS]).toEqual({ taskSupport: "required" });
  });

  it("calls ping", async () => {
    const result = await client.callTool({ name: "ping", arguments: {} });
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: "text", text: "pong" }]);
  });

  it("gets -32021 Missing required client capability for send_report, and no task", async () => {
    let outcome: unknown;
    try {
      outcome = await client.callTool({
        name: "send_report",
        arguments: { to: "carol@example.com", pages: 1, secondsPerPage: 0 },
      });
    } catch (error) {
      outcome = error;
    }
    // What comes back is a JSON-RPC error (in-band on the 2025 transport), which the SDK raises as McpError.
    expect(outcome).toBeInstanceOf(McpError);
    const error = outcome as McpError;
    expect(error.code).toBe(-32021);
    expect(error.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    expect(JSON.stringify(error)).not.toContain("taskId");
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toMatch(/"?resultType"?\s*:\s*"task"/);
  });
});
