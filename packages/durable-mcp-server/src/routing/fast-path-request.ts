import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { declaresTasks, PROTOCOL_VERSION } from "../wire/protocol.js";

/** A request both fast paths may serve, as far as `isFastPathRequest` checked it. */
export interface FastPathMessage {
  jsonrpc: "2.0";
  id: string | number;
  method?: unknown;
  params: Record<string, unknown> & { _meta: Record<string, unknown> };
}

/**
 * The checks the `tasks/*` and `tools/call` fast paths share, on the parsed body and the headers: a JSON-RPC 2.0
 * request with a string or number id and an object `params` whose `nameField` (`taskId`, `name`) is a string and
 * whose `_meta` is the 2026-07-28 envelope declaring the Tasks extension, sent as JSON with the matching
 * MCP-Protocol-Version header and the same name in Mcp-Name. A pure predicate: each path adds its own checks.
 */
export function isFastPathRequest(request: Request, body: unknown, nameField: string): body is FastPathMessage {
  const message = body as Partial<FastPathMessage> | null;
  if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") return false;
  if (typeof message.id !== "string" && typeof message.id !== "number") return false;
  const params = message.params;
  if (typeof params !== "object" || params === null || typeof params[nameField] !== "string") return false;
  const meta = params._meta;
  if (meta?.[PROTOCOL_VERSION_META_KEY] !== PROTOCOL_VERSION || typeof meta[CLIENT_CAPABILITIES_META_KEY] !== "object")
    return false;
  if (!declaresTasks(meta)) return false;
  const headers = request.headers;
  if (!/^application\/json\b/i.test(headers.get("content-type") ?? "")) return false;
  if (headers.get("mcp-protocol-version") !== PROTOCOL_VERSION) return false;
  return headers.get("mcp-name")?.trim() === params[nameField];
}
