// The agent's calls beside polling: connecting to a server (server/discover: who it is, whether it offers the Tasks
// extension; then tools/list), and starting a tool (tools/call: a CreateTaskResult becomes a task to follow).
import {
  resultText,
  TASKS_EXTENSION,
  type JsonObject,
  type LogEntry,
  type TaskSnapshot,
  type ToolInfo,
} from "../shared/mcp.ts";
import type { Connection, StartOutcome, TaskView } from "../shared/watcher-state.ts";
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

/**
 * tools/call of `tool`: the page's outcome, and for a CreateTaskResult the task's view to follow with the exchanges
 * to log under it (they happened before the task had an id).
 */
export async function startTool(
  send: Send,
  serverUrl: string,
  tool: string,
  args: JsonObject,
): Promise<{ outcome: StartOutcome; view?: TaskView; entries: LogEntry[] }> {
  const entries: LogEntry[] = [];
  let result: JsonObject;
  try {
    result = await send(serverUrl, "tools/call", { name: tool, arguments: args }, (e) => entries.push(e));
  } catch (error) {
    const problem = describe(error, serverUrl, "tools/call");
    return { outcome: { kind: "error", text: `${problem.message} Next: ${problem.next}` }, entries };
  }
  if (result.resultType === "task" && typeof result.taskId === "string") {
    const snapshot = result as unknown as TaskSnapshot;
    const now = new Date().toISOString();
    const view: TaskView = {
      record: { taskId: snapshot.taskId, tool, serverUrl, arguments: args, startedAt: now },
      snapshot,
      polledAt: now,
      logSeq: 0,
    };
    const text = `Started ${tool} as task ${snapshot.taskId}: follow it under "Tasks".`;
    return { outcome: { kind: "ok", text, taskId: snapshot.taskId }, view, entries };
  }
  const said = resultText(result) || JSON.stringify(result);
  if (result.isError === true) {
    return {
      outcome: { kind: "error", text: `${tool} did not start: ${said}. Fix the input and start it again.` },
      entries,
    };
  }
  return { outcome: { kind: "ok", text: `${tool} answered at once: ${said}` }, entries };
}
