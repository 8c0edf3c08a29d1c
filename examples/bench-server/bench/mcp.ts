// The bench's MCP client: @durable-mcp/test-harness's plain-fetch 2026-07-28 client (the Tasks extension declared
// on every request), introducing itself as the bench, and how a bench task's result reads.
import { McpHttpClient, type JsonObject, type Task } from "@durable-mcp/test-harness";

export function benchClient(url: string): McpHttpClient {
  return new McpHttpClient(url, { clientInfo: { name: "durable-mcp-bench", version: "0.1.0" } });
}

/** The parsed JSON text of a completed bench task's result. */
export function resultOf(task: Task): JsonObject {
  if (task.status !== "completed" || task.result?.isError) {
    throw new Error(`task ${task.taskId} ended ${task.status}: ${JSON.stringify(task.result ?? task.error)}`);
  }
  return JSON.parse(task.result?.content?.[0]?.text ?? "null") as JsonObject;
}
