import type { JsonRpcError } from "../errors/errors.js";

/** A JSON-RPC error answered with the HTTP status its envelope carries. */
export function jsonRpcErrorResponse(id: string | number | null, error: JsonRpcError): Response {
  return Response.json({ jsonrpc: "2.0", id, error: error.toJSON() }, { status: error.httpStatus });
}
