// The agent's MCP transport: one JSON-RPC request in the 2026-07-28 envelope (Tasks extension and form elicitation
// declared), sent with the workspace's one raw MCP client (durable-mcp-server/testing/mcp-client: framing, headers,
// ids, SSE frames), every exchange logged as the page shows it, and every failure sorted into a McpError kind.
//
// Why the raw client and not `@modelcontextprotocol/client` 2.4 + `@modelcontextprotocol/ext-tasks` 0.2 (evaluated
// first, issue 16): the SDK client carries the in-process `fetch` (its transport's `fetch` option), tools/list,
// tasks/update and tasks/cancel, but not all the agent needs:
// - 2026-07-28 `tasks/*` do not pass the SDK client's wire codecs: ext-tasks' session then needs a host-supplied
//   `rawDispatch` for them, i.e. a raw client anyway (README, "native client");
// - its `TaskController.snapshot()` sends tasks/get without request `_meta`, so the agent could not ask for the
//   step timeline (`durable-mcp-server/steps`) the page shows;
// - the exchange log would have to be rebuilt from the HTTP level (a wrapped fetch, re-reading SSE bodies), since
//   neither package reports a JSON-RPC request with its response;
// - the agent polls from Durable Object alarms, one tasks/get per alarm across evictions; the session keeps its
//   connection and polling loop in memory, so every wake would first connect (server/discover) again.
// So the agent speaks through the raw client's `post` and reads the answer here, where it also decides what counts
// as an MCP answer (and never passes a non-MCP body on to the page).
import { McpHttpClient, sseMessages, type FetchLike } from "durable-mcp-server/testing/mcp-client";
import { McpError, type JsonObject, type JsonRpcMessage, type LogEntry } from "../shared/mcp.ts";

export const CLIENT_INFO = { name: "durable-mcp-demo-client", version: "1.0.0" };
const TIMEOUT_MS = 15_000;

export interface RpcOptions {
  /** Sent as `Authorization: Bearer <token>` (never logged). */
  token?: string;
  /** What sends the request: `fetch` unless given (the agent passes its own Worker's handler for its own origin). */
  fetch?: (request: Request) => Promise<Response>;
  timeoutMs?: number;
}

let nextId = 1;

/**
 * `send` (or fetch) bounded by `timeoutMs` until the response headers: the client's abort signal ends a network
 * fetch, but an in-process handler may not watch it.
 */
function bounded(send: RpcOptions["fetch"], timeoutMs: number): FetchLike {
  return async (input, init) => {
    const request = new Request(input, init);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([send ? send(request) : fetch(request), timeout]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  };
}

/** The JSON-RPC response to `id` in an SSE answer; what came before it goes to `related`. */
async function sseResponse(body: ReadableStream<Uint8Array>, id: number, related: JsonRpcMessage[]) {
  for await (const message of sseMessages(body)) {
    if (message.id === id && (message.result !== undefined || message.error !== undefined)) return message;
    related.push(message);
  }
  return undefined;
}

/** The media type for a failure message: named when well-formed, never echoed when not. */
function mediaTypeOf(res: Response): string {
  const mediaType = res.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!mediaType) return "no content type";
  return /^[a-z0-9.+-]{1,64}\/[a-z0-9.+-]{1,64}$/.test(mediaType) ? mediaType : "a malformed content type";
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
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const client = new McpHttpClient(url, {
    clientInfo: CLIENT_INFO,
    timeoutMs,
    fetch: bounded(options.fetch, timeoutMs),
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
  });
  const id = nextId++;
  // The envelope plus whatever the caller asks for in `_meta` (the step timeline, say).
  const withMeta: JsonObject = {
    ...params,
    _meta: { ...client.envelope(), ...(params._meta as JsonObject | undefined) },
  };
  const entry: LogEntry = {
    at: new Date().toISOString(),
    url,
    request: { jsonrpc: "2.0", id, method, params: withMeta },
  };
  if (options.fetch) entry.inProcess = true;
  let res: Response;
  try {
    res = (await client.post(method, withMeta, { id })).response;
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
  const contentType = mediaTypeOf(res);
  let response: JsonRpcMessage | undefined;
  try {
    if (contentType === "text/event-stream" && res.body) {
      const related: JsonRpcMessage[] = [];
      response = await sseResponse(res.body, id, related);
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
