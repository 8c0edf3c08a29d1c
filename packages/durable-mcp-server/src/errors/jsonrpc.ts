import { JSONRPC_VERSION, ProtocolError, type JSONRPCErrorResponse } from "@modelcontextprotocol/server";

/**
 * The one JSON-RPC codec of the runtime's own answers: results, notifications and errors are framed here, so the
 * wire shape is written in one place. The one serialiser of JSON-RPC errors. Every error the runtime answers itself (the router's refusals, the
 * task fast path, the listen stream, a task's `failed` outcome) is a `ProtocolError` (the SDK's; the public
 * `TaskProtocolError` is one) and leaves through here, so the wire shape is written in one place.
 */

/** A JSON-RPC error object as it travels on the wire and is stored with a failed task. */
export type JsonRpcErrorObject = JSONRPCErrorResponse["error"];

/** `{ code, message }`, plus `data` only when there is some (an explicit `undefined` is not sent). */
export function toJsonRpcError(error: ProtocolError): JsonRpcErrorObject {
  const { code, message, data } = error;
  return data === undefined ? { code, message } : { code, message, data };
}

/** The error response to the request `id`, as a message of its own (an SSE event, say). */
export function jsonRpcErrorMessage(id: string | number, error: ProtocolError): JSONRPCErrorResponse {
  return { jsonrpc: JSONRPC_VERSION, id, error: toJsonRpcError(error) };
}

/**
 * The error response to the request `id` around an error object already in its wire shape (a failed task's stored
 * error), sent as stored: neither rebuilt nor reordered.
 */
export function jsonRpcStoredErrorMessage(id: string | number, error: JsonRpcErrorObject): JSONRPCErrorResponse {
  return { jsonrpc: JSONRPC_VERSION, id, error };
}

/**
 * A JSON-RPC error answered over HTTP with `status` (200 for the error of a request that was understood). `id` is
 * null when the request's could not be read, as JSON-RPC 2.0 requires (the SDK's type has no null, hence the
 * body is built here rather than from `jsonRpcErrorMessage`).
 */
export function jsonRpcErrorResponse(id: string | number | null, error: ProtocolError, status = 200): Response {
  return Response.json({ jsonrpc: JSONRPC_VERSION, id, error: toJsonRpcError(error) }, { status });
}

/** The result response to the request `id`, as a message of its own (an SSE event, say). */
export function jsonRpcResultMessage<R>(
  id: string | number,
  result: R,
): { jsonrpc: "2.0"; id: string | number; result: R } {
  return { jsonrpc: JSONRPC_VERSION, id, result };
}

/** The result response to the request `id`, answered over HTTP. */
export function jsonRpcResultResponse(id: string | number, result: unknown): Response {
  return Response.json(jsonRpcResultMessage(id, result));
}

/**
 * The result response to the request `id` around `resultText`, a JSON object's text passed through unparsed (the
 * `tasks/get` fast path), answered over HTTP.
 */
export function jsonRpcResultTextResponse(id: string | number, resultText: string): Response {
  return new Response(`{"jsonrpc":"${JSONRPC_VERSION}","id":${JSON.stringify(id)},"result":${resultText}}`, {
    headers: { "content-type": "application/json" },
  });
}

/** A request message to the other side (a server→client request, say), answered under `id`. */
export function jsonRpcRequest<P>(
  id: string | number,
  method: string,
  params: P,
): { jsonrpc: "2.0"; id: string | number; method: string; params: P } {
  return { jsonrpc: JSONRPC_VERSION, id, method, params };
}

/** A notification message (no id, no answer). */
export function jsonRpcNotification<P>(method: string, params: P): { jsonrpc: "2.0"; method: string; params: P } {
  return { jsonrpc: JSONRPC_VERSION, method, params };
}
