import { CONSOLE_PAGE, CONSOLE_SCRIPT_HASH, CONSOLE_STYLE_HASH } from "./console-page.generated.js";

// The operator console's one page (design/operations.md, "The console"): static, holding no data and no secret, so it
// is served without authentication; everything it shows comes from the operator API, which authenticates each call.
// The Content-Security-Policy allows the page's own inline script and stylesheet (by hash) and requests to its own
// origin, nothing else: no other script, no frame, no form target.

/**
 * Where `serveConsole` serves the console and where it finds the operator API.
 *
 * @example
 * ```ts
 * import type { ConsoleOptions } from "durable-mcp-server/console";
 *
 * const options: ConsoleOptions = { path: "/ops", operatorPath: "/operator" };
 * ```
 */
export interface ConsoleOptions {
  /** The console's path, e.g. "/ops": served there and at "/ops/" (its views are the URL's hash). */
  path: string;
  /** Where `durableMcp` serves the operator API (its `operator.path`), on the same origin. Default "/operator". */
  operatorPath?: string;
}

const CSP = [
  "default-src 'none'",
  `script-src '${CONSOLE_SCRIPT_HASH}'`,
  `style-src '${CONSOLE_STYLE_HASH}'`,
  "connect-src 'self'",
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Answers a request for the operator console: one self-contained HTML page (React and uPlot inlined, under a strict
 * Content-Security-Policy) that shows the fleet, counts and charts per tool, stuck tasks, one task's run with its
 * step waterfall, and the audit log, and acts on tasks through the operator API (docs/operations.md, "The console").
 * It asks for the operator token when the API needs one and keeps it in the tab's sessionStorage only. Import it
 * from `durable-mcp-server/console`: a Worker that does not import it carries none of it.
 *
 * @param request - The Worker's request.
 * @param options - Where to serve the console and where the operator API is.
 * @returns The page for GET or HEAD on `options.path` (or with a trailing "/"), 405 for another method there, or
 *   null for any other path, for the Worker's next route.
 *
 * @example
 * ```ts
 * import { serveConsole } from "durable-mcp-server/console";
 *
 * export default {
 *   async fetch(request: Request): Promise<Response> {
 *     return serveConsole(request, { path: "/ops", operatorPath: "/operator" }) ?? new Response("not found", { status: 404 });
 *   },
 * };
 * ```
 */
export function serveConsole(request: Request, options: ConsoleOptions): Response | null {
  const path = options.path.replace(/\/+$/, "");
  const operatorPath = (options.operatorPath ?? "/operator").replace(/\/+$/, "");
  if (!path.startsWith("/"))
    throw new TypeError(`serveConsole: path must start with "/" (got ${JSON.stringify(path)})`);
  if (!operatorPath.startsWith("/")) {
    throw new TypeError(`serveConsole: operatorPath must start with "/" (got ${JSON.stringify(operatorPath)})`);
  }
  const { pathname } = new URL(request.url);
  if (pathname !== path && pathname !== `${path}/`) return null;
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("use GET here", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  const page = CONSOLE_PAGE.replace("__DURABLE_MCP_OPERATOR_PATH__", () =>
    operatorPath.replace(/[&<>"']/g, (char) => ESCAPES[char]!),
  );
  return new Response(request.method === "HEAD" ? null : page, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CSP,
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}
