// The one raw MCP client of the workspace's tests and of `durable-mcp-server/testing`: 2026-07-28 Streamable HTTP
// spoken with plain fetch. Raw on purpose: a test must also be able to send what no SDK client would (malformed
// bodies, missing or foreign headers, hostile sizes), and see the reply exactly as the server sent it. Requests carry
// the per-request `_meta` envelope (declaring the Tasks extension and form elicitation) and the standard headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name); replies are JSON or SSE. On top: the task calls every suite makes
// (start, get, update, cancel, poll until, listen until final).
//
// Portable: no Workers or Node types and no imports, so that it runs in Node (the over-the-wire suites, the bench,
// loaded by Node's type stripping) and inside workerd (`fetch: (input, init) => exports.default.fetch(input, init)`).

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

export interface ClientInfo {
  name: string;
  version: string;
}

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
export const FINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/** A tool result as a task carries it. */
export interface TaskResult {
  content?: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

/** A task as tasks/get, a CreateTaskResult or a `notifications/tasks` shows it. */
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

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Who the harness says it is unless a suite names itself. */
export const HARNESS_CLIENT_INFO: ClientInfo = { name: "durable-mcp-test-harness", version: "1.0.0" };

/**
 * The per-request `_meta` envelope of 2026-07-28. It declares the Tasks extension and form elicitation unless
 * `tasks: false`, which declares no capabilities at all.
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

/** Reads every `data:` frame of an SSE body as a JSON-RPC message (comment/keepalive frames are skipped). */
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

/** A JSON-RPC error answer: the server understood the request and refused it. */
export class RpcError extends Error {
  readonly method: string;
  readonly httpStatus: number;
  readonly error: JsonRpcMessage["error"] | JsonRpcMessage;
  constructor(method: string, httpStatus: number, error: JsonRpcMessage["error"] | JsonRpcMessage) {
    super(`${method} failed (HTTP ${httpStatus}): ${JSON.stringify(error)}`);
    this.method = method;
    this.httpStatus = httpStatus;
    this.error = error;
  }
}

/** The server could not be reached or gave no usable answer (refused, reset, 5xx, timeout): a retry may work. */
export class TransportError extends Error {}

/** The fetch the client sends with: the global one unless given (e.g. the Worker's own default export in a test). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** One request as sent and the HTTP status it got back; the body is the caller's to read. */
export interface Exchange {
  method: string;
  id: string | number;
  request: { headers: Record<string, string>; body: string };
  httpStatus: number;
}

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

export interface RequestOptions {
  /** The JSON-RPC id; one from a process-wide counter unless given. */
  id?: string | number;
  /** More HTTP headers (names are case-insensitive; these win over the standard ones). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

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
 */
export class McpHttpClient {
  readonly url: string;
  readonly clientInfo: ClientInfo;
  readonly #timeoutMs: number | undefined;
  readonly #fetch: FetchLike;
  readonly #onExchange: ((exchange: Exchange) => void) | undefined;
  readonly #headers: Record<string, string>;

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
