// Pins the two SDK internals the runtime reads (src/server/sdk-internals.ts). An SDK upgrade that renames or drops
// either fails here, by name, instead of breaking tools/call or tools/list somewhere at request time.
import { McpServer as SdkMcpServer, type Server } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { McpServer } from "../../src/index.js";
import { installedRequestHandler, registeredTool } from "../../src/server/sdk-internals.js";

const info = { name: "internals", version: "1.0.0" };

function sdkServerWithTool(): SdkMcpServer {
  const server = new SdkMcpServer(info, { capabilities: { tools: {} } });
  server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  return server;
}

describe("sdk-internals", () => {
  it("the SDK still has the members read by name", () => {
    const server = sdkServerWithTool();
    expect(typeof Reflect.get(server.server, "_getRequestHandler"), "Protocol#_getRequestHandler").toBe("function");
    expect(typeof Reflect.get(server, "_registeredTools"), "McpServer#_registeredTools").toBe("object");
  });

  it("installedRequestHandler: the handler the SDK installed, the one the server dispatches to", () => {
    const server = sdkServerWithTool();
    for (const method of ["tools/call", "tools/list"] as const) {
      const handler = installedRequestHandler(server.server, method);
      expect(typeof handler).toBe("function");
      // The same stored handler each time: the accessor reads the SDK's table, it builds nothing.
      expect(installedRequestHandler(server.server, method)).toBe(handler);
    }
  });

  it("installedRequestHandler: a replaced handler is what it returns afterwards", () => {
    const server = sdkServerWithTool();
    const original = installedRequestHandler(server.server, "tools/list");
    server.server.setRequestHandler("tools/list", async () => ({ tools: [] }));
    expect(installedRequestHandler(server.server, "tools/list")).not.toBe(original);
  });

  it("installedRequestHandler: throws, naming the method, when no handler is installed", () => {
    const bare = new SdkMcpServer(info);
    expect(() => installedRequestHandler(bare.server, "tools/call")).toThrow(
      "the MCP SDK did not install its tools/call handler",
    );
  });

  it("installedRequestHandler and registeredTool: throw, naming the member, when the SDK no longer has it", () => {
    // What an SDK that renamed the members looks like to the reads.
    const renamed = Object.create(null) as Server;
    expect(() => installedRequestHandler(renamed, "tools/list")).toThrow(/Protocol#_getRequestHandler/);
    const noRegistry = Object.create(null) as SdkMcpServer;
    expect(() => registeredTool(noRegistry, "echo")).toThrow(/McpServer#_registeredTools/);
  });

  it("registeredTool: the SDK's record of a registered tool; undefined for others, prototype names included", async () => {
    const server = sdkServerWithTool();
    const tool = registeredTool(server, "echo");
    expect(tool?.enabled).toBe(true);
    const checked = await tool!.inputSchema!["~standard"].validate({ text: 1 });
    expect(checked.issues?.[0]?.path).toEqual(["text"]);
    expect(registeredTool(server, "missing")).toBeUndefined();
    expect(registeredTool(server, "constructor")).toBeUndefined();
    expect(registeredTool(server, "__proto__")).toBeUndefined();
    server.registerTool("off", { inputSchema: z.object({}) }, async () => ({ content: [] })).disable();
    expect(registeredTool(server, "off")?.enabled).toBe(false);
  });

  it("the durable McpServer wraps both handlers at construction", () => {
    const server = new McpServer(info);
    // Its own tools/call and tools/list replaced the SDK's; the SDK's stay reachable only through the wrapper.
    expect(typeof installedRequestHandler(server.server, "tools/call")).toBe("function");
    expect(typeof installedRequestHandler(server.server, "tools/list")).toBe("function");
  });
});
