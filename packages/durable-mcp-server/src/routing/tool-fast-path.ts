import {
  classifyInboundRequest,
  ProtocolError,
  SERVER_INFO_META_KEY,
  specTypeSchemas,
} from "@modelcontextprotocol/server";
import { isFastPathRequest } from "./fast-path-request.js";
import { jsonRpcErrorResponse } from "../errors/jsonrpc.js";
import type { CallerContext } from "../tasks/caller-context.js";
import { fastTaskCall, type McpServer } from "../server/mcp-server.js";
import { IDEMPOTENCY_KEY_META } from "../wire/meta-keys.js";
import { PROTOCOL_VERSION } from "../wire/protocol.js";

/** Cheap pre-check on headers only: the parsed body is looked at just for `tools/call`. */
export function isToolCallRequest(request: Request): boolean {
  return request.method === "POST" && request.headers.get("mcp-method") === "tools/call";
}

interface ToolCallRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: "tools/call";
  params: { name: string; arguments?: Record<string, unknown>; _meta: Record<string, unknown> };
}

/**
 * Answers a plain `tools/call` of a task tool from a client that declares the Tasks extension — the call that creates
 * a task — without building the author's server for the request, as `task-fast-path.ts` does for `tasks/get`. Only
 * that happy path is served here: anything else (a tool that is not a task, `beforeStart`, an idempotency key,
 * arguments the tool's schema refuses, a malformed or undeclared request) returns null, and the SDK answers it as
 * before, so the wire stays the SDK's wherever they could differ (test/wire/tool-fast-path.test.ts compares them).
 */
export async function serveToolCall(
  request: Request,
  body: unknown,
  caller: CallerContext,
  registry: () => McpServer,
): Promise<Response | null> {
  if (!isWellFormed(request, body)) return null;
  const { id, params } = body;
  const server = registry();
  try {
    const result = await server[fastTaskCall](
      params.name,
      params.arguments,
      params._meta,
      new URL(request.url).origin,
      caller,
    );
    if (!result) return null;
    // Framed by hand in the SDK's member order (result first), so the fast path answers byte for byte as the SDK does.
    return Response.json({ result: await asSdkAnswers(result, server), jsonrpc: "2.0", id });
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return jsonRpcErrorResponse(id, error);
  }
}

function isWellFormed(request: Request, body: unknown): body is ToolCallRequest {
  if (!isFastPathRequest(request, body, "name") || body.method !== "tools/call") return false;
  const params = (body as ToolCallRequest).params;
  const args = params.arguments;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) return false;
  if (params._meta[IDEMPOTENCY_KEY_META] !== undefined || request.headers.has("idempotency-key")) return false;
  const route = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: PROTOCOL_VERSION,
    mcpMethodHeader: "tools/call",
    mcpNameHeader: params.name,
    body,
  });
  return route.kind === "modern";
}

/**
 * The result as the SDK would put it on the wire: parsed by the SDK's own CallToolResult schema (its defaults, its key
 * order), `resultType` stamped "complete" when absent, and `_meta` naming the server (the SDK's encode steps).
 */
async function asSdkAnswers(result: Record<string, unknown>, server: McpServer): Promise<Record<string, unknown>> {
  const parsed = await specTypeSchemas.CallToolResult["~standard"].validate(result);
  if (parsed.issues) throw new Error(`a task tool's result does not fit CallToolResult: ${parsed.issues[0]?.message}`);
  const answer: Record<string, unknown> = { ...parsed.value };
  answer.resultType ??= "complete";
  answer._meta = { ...(answer._meta as object | undefined), [SERVER_INFO_META_KEY]: server.serverInfo };
  return answer;
}
