// The one raw MCP client of the workspace's tests and of `durable-mcp-server/testing`: 2026-07-28 Streamable HTTP
// spoken with plain fetch. Raw on purpose: a test must also be able to send what no SDK client would (malformed
// bodies, missing or foreign headers, hostile sizes), and see the reply exactly as the server sent it. Requests carry
// the per-request `_meta` envelope (declaring the Tasks extension and form elicitation) and the standard headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name); replies are JSON or SSE. On top: the task calls every suite makes
// (start, get, update, cancel, poll until, listen until final).
//
// Portable: no Workers or Node types and no imports, so that it runs in Node (the over-the-wire suites, the bench,
// loaded by Node's type stripping) and inside workerd (`fetch: (input, init) => exports.default.fetch(input, init)`).

/**
 * The MCP protocol revision this client speaks.
 * @example
 * ```ts
 * import { PROTOCOL_VERSION } from "durable-mcp-server/testing/mcp-client";
 *
 * const headers = { "MCP-Protocol-Version": PROTOCOL_VERSION };
 * ```
 */
export const PROTOCOL_VERSION = "2026-07-28";
/**
 * The id of the Tasks extension, as a client declares it.
 * @example
 * ```ts
 * import { TASKS } from "durable-mcp-server/testing/mcp-client";
 *
 * const capabilities = { extensions: { [TASKS]: {} } };
 * ```
 */
export const TASKS = "io.modelcontextprotocol/tasks";
/**
 * The `_meta` key a `subscriptions/listen` stream tags its notifications with.
 * @example
 * ```ts
 * import { SUBSCRIPTION_ID } from "durable-mcp-server/testing/mcp-client";
 *
 * const subscriptionOf = (meta: Record<string, unknown>) => meta[SUBSCRIPTION_ID];
 * ```
 */
export const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/**
 * A JSON value.
 * @example
 * ```ts
 * import type { Json } from "durable-mcp-server/testing/mcp-client";
 *
 * const value: Json = { rows: [1, 2], done: true, note: null };
 * ```
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/**
 * A JSON object.
 * @example
 * ```ts
 * import type { JsonObject } from "durable-mcp-server/testing/mcp-client";
 *
 * const params: JsonObject = { name: "build_report", arguments: { region: "emea" } };
 * ```
 */
export type JsonObject = { [key: string]: Json };

/**
 * A JSON-RPC message: a request, a notification, a result or an error.
 * @example
 * ```ts
 * import type { JsonRpcMessage } from "durable-mcp-server/testing/mcp-client";
 *
 * const message: JsonRpcMessage = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
 * ```
 */
export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: JsonObject;
  result?: JsonObject;
  error?: { code: number; message: string; data?: Json };
}

/**
 * Who the client says it is (the `clientInfo` of its envelope).
 * @example
 * ```ts
 * import { McpHttpClient, type ClientInfo } from "durable-mcp-server/testing/mcp-client";
 *
 * const clientInfo: ClientInfo = { name: "my-suite", version: "1.0.0" };
 * const client = new McpHttpClient("http://localhost:8787/mcp", { clientInfo });
 * ```
 */
export interface ClientInfo {
  name: string;
  version: string;
}

/**
 * A task's status.
 * @example
 * ```ts
 * import type { TaskStatus } from "durable-mcp-server/testing/mcp-client";
 *
 * const status: TaskStatus = "input_required";
 * ```
 */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
/**
 * The statuses a task never leaves.
 * @example
 * ```ts
 * import { FINAL, type Task } from "durable-mcp-server/testing/mcp-client";
 *
 * const finished = (task: Task) => FINAL.has(task.status);
 * ```
 */
export const FINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/**
 * A tool result as a task carries it.
 * @example
 * ```ts
 * import type { TaskResult } from "durable-mcp-server/testing/mcp-client";
 *
 * const textOf = (result: TaskResult) => result.content?.map((block) => block.text ?? "").join("") ?? "";
 * ```
 */
export interface TaskResult {
  content?: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

/**
 * A task as tasks/get, a CreateTaskResult or a `notifications/tasks` shows it.
 * @example
 * ```ts
 * import type { Task } from "durable-mcp-server/testing/mcp-client";
 *
 * const answerable = (task: Task) => task.status === "input_required" && Object.keys(task.inputRequests ?? {});
 * ```
 */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  inputRequests?: Record<string, JsonObject>;
  result?: TaskResult;
  error?: JsonObject;
  _meta?: JsonObject;
}

/**
 * Resolves after `ms` milliseconds.
 * @param ms - How long to wait, in milliseconds.
 * @example
 * ```ts
 * import { sleep } from "durable-mcp-server/testing/mcp-client";
 *
 * await sleep(100);
 * ```
 */
export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Who the harness says it is unless a suite names itself.
 * @example
 * ```ts
 * import { HARNESS_CLIENT_INFO } from "durable-mcp-server/testing/mcp-client";
 *
 * const name = HARNESS_CLIENT_INFO.name;
 * ```
 */
export const HARNESS_CLIENT_INFO: ClientInfo = { name: "durable-mcp-test-harness", version: "1.0.0" };

/**
 * The per-request `_meta` envelope of 2026-07-28. It declares the Tasks extension and form elicitation unless
 * `tasks: false`, which declares no capabilities at all.
 * @param options - `clientInfo` to name the client, `tasks: false` to declare no capabilities.
 * @returns The `_meta` object to send as a request's `params._meta`.
 * @example
 * ```ts
 * import { envelope } from "durable-mcp-server/testing/mcp-client";
 *
 * const params = { name: "build_report", arguments: { region: "emea" }, _meta: envelope({ tasks: false }) };
 * ```
 */
export function envelope(options: { clientInfo?: ClientInfo; tasks?: boolean } = {}): JsonObject {
  const { name, version } = options.clientInfo ?? HARNESS_CLIENT_INFO;
  return {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": { name, version },
    "io.modelcontextprotocol/clientCapabilities":
      options.tasks === false ? {} : { extensions: { [TASKS]: {} }, elicitation: { form: {} } },
  };
}

/**
 * The standard 2026 headers for a request: version, method, and Mcp-Name where the method has one.
 * @param method - The JSON-RPC method.
 * @param params - Its params (the `Mcp-Name` header is read from them).
 * @returns The headers to send with the request.
 * @example
 * ```ts
 * import { requestHeaders } from "durable-mcp-server/testing/mcp-client";
 *
 * const headers = requestHeaders("tools/call", { name: "build_report", arguments: {} });
 * ```
 */
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

/**
 * Reads every `data:` frame of an SSE body as a JSON-RPC message (comment/keepalive frames are skipped).
 * @param body - A `text/event-stream` response body.
 * @returns The messages, in order, until the stream ends.
 * @throws SyntaxError - When a `data:` frame is not JSON.
 * @example
 * ```ts
 * import { sseMessages } from "durable-mcp-server/testing/mcp-client";
 *
 * const response = await fetch("http://localhost:8787/mcp", { method: "POST", body: "{}" });
 * if (response.body) for await (const message of sseMessages(response.body)) console.log(message.method ?? message.id);
 * ```
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<JsonRpcMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true }).replaceAll("\r\n", "\n");
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

/**
 * A JSON-RPC error answer: the server understood the request and refused it.
 * @example
 * ```ts
 * import { McpHttpClient, RpcError } from "durable-mcp-server/testing/mcp-client";
 *
 * try {
 *   await new McpHttpClient("http://localhost:8787/mcp").call("tools/call", { name: "missing", arguments: {} });
 * } catch (error) {
 *   if (error instanceof RpcError) console.log(error.method, error.httpStatus, error.error);
 * }
 * ```
 */
export class RpcError extends Error {
  readonly method: string;
  readonly httpStatus: number;
  readonly error: JsonRpcMessage["error"] | JsonRpcMessage;
  /**
   * Built by the client from an error answer.
   * @param method - The request's method.
   * @param httpStatus - The HTTP status the answer came with.
   * @param error - The JSON-RPC error (or the whole message when it had none).
   */
  constructor(method: string, httpStatus: number, error: JsonRpcMessage["error"] | JsonRpcMessage) {
    super(`${method} failed (HTTP ${httpStatus}): ${JSON.stringify(error)}`);
    this.method = method;
    this.httpStatus = httpStatus;
    this.error = error;
  }
}

/**
 * The server could not be reached or gave no usable answer (refused, reset, 5xx, timeout): a retry may work.
 * @example
 * ```ts
 * import { McpHttpClient, TransportError } from "durable-mcp-server/testing/mcp-client";
 *
 * try {
 *   await new McpHttpClient("http://localhost:1/mcp", { timeoutMs: 1_000 }).call("tools/list");
 * } catch (error) {
 *   if (error instanceof TransportError) console.log("server down, retry later");
 * }
 * ```
 */
export class TransportError extends Error {}

/**
 * The fetch the client sends with: the global one unless given (e.g. the Worker's own default export in a test).
 * @example
 * ```ts
 * import { McpHttpClient, type FetchLike } from "durable-mcp-server/testing/mcp-client";
 *
 * const logged: FetchLike = (input, init) => {
 *   console.log(init.method, input);
 *   return fetch(input, init);
 * };
 * const client = new McpHttpClient("http://localhost:8787/mcp", { fetch: logged });
 * ```
 */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/**
 * One request as sent and the HTTP status it got back; the body is the caller's to read.
 * @example
 * ```ts
 * import { McpHttpClient, type Exchange } from "durable-mcp-server/testing/mcp-client";
 *
 * const exchanges: Exchange[] = [];
 * const onExchange = (exchange: Exchange) => exchanges.push(exchange);
 * const client = new McpHttpClient("http://localhost:8787/mcp", { onExchange });
 * ```
 */
export interface Exchange {
  method: string;
  id: string | number;
  request: { headers: Record<string, string>; body: string };
  httpStatus: number;
}

/**
 * `new McpHttpClient(url, options)`'s options.
 * @example
 * ```ts
 * import { McpHttpClient, type McpHttpClientOptions } from "durable-mcp-server/testing/mcp-client";
 *
 * const options: McpHttpClientOptions = { headers: { Authorization: "Bearer token" }, timeoutMs: 30_000 };
 * const client = new McpHttpClient("http://localhost:8787/mcp", options);
 * ```
 */
export interface McpHttpClientOptions {
  clientInfo?: ClientInfo;
  /** Bounds every request but `listenTasks`, reading the reply included. */
  timeoutMs?: number;
  fetch?: FetchLike;
  /** Sees every request once its response headers arrived: for logging what a failing test sent. */
  onExchange?: (exchange: Exchange) => void;
  /** HTTP headers on every request (e.g. an `authorization`); a request's own headers win. */
  headers?: Record<string, string>;
}

/**
 * Options of one request: extra headers, the JSON-RPC id, an abort signal.
 * @example
 * ```ts
 * import { McpHttpClient, type RequestOptions } from "durable-mcp-server/testing/mcp-client";
 *
 * const options: RequestOptions = { id: "call-1", signal: AbortSignal.timeout(5_000) };
 * const tools = await new McpHttpClient("http://localhost:8787/mcp").call("tools/list", {}, options);
 * ```
 */
export interface RequestOptions {
  /** The JSON-RPC id; one from a process-wide counter unless given. */
  id?: string | number;
  /** More HTTP headers (names are case-insensitive; these win over the standard ones). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A JSON-RPC answer as `rpc` reads it: the HTTP status, the response, and the messages that came before it on
 * the same stream.
 * @example
 * ```ts
 * import { McpHttpClient, type RpcAnswer } from "durable-mcp-server/testing/mcp-client";
 *
 * const answer: RpcAnswer = await new McpHttpClient("http://localhost:8787/mcp").rpc("tools/list", {});
 * const ok = answer.httpStatus === 200 && answer.response.error === undefined;
 * ```
 */
export interface RpcAnswer {
  httpStatus: number;
  /** The JSON-RPC response carrying the request's id. */
  response: JsonRpcMessage;
  /** Anything the server sent before it (SSE answers only). */
  related: JsonRpcMessage[];
}

let nextId = 1;

/** Reads a reply to request `id`: a JSON body, or an SSE stream up to the response carrying that id. */
async function readReply(method: string, id: string | number, res: Response): Promise<RpcAnswer> {
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream") && res.body) {
    const related: JsonRpcMessage[] = [];
    for await (const message of sseMessages(res.body)) {
      if (message.id === id && (message.result !== undefined || message.error !== undefined)) {
        return { httpStatus: res.status, response: message, related };
      }
      related.push(message);
    }
    throw new TransportError(`${method}: the SSE stream ended without a response for id ${id}`);
  }
  const text = await res.text();
  try {
    return { httpStatus: res.status, response: JSON.parse(text) as JsonRpcMessage, related: [] };
  } catch {
    throw new TransportError(`${method}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
}

/**
 * A client for one MCP endpoint. Three levels: `post` frames a request and returns the raw HTTP response, `rpc`
 * also reads the JSON-RPC answer, both sending `params` exactly as given; `call` and the task calls add this
 * client's envelope as `params._meta` (unless the params carry their own) and return the result, throwing
 * RpcError for an error answer and TransportError when no usable answer came.
 * @example
 * ```ts
 * import { McpHttpClient } from "durable-mcp-server/testing/mcp-client";
 *
 * const client = new McpHttpClient("http://localhost:8787/mcp");
 * const task = await client.startTask("build_report", { region: "emea" });
 * const done = await client.pollTask(task.taskId, (each) => each.status === "completed");
 * ```
 */
export class McpHttpClient {
  readonly url: string;
  readonly clientInfo: ClientInfo;
  readonly #timeoutMs: number | undefined;
  readonly #fetch: FetchLike;
  readonly #onExchange: ((exchange: Exchange) => void) | undefined;
  readonly #headers: Record<string, string>;

  /**
   * A client for the endpoint at `url`.
   * @param url - The MCP endpoint.
   * @param options - Headers, client info, the fetch to send with, a timeout, an exchange observer.
   */
  constructor(url: string, options: McpHttpClientOptions = {}) {
    this.url = url;
    this.clientInfo = options.clientInfo ?? HARNESS_CLIENT_INFO;
    this.#timeoutMs = options.timeoutMs;
    // Looked up per call, not captured: a test may replace the global fetch after building the client.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#onExchange = options.onExchange;
    this.#headers = options.headers ?? {};
  }

  envelope(options: { tasks?: boolean } = {}): JsonObject {
    return envelope({ clientInfo: this.clientInfo, tasks: options.tasks });
  }

  /** POSTs one JSON-RPC request with the standard headers; returns its id and the HTTP response, body unread. */
  post(
    method: string,
    params: JsonObject,
    options: RequestOptions = {},
  ): Promise<{ id: string | number; response: Response }> {
    const timeout = this.#timeoutMs === undefined ? undefined : AbortSignal.timeout(this.#timeoutMs);
    return this.#send(method, params, options, options.signal ?? timeout);
  }

  async #send(
    method: string,
    params: JsonObject,
    options: RequestOptions,
    signal: AbortSignal | undefined,
  ): Promise<{ id: string | number; response: Response }> {
    const id = options.id ?? nextId++;
    // Header names are case-insensitive: merge them lowercased, or fetch would join two spellings with ", ".
    const headers = requestHeaders(method, params);
    for (const [name, value] of Object.entries({ ...this.#headers, ...options.headers })) {
      headers[name.toLowerCase()] = value;
    }
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const response = await this.#fetch(this.url, { method: "POST", headers, body, signal });
    this.#onExchange?.({ method, id, request: { headers, body }, httpStatus: response.status });
    return { id, response };
  }

  /** One JSON-RPC request and its answer, JSON or SSE, whatever it is (an error answer included). */
  async rpc(method: string, params: JsonObject, options: RequestOptions = {}): Promise<RpcAnswer> {
    const { id, response } = await this.post(method, params, options);
    return readReply(method, id, response);
  }

  /** A request that must succeed: returns its result. */
  async call(method: string, params: JsonObject = {}, options: RequestOptions = {}): Promise<JsonObject> {
    const full = params._meta === undefined ? { ...params, _meta: this.envelope() } : params;
    let answer: RpcAnswer;
    try {
      answer = await this.rpc(method, full, options);
    } catch (error) {
      if (error instanceof TransportError) throw error;
      const reason = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
      throw new TransportError(`${method}: ${reason}`, { cause: error });
    }
    if (answer.httpStatus >= 500) {
      throw new TransportError(`${method}: HTTP ${answer.httpStatus} ${JSON.stringify(answer.response)}`);
    }
    if (answer.response.result) return answer.response.result;
    throw new RpcError(method, answer.httpStatus, answer.response.error ?? answer.response);
  }

  /** tools/call of a task tool; returns the CreateTaskResult, or throws when the call did not start a task. */
  async startTask(tool: string, args: JsonObject, options: RequestOptions = {}): Promise<Task> {
    const result = await this.call("tools/call", { name: tool, arguments: args }, options);
    if (result.resultType !== "task" || typeof result.taskId !== "string") {
      throw new Error(`${tool} did not return a task: ${JSON.stringify(result)}`);
    }
    return result as unknown as Task;
  }

  /**
   * tasks/get. With `steps`, asks for the step timeline too (`_meta["durable-mcp-server/steps"]`, STEPS_META in
   * wire/meta-keys.ts, spelled out here because this file imports nothing); it comes back under the same key of the
   * task's `_meta`.
   */
  async getTask(taskId: string, options: { steps?: boolean } = {}): Promise<Task> {
    const params: JsonObject = options.steps
      ? { taskId, _meta: { ...this.envelope(), "durable-mcp-server/steps": true } }
      : { taskId };
    return (await this.call("tasks/get", params)) as unknown as Task;
  }

  async updateTask(taskId: string, inputResponses: JsonObject): Promise<JsonObject> {
    return this.call("tasks/update", { taskId, inputResponses });
  }

  async cancelTask(taskId: string): Promise<JsonObject> {
    return this.call("tasks/cancel", { taskId });
  }

  /** Polls tasks/get every `intervalMs` until `done` holds, handing every snapshot to `seen`. */
  async pollTask(
    taskId: string,
    done: (task: Task) => boolean,
    options: { seen?: (task: Task) => void; intervalMs?: number } = {},
  ): Promise<Task> {
    for (;;) {
      const task = await this.getTask(taskId);
      options.seen?.(task);
      if (done(task)) return task;
      await sleep(options.intervalMs ?? 200);
    }
  }

  /**
   * `subscriptions/listen` for `taskIds`: calls `onTask(task, at)` for every `notifications/tasks` (at =
   * performance.now() on arrival) and resolves with each task's final snapshot and arrival time once the server
   * ends the listen (every task final).
   */
  async listenTasks(
    taskIds: string[],
    onTask?: (task: Task, at: number) => void | Promise<void>,
  ): Promise<Map<string, { task: Task; at: number }>> {
    // No timeout: the listen lasts as long as its tasks do.
    const params: JsonObject = { notifications: { taskIds }, _meta: this.envelope() };
    const { id, response } = await this.#send("subscriptions/listen", params, {}, undefined);
    if (!response.ok || !response.body) throw new Error(`subscriptions/listen: HTTP ${response.status}`);
    const finals = new Map<string, { task: Task; at: number }>();
    for await (const message of sseMessages(response.body)) {
      const at = performance.now();
      if (message.method === "notifications/tasks") {
        const task = message.params as unknown as Task;
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
