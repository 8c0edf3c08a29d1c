// The one JSON-RPC helper of the tests: a 2026-07-28 request to the fixture Worker, as a real client frames it.
import { SELF } from "cloudflare:test";
import { TASKS_EXTENSION } from "../src/index.js";

export interface RpcOptions {
  principal?: string | null;
  /** Declare the Tasks extension in this request's envelope (default true). */
  declare?: boolean;
  headers?: Record<string, string | null>;
  id?: number | string;
  /** Send this raw text instead of a JSON-RPC body. */
  rawBody?: string;
  /** The endpoint path (default /mcp). */
  path?: string;
}

export interface RpcReply {
  status: number;
  contentType: string | null;
  body: {
    jsonrpc: "2.0";
    id: unknown;
    result?: Record<string, any>;
    error?: { code: number; message: string; data?: any };
  };
}

let nextId = 1;

/**
 * The 2026-07-28 envelope. Declaring, it is a client that answers forms, as the tests' questions are (a task may
 * ask only what its client declared): `capabilities` replaces that with exactly what is given, plus the extension.
 */
export function envelope(declare: boolean, capabilities?: Record<string, unknown>) {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wire-test", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": declare
      ? { ...(capabilities ?? { elicitation: { form: {} } }), extensions: { [TASKS_EXTENSION]: {} } }
      : (capabilities ?? {}),
  };
}

export function rpcRequest(method: string, params: Record<string, unknown> = {}, options: RpcOptions = {}): Request {
  const id = options.id ?? nextId++;
  const fullParams = { ...params, _meta: { ...envelope(options.declare ?? true), ...(params._meta as object) } };
  const name = method === "tools/call" ? params.name : method.startsWith("tasks/") ? params.taskId : undefined;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  if (typeof name === "string") headers["mcp-name"] = name;
  const principal = options.principal === undefined ? "alice" : options.principal;
  if (principal) headers.authorization = `Bearer ${principal}`;
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[key];
    else headers[key] = value;
  }
  const body = options.rawBody ?? JSON.stringify({ jsonrpc: "2.0", id, method, params: fullParams });
  return new Request(`http://fixture.test${options.path ?? "/mcp"}`, { method: "POST", headers, body });
}

/** Reads SSE `data:` frames as they arrive. */
export async function* sseFrames(response: Response): AsyncGenerator<Record<string, any>> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").find((line) => line.startsWith("data: "));
      if (data) yield JSON.parse(data.slice(6));
    }
  }
}

export async function rpc(
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcReply> {
  const response = await SELF.fetch(rpcRequest(method, params, options));
  const contentType = response.headers.get("content-type");
  return { status: response.status, contentType, body: (await readRpcMessage(response)) as RpcReply["body"] };
}

/** The JSON-RPC message of a response: its JSON body, or the last `data:` frame of an SSE one. */
export async function readRpcMessage(response: Response): Promise<Record<string, any>> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) return JSON.parse(text);
  const data = text.split("\n").filter((line) => line.startsWith("data: "));
  return JSON.parse(data.at(-1)!.slice(6));
}

/** Calls a task tool and polls tasks/get until `done`, the way a Tasks-aware client does. */
export async function callTaskUntil(
  name: string,
  args: Record<string, unknown>,
  done: (task: Record<string, any>) => boolean,
  options: RpcOptions = {},
): Promise<{ created: Record<string, any>; task: Record<string, any> }> {
  const created = await rpc("tools/call", { name, arguments: args }, options);
  if (!created.body.result) throw new Error(`tools/call failed: ${JSON.stringify(created.body)}`);
  const task = await pollTask(created.body.result.taskId, done, options);
  return { created: created.body.result, task };
}

export async function pollTask(taskId: string, done: (task: Record<string, any>) => boolean, options: RpcOptions = {}) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reply = await rpc("tasks/get", { taskId }, options);
    const task = reply.body.result;
    if (task && done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never got there: ${JSON.stringify(reply.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const final = (task: Record<string, any>) => ["completed", "failed", "cancelled"].includes(task.status);
