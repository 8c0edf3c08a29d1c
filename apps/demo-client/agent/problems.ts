// What a failed request means for the page: a message and a next step (Problem), or a callable's CallOutcome with
// the McpError's parts (errors do not cross the agent's RPC intact).
import { errorText, McpError } from "../shared/mcp.ts";
import type { CallOutcome, Problem } from "../shared/watcher-state.ts";
import { NotListedError } from "./servers.ts";

/** Why `what` (server/discover, tools/list, tools/call) to `url` failed, and what to do next. */
export function describe(error: unknown, url: string, what: string): Problem {
  if (error instanceof NotListedError) {
    return {
      message: `${error.message} Nothing was sent to it.`,
      next: "Pick one of the listed servers; the Worker's operator lists them in WATCHER_SERVERS.",
    };
  }
  if (error instanceof McpError) {
    if (error.kind === "unreachable") {
      return {
        message: `${error.message} Nothing answered there.`,
        next:
          "Check the URL and that the server is running (the demo: `npm start`, MCP at http://127.0.0.1:8788/mcp). " +
          "The page's agent (a Durable Object of this Worker) sends the requests, so the server must be reachable " +
          "from the Worker. Or connect to this page's own server.",
      };
    }
    if (error.kind === "not-mcp" && error.httpStatus === 401) {
      return {
        message: `${url} refused ${what}: it needs a bearer token, and the agent has none it accepts (HTTP 401).`,
        next: "Enter the server's token in the token field and connect again (docs/deploy.md, AUTH_TOKENS).",
        needsToken: true,
      };
    }
    if (error.kind === "not-mcp") {
      return {
        message: `${url} answered ${what}, but not as an MCP server (${error.httpStatus !== undefined ? `HTTP ${error.httpStatus}` : "no status"}).`,
        next: "Check the path: durable-mcp-server serves MCP at /mcp. Or connect to this page's own server.",
      };
    }
    return {
      message: `${url} refused ${what}: ${error.rpcError?.message ?? error.message} (JSON-RPC error ${error.rpcError?.code ?? "?"}).`,
      next:
        "This page speaks MCP 2026-07-28 (server/discover); an older server cannot run tasks for it. " +
        "Connect to a server built with durable-mcp-server, such as this page's own.",
    };
  }
  return { message: `${what} failed: ${String(error)}`, next: "Try again, or connect to this page's own server." };
}

export function outcomeOf(error: unknown): CallOutcome {
  if (error instanceof McpError) {
    return {
      ok: false,
      kind: error.kind,
      message: error.message,
      ...(error.rpcError ? { rpcError: error.rpcError } : {}),
      ...(error.httpStatus !== undefined ? { httpStatus: error.httpStatus } : {}),
    };
  }
  return { ok: false, kind: "unreachable", message: errorText(error) };
}
