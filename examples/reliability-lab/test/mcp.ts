// Raw 2026-07-28 JSON-RPC over fetch for the suites: the request envelope declaring the Tasks extension, JSON or
// SSE answers, retries of idempotent calls across a server that is being killed and restarted.
import type { LabJobArgs } from "../src/lab.ts";

export const PROTOCOL_VERSION = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  result?: JsonObject;
  error?: { code: number; message: string; data?: Json };
}

/** The per-request `_meta` of 2026-07-28, declaring the Tasks extension and form elicitation. */
export function envelope(): JsonObject {
  return {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "reliability-lab", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
  };
}

/** A JSON-RPC error answer: the server understood the request and refused it. Never retried. */
export class RpcError extends Error {
  readonly error: JsonRpcMessage["error"];
  constructor(method: string, httpStatus: number, error: JsonRpcMessage["error"]) {
    super(`${method} failed (HTTP ${httpStatus}): ${JSON.stringify(error)}`);
    this.error = error;
  }
}

/** The server could not be reached or did not answer (refused, reset, 5xx, timeout): a retry may work. */
export class TransportError extends Error {}

let nextId = 1;

async function readAnswer(method: string, id: number, res: Response): Promise<JsonRpcMessage> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    for (const frame of text.replaceAll("\r\n", "\n").split("\n\n")) {
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      const message = JSON.parse(data) as JsonRpcMessage;
      if (message.id === id && (message.result !== undefined || message.error !== undefined)) return message;
    }
    throw new TransportError(`${method}: the SSE stream ended without a response for id ${id}`);
  }
  try {
    return JSON.parse(text) as JsonRpcMessage;
  } catch {
    throw new TransportError(`${method}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
}

/** One attempt at a JSON-RPC request. Throws RpcError for an error answer, TransportError when a retry may help. */
export async function rpcOnce(
  url: string,
  method: string,
  params: JsonObject,
  headers: Record<string, string> = {},
): Promise<JsonObject> {
  const id = nextId++;
  const all: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": method,
    ...headers,
  };
  if (method === "tools/call" && typeof params.name === "string") all["mcp-name"] = params.name;
  if (method.startsWith("tasks/") && typeof params.taskId === "string") all["mcp-name"] = params.taskId;
  let res: Response;
  let message: JsonRpcMessage;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: all,
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      signal: AbortSignal.timeout(30_000),
    });
    message = await readAnswer(method, id, res);
  } catch (error) {
    if (error instanceof TransportError) throw error;
    throw new TransportError(
      `${method}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : error}`,
    );
  }
  if (res.status >= 500) throw new TransportError(`${method}: HTTP ${res.status} ${JSON.stringify(message)}`);
  if (message.result) return message.result;
  throw new RpcError(method, res.status, message.error);
}

/** Counts the transport failures that `rpc` retried, for the reports. */
export const transportRetries = { count: 0 };

/**
 * A JSON-RPC request that must succeed, for idempotent calls only: transport failures (the server is down or
 * restarting) are retried until `deadline`; an error answer is thrown at once.
 */
export async function rpc(
  url: string,
  method: string,
  params: JsonObject,
  options: { headers?: Record<string, string>; deadline?: number } = {},
): Promise<JsonObject> {
  const deadline = options.deadline ?? Date.now() + 60_000;
  for (;;) {
    try {
      return await rpcOnce(url, method, params, options.headers);
    } catch (error) {
      if (!(error instanceof TransportError) || Date.now() > deadline) throw error;
      transportRetries.count++;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
export const FINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

export interface TaskView {
  taskId: string;
  status: TaskStatus;
  createdAt: string;
  lastUpdatedAt: string;
  inputRequests?: Record<string, JsonObject>;
  result?: { structuredContent?: unknown; isError?: boolean; [key: string]: unknown };
  error?: unknown;
}

/**
 * Starts `lab_job` as a task. With `key`, the call carries it as its Idempotency-Key, so that retrying after a
 * lost answer joins the task the first call started instead of starting another.
 */
export async function startJob(
  url: string,
  args: LabJobArgs,
  options: { key?: string; retry?: boolean; deadline?: number } = {},
): Promise<TaskView> {
  const params: JsonObject = { name: "lab_job", arguments: args as unknown as JsonObject, _meta: envelope() };
  const headers: Record<string, string> = options.key === undefined ? {} : { "idempotency-key": options.key };
  const result =
    options.retry === false
      ? await rpcOnce(url, "tools/call", params, headers)
      : await rpc(url, "tools/call", params, { headers, deadline: options.deadline });
  if (result.resultType !== "task" || typeof result.taskId !== "string") {
    throw new Error(`lab_job did not start a task: ${JSON.stringify(result)}`);
  }
  return result as unknown as TaskView;
}

const taskParams = (taskId: string, extra: JsonObject = {}): JsonObject => ({ taskId, ...extra, _meta: envelope() });

export async function getTask(url: string, taskId: string, retry = true): Promise<TaskView> {
  const params = taskParams(taskId);
  return (await (retry ? rpc(url, "tasks/get", params) : rpcOnce(url, "tasks/get", params))) as unknown as TaskView;
}

/** Answers the job's `approve` question with `code`. */
export async function answerTask(url: string, taskId: string, code: string, retry = true): Promise<void> {
  const params = taskParams(taskId, { inputResponses: { approve: { action: "accept", content: { code } } } });
  await (retry ? rpc(url, "tasks/update", params) : rpcOnce(url, "tasks/update", params));
}

export async function cancelTask(url: string, taskId: string, retry = true): Promise<void> {
  const params = taskParams(taskId);
  await (retry ? rpc(url, "tasks/cancel", params) : rpcOnce(url, "tasks/cancel", params));
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
