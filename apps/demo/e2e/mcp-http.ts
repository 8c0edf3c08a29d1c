// Raw 2026-07-28 Streamable HTTP plumbing for the e2e tests: JSON-RPC over fetch (JSON or SSE answers), the
// request envelope, and an SSE frame reader for `subscriptions/listen` streams.
import { randomBytes } from "node:crypto";

export const PROTOCOL_VERSION = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";
export const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: JsonObject;
  result?: JsonObject;
  error?: { code: number; message: string; data?: Json };
}

export const CLIENT_INFO = { name: "demo-e2e", version: "1.0.0" };

/** The per-request `_meta` envelope of 2026-07-28, declaring the Tasks extension (and form elicitation) unless told not to. */
export function envelope(options: { tasks?: boolean } = {}): JsonObject {
  return {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities":
      options.tasks === false ? {} : { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
  };
}

let nextId = 1;

/** The standard 2026 headers for a request: version, method, and Mcp-Name where the method has one. */
export function requestHeaders(method: string, params: JsonObject | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": method,
  };
  if (method === "tools/call" && typeof params?.name === "string") headers["mcp-name"] = params.name;
  if (method.startsWith("tasks/") && typeof params?.taskId === "string") headers["mcp-name"] = params.taskId;
  return headers;
}

/** Reads every `data:` frame of an SSE body as JSON-RPC messages (comment/keepalive frames are skipped). */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<JsonRpcMessage> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += value.replaceAll("\r\n", "\n");
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) yield JSON.parse(data) as JsonRpcMessage;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}

export interface RpcAnswer {
  httpStatus: number;
  /** The JSON-RPC response carrying the request's id. */
  response: JsonRpcMessage;
  /** Anything the server sent before it (SSE answers only). */
  related: JsonRpcMessage[];
}

/** POSTs one JSON-RPC request (id assigned here unless given) and returns the response, JSON or SSE. */
export async function rpc(
  url: string,
  method: string,
  params: JsonObject,
  options: { id?: string | number; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<RpcAnswer> {
  const id = options.id ?? nextId++;
  // Header names are case-insensitive: merge them lowercased, or fetch would join two spellings with ", ".
  const headers = requestHeaders(method, params);
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    signal: options.signal,
  });
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream") && res.body) {
    const related: JsonRpcMessage[] = [];
    for await (const message of sseMessages(res.body)) {
      if (message.id === id && (message.result !== undefined || message.error !== undefined)) {
        return { httpStatus: res.status, response: message, related };
      }
      related.push(message);
    }
    throw new Error(`${method}: the SSE stream ended without a response for id ${id}`);
  }
  const text = await res.text();
  let response: JsonRpcMessage;
  try {
    response = JSON.parse(text) as JsonRpcMessage;
  } catch {
    throw new Error(`${method}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
  return { httpStatus: res.status, response, related: [] };
}

/** `rpc` for a call that must succeed: returns its result, or throws with the error it got. */
export async function rpcResult(url: string, method: string, params: JsonObject): Promise<JsonObject> {
  const { httpStatus, response } = await rpc(url, method, params);
  if (!response.result) {
    throw new Error(`${method} failed (HTTP ${httpStatus}): ${JSON.stringify(response.error ?? response)}`);
  }
  return response.result;
}

/** Starts `send_report` as a task over raw HTTP and returns its CreateTaskResult. */
export async function startReport(
  url: string,
  args: { to: string; pages: number; secondsPerPage: number },
): Promise<JsonObject & { taskId: string; status: string }> {
  const result = await rpcResult(url, "tools/call", { name: "send_report", arguments: args, _meta: envelope() });
  if (result.resultType !== "task" || typeof result.taskId !== "string") {
    throw new Error(`send_report did not return a task: ${JSON.stringify(result)}`);
  }
  return result as JsonObject & { taskId: string; status: string };
}

export type TaskSnapshot = JsonObject & {
  taskId: string;
  status: string;
  statusMessage?: string;
  inputRequests?: Record<string, JsonObject>;
  result?: JsonObject;
};

export async function getTask(url: string, taskId: string): Promise<TaskSnapshot> {
  return (await rpcResult(url, "tasks/get", { taskId, _meta: envelope() })) as TaskSnapshot;
}

export async function updateTask(url: string, taskId: string, inputResponses: JsonObject): Promise<JsonObject> {
  return rpcResult(url, "tasks/update", { taskId, inputResponses, _meta: envelope() });
}

/** A well-formed task id (32 base64url characters, like the server's) that no task has. */
export function randomTaskId(): string {
  return randomBytes(24).toString("base64url");
}

/** The N of a "rendered N/M pages" status message, or null. */
export function renderedPages(statusMessage: unknown): number | null {
  const match = typeof statusMessage === "string" ? /^rendered (\d+)\/\d+ pages$/.exec(statusMessage) : null;
  return match ? Number(match[1]) : null;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
