import {
  isJsonContentType,
  ProtocolError,
  ProtocolErrorCode,
  type AuthInfo,
  type createMcpHandler,
  type Implementation,
} from "@modelcontextprotocol/server";
import { FileService, type FilesSettings } from "../files/file-service.js";
import { jsonRpcErrorResponse } from "../errors/jsonrpc.js";
import type { McpServer } from "../server/mcp-server.js";
import { MAX_JSON_DEPTH } from "../limits.js";
import { readJsonBody, type JsonBody } from "../wire/json-body.js";
import { batchRefusal, hostRefusal, type HostPolicy } from "./request-guards.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import type { CallerContext } from "../tasks/caller-context.js";
import { isTaskMethodRequest, prefetchTaskGet, serveTaskMethod } from "./task-fast-path.js";
import { isToolCallRequest, serveToolCall } from "./tool-fast-path.js";
import { serveTaskListen, wantsTaskListen } from "./task-listen.js";
import { serveLegacyWire } from "./wire-2025/legacy-wire.js";
import type { Signer } from "./wire-2025/signing.js";

// One MCP request of a durableMcp deployment, from its host check to the answer: authentication, the one body
// read, then the 2025-11-25 wire, the fast paths and listen in front of the SDK's handler.

/**
 * Who is calling. Tasks are bound to `principal`; `authInfo` reaches tools as `ctx.http.authInfo` (when absent,
 * tools see `{ token: "", clientId: principal, scopes: [] }`).
 * @example
 * ```ts
 * import type { Caller } from "durable-mcp-server";
 *
 * const caller: Caller = { principal: "user:42" };
 * ```
 */
export interface Caller {
  principal: string;
  authInfo?: AuthInfo;
}

/**
 * Return a Caller, or a Response (a 401 with a challenge, say) to answer the request with instead.
 * @example
 * ```ts
 * import type { Authenticate } from "durable-mcp-server";
 *
 * interface Env {
 *   API_TOKEN: string;
 * }
 *
 * const authenticate: Authenticate<Env> = (request, env) =>
 *   request.headers.get("Authorization") === `Bearer ${env.API_TOKEN}`
 *     ? { principal: "ops" }
 *     : new Response("unauthorized", { status: 401, headers: { "WWW-Authenticate": "Bearer" } });
 * ```
 */
export type Authenticate<Env> = (request: Request, env: Env) => Caller | Response | Promise<Caller | Response>;

/** What one request's server is built with: the Worker's env and the caller context. */
export interface RequestBinding<Env> extends CallerContext {
  env: Env;
}

/** What the MCP endpoint of one deployment holds across its requests (built once by durableMcp). */
export interface McpEndpoint<Env> {
  authenticate: Authenticate<Env> | undefined;
  /** The `tasks/*` and `tools/call` fast paths are on (`taskFastPath`, default true). */
  taskFastPath: boolean;
  hosts: HostPolicy;
  maxBodyBytes: number;
  files: FilesSettings | undefined;
  handler: ReturnType<typeof createMcpHandler>;
  /** The request's binding, by the authInfo object the SDK hands its server factory. */
  bindings: WeakMap<AuthInfo, RequestBinding<Env>>;
  signerOf(env: Env): Signer;
  registryOf(env: Env): McpServer;
  serverInfoOf(env: Env): Implementation;
  /** Whether the request bears the operator API's token, which is never an MCP caller's credential. */
  bearsOperatorToken(request: Request, env: Env): boolean;
}

/** Answers one MCP request at whatever path it arrived on; `runnersOf` makes the request's runner client. */
export async function answerMcpRequest<Env>(
  endpoint: McpEndpoint<Env>,
  request: Request,
  env: Env,
  runnersOf: () => RunnerClient,
): Promise<Response> {
  try {
    const forbidden = hostRefusal(request, endpoint.hosts);
    if (forbidden) return jsonRpcErrorResponse(null, forbidden, 403);
    // An operator's credential is never an MCP caller's.
    if (endpoint.bearsOperatorToken(request, env)) {
      const refused = new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        "Unauthorized: an operator token is not accepted here",
      );
      return jsonRpcErrorResponse(null, refused, 401);
    }
    const caller = endpoint.authenticate ? await endpoint.authenticate(request, env) : { principal: "anonymous" };
    if (caller instanceof Response) return caller;
    if (typeof caller?.principal !== "string" || caller.principal.length === 0) {
      throw new Error("authenticate() must return a Caller with a non-empty principal, or a Response");
    }
    const context: CallerContext = { principal: caller.principal, runners: runnersOf() };
    // A tasks/get's RPC starts from its headers while the body is read; used only if the body then agrees.
    const prefetched = endpoint.taskFastPath ? prefetchTaskGet(request, context, endpoint.maxBodyBytes) : undefined;
    // Every JSON body is read here, once, under one size and depth bound, and handed on parsed. A POST that
    // is not JSON is left unread for the SDK to refuse (415).
    let parsedBody: unknown;
    let forward = request;
    if (request.method === "POST" && isJsonContentType(request.headers.get("content-type"))) {
      const read = await readJsonBody(request, { maxBytes: endpoint.maxBodyBytes });
      const refused = bodyRefusal(read);
      if (refused) return refused;
      if (read.kind === "json") parsedBody = read.value;
      // Empty or malformed: the SDK answers with its own -32700 from the same text, now re-readable.
      else if (read.kind === "not-json") forward = new Request(request, { method: "POST", body: read.text });
    }
    const authInfo: AuthInfo = { ...(caller.authInfo ?? { token: "", clientId: caller.principal, scopes: [] }) };
    const sdk = () => {
      let service: FileService | undefined;
      const files = endpoint.files;
      const fileService = files ? () => (service ??= FileService.fromEnv(files, env, request.url)) : undefined;
      endpoint.bindings.set(authInfo, { env, ...context, files: fileService });
      return endpoint.handler.fetch(forward, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody });
    };
    if (parsedBody !== undefined) {
      const batch = batchRefusal(request, parsedBody);
      if (batch) return jsonRpcErrorResponse(null, batch, 400);
      const legacy = await serveLegacyWire(request, parsedBody, {
        ...context,
        signer: endpoint.signerOf(env),
        registry: () => endpoint.registryOf(env),
        sdk,
      });
      if (legacy) return legacy;
      if (endpoint.taskFastPath && isTaskMethodRequest(request)) {
        const answered = await serveTaskMethod(
          request,
          parsedBody,
          context,
          () => endpoint.serverInfoOf(env),
          prefetched,
        );
        if (answered) return answered;
      }
      if (endpoint.taskFastPath && isToolCallRequest(request)) {
        const created = await serveToolCall(request, parsedBody, context, () => endpoint.registryOf(env));
        if (created) return created;
      }
      if (wantsTaskListen(request)) {
        const listen = await serveTaskListen(request, parsedBody, context);
        if (listen) return listen;
      }
    }
    return await sdk();
  } catch (error) {
    console.error("durableMcp: request failed", {
      url: request.url,
      error: error instanceof Error ? error.stack : String(error),
    });
    return jsonRpcErrorResponse(null, new ProtocolError(ProtocolErrorCode.InternalError, "Internal error"), 500);
  }
}

/** The answer to a body the bound refuses, or null when it may go on. */
function bodyRefusal(read: JsonBody): Response | null {
  switch (read.kind) {
    case "too-large":
      return jsonRpcErrorResponse(
        null,
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `Payload Too Large: Request body must not exceed ${read.maxBytes} bytes`,
        ),
        413,
      );
    case "too-deep":
      return jsonRpcErrorResponse(
        read.id,
        new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid params: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
        ),
        400,
      );
    case "unreadable":
      return jsonRpcErrorResponse(
        null,
        new ProtocolError(ProtocolErrorCode.ParseError, "Parse error: the request body could not be read"),
        400,
      );
    default:
      return null;
  }
}
