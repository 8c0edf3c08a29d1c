// A minimal MCP client, run by the TaskWatcher agent (agent/task-watcher.ts), and its types, shared with the page:
// JSON-RPC over fetch in the 2026-07-28 envelope, declaring the Tasks extension (and form elicitation) in every
// request's params._meta. Every exchange is reported to a log callback so that the page can show the raw JSON-RPC
// of each task. No DOM and no Workers API: it runs in a Durable Object and type-checks in the page.

export const PROTOCOL_VERSION = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const PROGRESS_META = "durable-mcp-server/progress";
const CLIENT_INFO = { name: "durable-mcp-demo-client", version: "1.0.0" };

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface JsonRpcError {
  code: number;
  message: string;
  data?: Json;
}

export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: JsonObject;
  result?: JsonObject;
  error?: JsonRpcError;
}

/** One request and what came back, as the page shows it in a task's log. */
export interface LogEntry {
  at: string;
  url: string;
  /** Set when the request went to the agent's own Worker in-process (no network). */
  inProcess?: boolean;
  request: JsonRpcMessage;
  httpStatus?: number;
  /** The JSON-RPC response, plus anything an SSE answer carried before it. */
  response?: JsonRpcMessage;
  related?: JsonRpcMessage[];
  /** Set when no JSON-RPC response arrived (network error, a body that is not JSON-RPC, ...). */
  failure?: string;
}

export type McpErrorKind = "unreachable" | "not-mcp" | "rpc";

/** Why a request failed, in words the page can show, with the kind of failure to pick the next step from. */
export class McpError extends Error {
  constructor(
    readonly kind: McpErrorKind,
    message: string,
    readonly rpcError?: JsonRpcError,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = "McpError";
  }
}

export interface TaskSnapshot {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method: string; params?: JsonObject }>;
  result?: JsonObject;
  error?: JsonRpcError;
  _meta?: JsonObject;
}

export const FINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);

export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  _meta?: JsonObject;
}

/** The per-request `_meta` envelope of 2026-07-28. */
export function envelope(): JsonObject {
  return {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} }, elicitation: { form: {} } },
  };
}

function headersFor(method: string, params: JsonObject): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": method,
  };
  if (method === "tools/call" && typeof params.name === "string") headers["mcp-name"] = params.name;
  if (method.startsWith("tasks/") && typeof params.taskId === "string") headers["mcp-name"] = params.taskId;
  return headers;
}

async function readSse(body: ReadableStream<Uint8Array>, id: number, related: JsonRpcMessage[]) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffered += decoder.decode(value, { stream: true }).replaceAll("\r\n", "\n");
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (!data) continue;
        const message = JSON.parse(data) as JsonRpcMessage;
        if (message.id === id && (message.result !== undefined || message.error !== undefined)) return message;
        related.push(message);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

let nextId = 1;

export interface RpcOptions {
  /** Sent as `Authorization: Bearer <token>` (never logged). */
  token?: string;
  /** What sends the request: `fetch` unless given (the agent passes its own Worker's handler for its own origin). */
  fetch?: (request: Request) => Promise<Response>;
  timeoutMs?: number;
}

/**
 * Sends one JSON-RPC request to `url` and returns its result. Throws McpError: `unreachable` when fetch itself
 * failed, `not-mcp` when the answer is not a JSON-RPC response, `rpc` for a JSON-RPC error.
 */
export async function rpc(
  url: string,
  method: string,
  params: JsonObject,
  log: (entry: LogEntry) => void,
  options: RpcOptions = {},
): Promise<JsonObject> {
  const id = nextId++;
  // The envelope plus whatever the caller asks for in `_meta` (the step timeline, say).
  const withMeta: JsonObject = { ...params, _meta: { ...envelope(), ...(params._meta as JsonObject | undefined) } };
  const request: JsonRpcMessage = { jsonrpc: "2.0", id, method, params: withMeta };
  const entry: LogEntry = { at: new Date().toISOString(), url, request };
  if (options.fetch) entry.inProcess = true;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const headers = headersFor(method, withMeta);
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let res: Response;
  try {
    const send = options.fetch ?? ((req: Request) => fetch(req));
    const req = new Request(url, {
      method: "POST",
      headers,
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      res = await Promise.race([send(req), timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  } catch (error) {
    entry.failure = `fetch failed: ${String(error)}`;
    log(entry);
    throw new McpError(
      "unreachable",
      `Could not reach ${url} (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  entry.httpStatus = res.status;
  // Failures name the status and the content type, never the body: a server that is not MCP may answer anything
  // (an internal page, a listing), and none of it is passed on to the page.
  const mediaType = res.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  const contentType = !mediaType
    ? "no content type"
    : /^[a-z0-9.+-]{1,64}\/[a-z0-9.+-]{1,64}$/.test(mediaType)
      ? mediaType
      : "a malformed content type";
  let response: JsonRpcMessage | undefined;
  try {
    if (contentType === "text/event-stream" && res.body) {
      const related: JsonRpcMessage[] = [];
      response = await readSse(res.body, id, related);
      if (related.length > 0) entry.related = related;
    } else {
      const text = await res.text();
      try {
        response = JSON.parse(text) as JsonRpcMessage;
      } catch {
        entry.failure = `HTTP ${res.status} (${contentType}), and the body is not JSON`;
      }
    }
  } catch (error) {
    // JSON.parse's message quotes the text it failed on: name the error only.
    const why = error instanceof SyntaxError ? "an event's data is not JSON" : String(error);
    entry.failure = `HTTP ${res.status} (${contentType}), reading the answer failed: ${why}`;
  }
  // A JSON body is a JSON-RPC response only with `jsonrpc` and a result or an error object (a 401's
  // `{"error":"unauthorized"}` is not one).
  if (
    response &&
    typeof response === "object" &&
    response.jsonrpc === "2.0" &&
    (response.result !== undefined || (!!response.error && typeof response.error === "object"))
  ) {
    entry.response = response;
  } else if (!entry.failure) {
    entry.failure = `HTTP ${res.status} (${contentType}) without a JSON-RPC response`;
  }
  log(entry);
  if (entry.failure) {
    throw new McpError(
      "not-mcp",
      `${url} did not answer ${method} as an MCP server: ${entry.failure}`,
      undefined,
      res.status,
    );
  }
  if (response?.error) {
    throw new McpError(
      "rpc",
      `${method} failed: ${response.error.message} (code ${response.error.code})`,
      response.error,
      res.status,
    );
  }
  return response?.result ?? {};
}

export function taskSupport(tool: ToolInfo): string | undefined {
  const meta = tool._meta?.[TASKS_EXTENSION];
  return meta && typeof meta === "object" && !Array.isArray(meta) && typeof meta.taskSupport === "string"
    ? meta.taskSupport
    : undefined;
}

/** Asked for in a `tasks/get`'s `_meta`, durable-mcp-server answers with the task's step timeline under it. */
export const STEPS_META = "durable-mcp-server/steps";

export interface TimelineStep {
  name: string;
  kind: "do" | "sleep" | "input" | "event" | "webhook";
  state: "running" | "waiting" | "done" | "failed";
  attempts: number;
  startedAt: string | null;
  updatedAt: string;
  durationMs: number | null;
}

/** The step timeline a task snapshot carries, if its server sent one. */
export function timelineOf(task: TaskSnapshot): { total: number; steps: TimelineStep[] } | undefined {
  const value = task._meta?.[STEPS_META] as { total?: unknown; steps?: unknown } | undefined;
  if (!value || typeof value.total !== "number" || !Array.isArray(value.steps)) return undefined;
  return { total: value.total, steps: value.steps as TimelineStep[] };
}

export function progressOf(task: TaskSnapshot): number | undefined {
  const value = task._meta?.[PROGRESS_META];
  return typeof value === "number" ? value : undefined;
}

/** The text parts of a CallToolResult, joined. */
export function resultText(result: JsonObject | undefined): string {
  const content = result?.content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      part && typeof part === "object" && !Array.isArray(part) && typeof part.text === "string" ? part.text : "",
    )
    .filter(Boolean)
    .join("\n");
}

/** The error envelope of a failed tool result (`structuredContent.error`: code, message, recoveryHint, ...). */
export function errorEnvelope(result: JsonObject | undefined): JsonObject | undefined {
  const structured = result?.structuredContent;
  if (!structured || typeof structured !== "object" || Array.isArray(structured)) return undefined;
  const error = structured.error;
  return error && typeof error === "object" && !Array.isArray(error) ? error : undefined;
}
