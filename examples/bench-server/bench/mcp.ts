// A minimal 2026-07-28 MCP client over plain fetch, declaring the Tasks extension on every request: JSON-RPC
// calls, task creation, tasks/get and tasks/update, and `subscriptions/listen` with `notifications.taskIds`.
export const PROTOCOL_VERSION = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: JsonObject;
  result?: JsonObject;
  error?: { code: number; message: string; data?: Json };
}

export interface TaskSnapshot {
  taskId: string;
  status: string;
  inputRequests?: Record<string, JsonObject>;
  result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean };
  error?: JsonObject;
}

export const FINAL = new Set(["completed", "failed", "cancelled"]);

const ENVELOPE: JsonObject = {
  "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "durable-mcp-bench", version: "0.1.0" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
};

let nextId = 1;

function headers(method: string, params: JsonObject): Record<string, string> {
  const result: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": method,
  };
  if (method === "tools/call" && typeof params.name === "string") result["mcp-name"] = params.name;
  if (method.startsWith("tasks/") && typeof params.taskId === "string") result["mcp-name"] = params.taskId;
  return result;
}

/** Every `data:` frame of an SSE body, parsed. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<JsonRpcMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += value.replaceAll("\r\n", "\n");
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const data = buffered
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        buffered = buffered.slice(end + 2);
        if (data) yield JSON.parse(data) as JsonRpcMessage;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}

export class McpClient {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  /** One JSON-RPC request (the Tasks extension declared in `_meta`); returns its result or throws its error. */
  async call(method: string, params: JsonObject = {}): Promise<JsonObject> {
    const id = nextId++;
    const full = { ...params, _meta: ENVELOPE };
    const response = await fetch(this.url, {
      method: "POST",
      headers: headers(method, full),
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: full }),
    });
    let message: JsonRpcMessage | undefined;
    if ((response.headers.get("content-type") ?? "").includes("text/event-stream") && response.body) {
      for await (const frame of sseMessages(response.body)) {
        if (frame.id === id) {
          message = frame;
          break;
        }
      }
    } else {
      message = (await response.json()) as JsonRpcMessage;
    }
    if (!message?.result) {
      throw new Error(`${method} failed (HTTP ${response.status}): ${JSON.stringify(message?.error ?? message)}`);
    }
    return message.result;
  }

  /** tools/call of a task tool; returns the new task's id. */
  async start(tool: string, args: JsonObject): Promise<string> {
    const result = await this.call("tools/call", { name: tool, arguments: args });
    if (result.resultType !== "task" || typeof result.taskId !== "string") {
      throw new Error(`${tool} did not return a task: ${JSON.stringify(result)}`);
    }
    return result.taskId;
  }

  async get(taskId: string): Promise<TaskSnapshot> {
    return (await this.call("tasks/get", { taskId })) as unknown as TaskSnapshot;
  }

  async update(taskId: string, inputResponses: JsonObject): Promise<void> {
    await this.call("tasks/update", { taskId, inputResponses });
  }

  /**
   * `subscriptions/listen` for `taskIds`: calls `onTask(task, at)` for every `notifications/tasks` (at =
   * performance.now() on arrival) and resolves with each task's final snapshot and arrival time once the server
   * ends the listen (every task final).
   */
  async listen(
    taskIds: string[],
    onTask?: (task: TaskSnapshot, at: number) => void | Promise<void>,
  ): Promise<Map<string, { task: TaskSnapshot; at: number }>> {
    const id = nextId++;
    const params: JsonObject = { notifications: { taskIds }, _meta: ENVELOPE };
    const response = await fetch(this.url, {
      method: "POST",
      headers: headers("subscriptions/listen", params),
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params }),
    });
    if (!response.ok || !response.body) throw new Error(`subscriptions/listen: HTTP ${response.status}`);
    const finals = new Map<string, { task: TaskSnapshot; at: number }>();
    for await (const message of sseMessages(response.body)) {
      const at = performance.now();
      if (message.method === "notifications/tasks") {
        const task = message.params as unknown as TaskSnapshot;
        if (FINAL.has(task.status)) finals.set(task.taskId, { task, at });
        await onTask?.(task, at);
      } else if (message.id === id) {
        if (message.error) throw new Error(`subscriptions/listen ended with ${JSON.stringify(message.error)}`);
        break;
      }
    }
    const missing = taskIds.filter((taskId) => !finals.has(taskId));
    if (missing.length > 0) throw new Error(`subscriptions/listen ended before ${missing.join(", ")} was final`);
    return finals;
  }
}

/** The parsed JSON text of a completed bench task's result. */
export function resultOf(task: TaskSnapshot): JsonObject {
  if (task.status !== "completed" || task.result?.isError) {
    throw new Error(`task ${task.taskId} ended ${task.status}: ${JSON.stringify(task.result ?? task.error)}`);
  }
  return JSON.parse(task.result?.content?.[0]?.text ?? "null") as JsonObject;
}
