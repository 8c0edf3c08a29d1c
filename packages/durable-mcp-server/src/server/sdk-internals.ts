/**
 * The one module that reads the MCP SDK's non-public members. Why it has to:
 * - the runtime wraps the SDK's own `tools/call` and `tools/list` handlers (task tools answer `tools/call`
 *   themselves, and a Tasks client's `tools/list` leaves out the facade tools) and hands every other call back to
 *   them. The SDK has no public way to get an installed request handler back, only to replace it, so the
 *   handler is read with `Protocol#_getRequestHandler` (protected: "for role classes that dispatch through the
 *   same stored handler chain", which is what the wrapper does);
 * - every tool's argument errors get the runtime's `invalid_arguments` envelope, which needs the registered
 *   tool's input schema before the SDK validates it; the SDK keeps its registry in the private `_registeredTools`.
 *
 * Both are checked where they are read (a missing member throws a message naming it, never a late `undefined`
 * call), and `test/server/sdk-internals.test.ts` pins them, so an SDK upgrade that renames or drops either fails
 * that test by name instead of breaking requests somewhere else.
 */
import type {
  HandlerResultTypeMap,
  McpServer as SdkMcpServer,
  RequestTypeMap,
  Server,
  ServerContext,
  StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";

/** The request methods whose installed SDK handler the runtime wraps. */
export type WrappedMethod = "tools/call" | "tools/list";

/** An installed handler, typed as `setRequestHandler` types the one it accepts for the method. */
export type SdkRequestHandler<M extends WrappedMethod> = (
  request: RequestTypeMap[M],
  ctx: ServerContext,
) => Promise<HandlerResultTypeMap[M]>;

/** What the runtime reads of a tool the SDK registered. */
export interface RegisteredToolView {
  enabled: boolean;
  inputSchema?: StandardSchemaWithJSON;
}

/**
 * The handler the SDK installed for `method` on `server` (the one the dispatcher calls), to be called from the
 * handler that replaces it. Throws when the SDK no longer has the accessor or no handler is installed.
 */
export function installedRequestHandler<M extends WrappedMethod>(server: Server, method: M): SdkRequestHandler<M> {
  // Read by name: `Server`'s declared type keeps the accessor protected.
  const accessor: unknown = Reflect.get(server, "_getRequestHandler");
  if (typeof accessor !== "function") {
    throw new Error("the MCP SDK no longer has Protocol#_getRequestHandler; durable-mcp-server needs an update");
  }
  const handler: unknown = accessor.call(server, method);
  if (typeof handler !== "function") throw new Error(`the MCP SDK did not install its ${method} handler`);
  // The SDK stores it as taking the raw JSON-RPC request; it reads only `method` and `params`, which the request
  // handed to the replacing handler carries, and resolves to the method's result.
  return handler as SdkRequestHandler<M>;
}

/** The SDK's record of the registered tool `name`, or undefined when there is none. */
export function registeredTool(server: SdkMcpServer, name: string): RegisteredToolView | undefined {
  const tools: unknown = Reflect.get(server, "_registeredTools");
  if (typeof tools !== "object" || tools === null) {
    throw new Error("the MCP SDK no longer has McpServer#_registeredTools; durable-mcp-server needs an update");
  }
  return Object.hasOwn(tools, name) ? (Reflect.get(tools, name) as RegisteredToolView | undefined) : undefined;
}
