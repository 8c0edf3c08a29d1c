import {
  classifyInboundRequest,
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SERVER_INFO_META_KEY,
  type Implementation,
} from "@modelcontextprotocol/server";
import { jsonRpcErrorResponse } from "../errors/jsonrpc.js";
import type { CallerContext } from "../runner/caller-context.js";
import { cancelTask, getTask, updateTask } from "../server/task-methods.js";
import { declaresTasks, PROTOCOL_VERSION, TaskMethods } from "../wire/protocol.js";

const FAST_METHODS: ReadonlySet<string> = new Set([TaskMethods.get, TaskMethods.update, TaskMethods.cancel]);

/** Cheap pre-check on headers only: the parsed body is looked at just for `tasks/*`. */
export function isTaskMethodRequest(request: Request): boolean {
  return request.method === "POST" && FAST_METHODS.has(request.headers.get("mcp-method") ?? "");
}

interface TaskMethodRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: string;
  params: { taskId: string; inputResponses?: unknown; _meta: Record<string, unknown> };
}

/**
 * Answers a well-formed `tasks/get|update|cancel` directly from the TaskRunner, without building the author's
 * server for the request (the SDK's per-request pipeline costs more than the Durable Object call itself). Only the
 * happy path is served here: a request that is anything but well-formed and declared returns null, and the SDK
 * answers it with its own exact error, so the wire stays the SDK's wherever they could differ.
 */
export async function serveTaskMethod(
  request: Request,
  body: unknown,
  caller: CallerContext,
  serverInfo: () => Implementation,
): Promise<Response | null> {
  if (!isWellFormed(request, body)) return null;
  const { id, method, params } = body;
  try {
    let result: Record<string, unknown> = {};
    if (method === TaskMethods.get) result = { ...(await getTask(caller, params.taskId, params._meta)) };
    else if (method === TaskMethods.update)
      await updateTask(caller, params.taskId, inputResponses(params.inputResponses));
    else await cancelTask(caller, params.taskId);
    const meta = { ...(result._meta as object | undefined), [SERVER_INFO_META_KEY]: serverInfo() };
    return Response.json({ jsonrpc: "2.0", id, result: { ...result, resultType: "complete", _meta: meta } });
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return jsonRpcErrorResponse(id, error);
  }
}

function isWellFormed(request: Request, body: unknown): body is TaskMethodRequest {
  const message = body as Partial<TaskMethodRequest> | null;
  if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") return false;
  if (typeof message.id !== "string" && typeof message.id !== "number") return false;
  const params = message.params;
  if (typeof params !== "object" || params === null || typeof params.taskId !== "string") return false;
  const meta = params._meta;
  if (meta?.[PROTOCOL_VERSION_META_KEY] !== PROTOCOL_VERSION || typeof meta[CLIENT_CAPABILITIES_META_KEY] !== "object")
    return false;
  if (!declaresTasks(meta)) return false;
  const headers = request.headers;
  if (!/^application\/json\b/i.test(headers.get("content-type") ?? "")) return false;
  if (headers.get("mcp-protocol-version") !== PROTOCOL_VERSION) return false;
  if (headers.get("mcp-method") !== message.method) return false;
  if (headers.get("mcp-name")?.trim() !== params.taskId) return false;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: PROTOCOL_VERSION,
    mcpMethodHeader: message.method,
    mcpNameHeader: params.taskId,
    body,
  });
  return route.kind === "modern";
}

/** As the SDK lifts them: bare answers only; `{ method, result }` wrappers are dropped. */
function inputResponses(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      ([, answer]) => !(typeof answer === "object" && answer !== null && ("method" in answer || "result" in answer)),
    ),
  );
}
