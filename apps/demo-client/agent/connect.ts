// Connecting to a server: server/discover (who it is, whether it offers the Tasks extension), then tools/list.
import { TASKS_EXTENSION, type JsonObject, type LogEntry, type ToolInfo } from "../shared/mcp.ts";
import type { Connection } from "../shared/watcher-state.ts";
import { describe } from "./problems.ts";

/** What sends one request for the agent (agent/outbound.ts). */
export type Send = (
  url: string,
  method: string,
  params: JsonObject,
  log: (entry: LogEntry) => void,
) => Promise<JsonObject>;

export const ignore = (_entry: LogEntry) => {};

/** tools/list: the server's tools (none when it answers without a list). */
export async function listTools(send: Send, url: string): Promise<ToolInfo[]> {
  const listed = await send(url, "tools/list", {}, ignore);
  return Array.isArray(listed.tools) ? (listed.tools as unknown as ToolInfo[]) : [];
}

/** The connection to `url`: connected with its name, Tasks support and tools, or failed with a problem. */
export async function connect(send: Send, url: string): Promise<Connection> {
  let discovered: JsonObject;
  try {
    discovered = await send(url, "server/discover", {}, ignore);
  } catch (error) {
    return { state: "failed", url, problem: describe(error, url, "server/discover") };
  }
  const meta = discovered._meta as JsonObject | undefined;
  const info = meta?.["io.modelcontextprotocol/serverInfo"] as JsonObject | undefined;
  const server = info ? `${String(info.name)} ${String(info.version)}` : "an MCP server";
  const capabilities = discovered.capabilities as JsonObject | undefined;
  const extensions = capabilities?.extensions as JsonObject | undefined;
  const tasks = !!extensions && TASKS_EXTENSION in extensions;
  try {
    return { state: "connected", url, server, tasks, tools: await listTools(send, url) };
  } catch (error) {
    return { state: "failed", url, problem: describe(error, url, "tools/list") };
  }
}
