/** The one envelope of every operator API error: `{ "error": { "code", "message", "param"? } }` with a 4xx/5xx. */
export class OperatorError extends Error {
  override readonly name = "OperatorError";
  constructor(
    readonly status: number,
    readonly code: OperatorErrorCode,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export type OperatorErrorCode =
  | "unauthorized"
  | "forbidden"
  | "operator_off"
  | "catalog_off"
  | "not_found"
  | "too_large"
  | "method_not_allowed"
  | "unknown_filter"
  | "invalid_filter"
  | "invalid_cursor"
  | "page_too_large"
  | "filter_required"
  | "too_many_tasks"
  | "invalid_body"
  | "conflict"
  | "unknown_step"
  | "purged"
  | "internal_error";

export function errorResponse(error: OperatorError): Response {
  const body = { error: { code: error.code, message: error.message, ...(error.param ? { param: error.param } : {}) } };
  return jsonResponse(body, error.status);
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}
