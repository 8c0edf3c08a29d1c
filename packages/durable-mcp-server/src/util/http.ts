/**
 * The library's one HTTP helper module: CORS headers and short plain-text responses, the one place the library
 * writes them (the file endpoints and the router's answers around them). JSON-RPC error responses are
 * `errors/jsonrpc.ts`'s.
 * Workers have no CORS helper of their own, hence these few lines.
 *
 * Browsers move bytes with signed URLs or bearer credentials, never cookies, so any origin may call the file
 * endpoints; the headers tus and ranged downloads need are allowed and exposed.
 */
export function corsHeaders(): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, HEAD, POST, PATCH, DELETE, OPTIONS",
    "Access-Control-Allow-Headers":
      "Authorization, Content-Type, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Checksum, " +
      "Upload-Defer-Length, Upload-Concat, Tus-Resumable, X-HTTP-Method-Override, X-Requested-With, X-Request-ID, " +
      "Range, If-Range, If-None-Match",
    "Access-Control-Expose-Headers":
      "Upload-Offset, Upload-Length, Upload-Expires, Location, Tus-Version, Tus-Resumable, Tus-Max-Size, " +
      "Tus-Extension, Tus-Checksum-Algorithm, ETag, Content-Range, Content-Length, Accept-Ranges",
    "Access-Control-Max-Age": "86400",
  };
}

/** A short text response (or an empty one) with the CORS headers. */
export function plain(status: number, message: string | undefined, headers: Record<string, string> = {}): Response {
  const body = message === undefined || status === 204 || status === 304 ? null : `${message}\n`;
  return new Response(body, {
    status,
    headers: {
      ...corsHeaders(),
      ...(body ? { "Content-Type": "text/plain; charset=utf-8" } : {}),
      ...headers,
    },
  });
}

/** `headers` over the CORS headers (a given header replaces a CORS one of the same name). */
export function withCorsHeaders(headers: Record<string, string>): Headers {
  const merged = new Headers(corsHeaders());
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return merged;
}

/** A copy of `response` carrying the CORS headers (they replace any of the same name it had). */
export function withCors(response: Response): Response {
  const copy = new Response(response.body, response);
  for (const [name, value] of Object.entries(corsHeaders())) copy.headers.set(name, value);
  return copy;
}
