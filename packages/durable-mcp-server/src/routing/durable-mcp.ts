import {
  createMcpHandler,
  type AuthInfo,
  type CreateMcpHandlerOptions,
  type Implementation,
} from "@modelcontextprotocol/server";
import { ErrorCodes } from "../errors/codes.js";
import { defineFileRunner } from "../files/file-runner.js";
import { routeFileRequest } from "../files/file-routes.js";
import { FileService, type FilesSettings } from "../files/file-service.js";
import { corsHeaders } from "../files/http-common.js";
import { toMilliseconds, type Duration } from "../steps/duration.js";
import { JsonRpcError } from "../errors/errors.js";
import type { TaskEventLevel } from "../task-events.js";
import { defineTaskRunner } from "../runner/task-runner.js";
import type { McpServer } from "../server/mcp-server.js";
import { jsonRpcErrorResponse } from "./responses.js";
import { RunnerClient } from "./runner-client.js";
import { isTaskMethodRequest, serveTaskMethod } from "./task-fast-path.js";
import { serveTaskListen, wantsTaskListen } from "./task-listen.js";

/**
 * Who is calling. Tasks are bound to `principal`; `authInfo` reaches tools as `ctx.http.authInfo` (when absent,
 * tools see `{ token: "", clientId: principal, scopes: [] }`).
 */
export interface Caller {
  principal: string;
  authInfo?: AuthInfo;
}

/** Return a Caller, or a Response (a 401 with a challenge, say) to answer the request with instead. */
export type Authenticate<Env> = (request: Request, env: Env) => Caller | Response | Promise<Caller | Response>;

export interface DurableMcpOptions<Env> {
  /** Name of the TaskRunner Durable Object binding in wrangler.jsonc. Default "TASK_RUNNER". */
  binding?: string;
  /** Path the default `fetch` serves MCP on. Default "/mcp". */
  path?: string;
  /** Without it every caller is the principal "anonymous": use only for servers that need no auth. */
  authenticate?: Authenticate<Env>;
  /** Passed to the SDK's `createMcpHandler`. */
  handler?: CreateMcpHandlerOptions;
  /** A TaskRunner run hands off to a fresh alarm after this long (default 10 minutes). */
  alarmBudgetMs?: number;
  /** Finished tasks stay readable this long past their TTL before they are purged (default 60 s). */
  purgeGraceMs?: number;
  /** Which task events are logged as JSON lines: "task" (default: no per-step start/finish), "all", "none". */
  events?: TaskEventLevel;
  /**
   * Answer well-formed `tasks/get|update|cancel` straight from the TaskRunner, skipping the SDK's per-request
   * server (default true). Anything not on that happy path goes through the SDK either way.
   */
  taskFastPath?: boolean;
  /**
   * Files by handle: the FileRunner class, the tus upload and download endpoints under `files.path`, and the file
   * tools for the model. Needs a FileRunner Durable Object binding, an R2 bucket and a signing secret.
   */
  files?: FilesOptions | boolean;
}

export interface FilesOptions {
  /** FileRunner Durable Object binding. Default "FILE_RUNNER". */
  binding?: string;
  /** R2 bucket binding. Default "FILES". */
  bucket?: string;
  /** Secret (≥ 32 characters) that signs file URLs. Default "FILE_URL_SECRET". */
  secret?: string;
  /** Where the endpoints are mounted. Default "/files". */
  path?: string;
  /** Largest file accepted, in bytes. Default 4 GiB. */
  maxSize?: number;
  /** How long an upload, and then its file, is kept. Default 24 hours. */
  ttl?: Duration;
  /** How long a signed download URL works. Default 15 minutes. (An upload URL works as long as its upload.) */
  urlTtl?: Duration;
  /** Origin for the URLs handed out (behind a proxy); default the request's. */
  publicUrl?: string;
  /** Register the file tools (`file_upload_url`, …). Default true. */
  tools?: boolean;
}

interface RequestBinding<Env> {
  env: Env;
  principal: string;
  runners: RunnerClient;
  files?: () => FileService;
}

/**
 * Wires an author's server factory to Workers: the TaskRunner Durable Object class to export, a `fetch` that
 * serves MCP at `path`, and `serve` for mounting the endpoint by hand inside another router.
 */
export function durableMcp<Env>(createServer: (env: Env) => McpServer, options: DurableMcpOptions<Env> = {}) {
  const bindingName = options.binding ?? "TASK_RUNNER";
  const path = options.path ?? "/mcp";
  const files = resolveFiles(options.files);
  const FileRunner = defineFileRunner<Env>({ bucket: files?.bucketBinding ?? "FILES" });
  const withFiles = (server: McpServer) => (files?.tools ? server.registerFileTools() : server);
  const TaskRunner = defineTaskRunner<Env>({
    registry: createServer,
    alarmBudgetMs: options.alarmBudgetMs,
    purgeGraceMs: options.purgeGraceMs,
    events: options.events,
    files,
  });
  // The SDK hands the factory the very authInfo object given to fetch (on the 2025 path too, where the Request
  // is rebuilt), so a fresh authInfo per request carries the request's binding.
  const bindings = new WeakMap<AuthInfo, RequestBinding<Env>>();
  const handler = createMcpHandler(({ authInfo }) => {
    const binding = authInfo ? bindings.get(authInfo) : undefined;
    if (!binding) throw new Error("durableMcp: request reached the MCP handler without its binding");
    return withFiles(createServer(binding.env)).bindTaskRuntime({
      principal: binding.principal,
      runners: binding.runners,
      files: binding.files,
    });
  }, options.handler);

  // The fast path answers with the server's name and version, as the SDK does; build the server once to learn them.
  let serverInfo: Implementation | undefined;
  const serverInfoOf = (env: Env) => (serverInfo ??= createServer(env).serverInfo);

  function runnersFor(env: Env): RunnerClient {
    const namespace = (env as Record<string, unknown>)[bindingName] as DurableObjectNamespace | undefined;
    if (!namespace || typeof namespace.idFromName !== "function") {
      throw new Error(
        `durableMcp: no Durable Object binding named "${bindingName}"; see the wrangler.jsonc in the docs`,
      );
    }
    return new RunnerClient(namespace);
  }

  /** Serves one MCP request at whatever path it arrived on. */
  async function serve(request: Request, env: Env): Promise<Response> {
    try {
      const caller = options.authenticate ? await options.authenticate(request, env) : { principal: "anonymous" };
      if (caller instanceof Response) return caller;
      if (typeof caller?.principal !== "string" || caller.principal.length === 0) {
        throw new Error("authenticate() must return a Caller with a non-empty principal, or a Response");
      }
      const runners = runnersFor(env);
      if (options.taskFastPath !== false && isTaskMethodRequest(request)) {
        const answered = await serveTaskMethod(request.clone(), { principal: caller.principal, runners }, () =>
          serverInfoOf(env),
        );
        if (answered) return answered;
      }
      if (request.method === "POST" && wantsTaskListen(request)) {
        const listen = await serveTaskListen(request.clone(), { principal: caller.principal, runners });
        if (listen) return listen;
      }
      const authInfo: AuthInfo = { ...(caller.authInfo ?? { token: "", clientId: caller.principal, scopes: [] }) };
      let service: FileService | undefined;
      const fileService = files ? () => (service ??= FileService.fromEnv(files, env, request.url)) : undefined;
      bindings.set(authInfo, { env, principal: caller.principal, runners, files: fileService });
      return await handler.fetch(request, { authInfo });
    } catch (error) {
      console.error("durableMcp: request failed", {
        url: request.url,
        error: error instanceof Error ? error.stack : String(error),
      });
      return jsonRpcErrorResponse(null, new JsonRpcError(ErrorCodes.InternalError, "Internal error", undefined, 500));
    }
  }

  /** Serves the file endpoints (tus uploads, downloads); mount under `files.path`. */
  async function serveFiles(request: Request, env: Env): Promise<Response> {
    if (!files) return new Response("Not found", { status: 404 });
    try {
      const service = FileService.fromEnv(files, env, request.url);
      return await routeFileRequest(request, service, async (req) => {
        const caller = options.authenticate ? await options.authenticate(req, env) : { principal: "anonymous" };
        return caller instanceof Response ? withCors(caller) : caller;
      });
    } catch (error) {
      console.error("durableMcp: file request failed", {
        method: request.method,
        url: new URL(request.url).pathname,
        error: error instanceof Error ? error.stack : String(error),
      });
      return new Response("Internal error\n", { status: 500, headers: corsHeaders() });
    }
  }

  async function fetch(request: Request, env: Env): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    if (files && (pathname === files.path || pathname.startsWith(`${files.path}/`))) return serveFiles(request, env);
    if (pathname !== path) return new Response("Not found", { status: 404 });
    return serve(request, env);
  }

  return { TaskRunner, FileRunner, fetch, serve, serveFiles, handler };
}

const GIB = 1024 * 1024 * 1024;

function resolveFiles(option: FilesOptions | boolean | undefined): (FilesSettings & { tools: boolean }) | undefined {
  if (!option) return undefined;
  const given = option === true ? {} : option;
  const path = (given.path ?? "/files").replace(/\/+$/, "");
  if (!path.startsWith("/"))
    throw new Error(`durableMcp: files.path must start with "/" (got ${JSON.stringify(path)})`);
  return {
    runnerBinding: given.binding ?? "FILE_RUNNER",
    bucketBinding: given.bucket ?? "FILES",
    secretBinding: given.secret ?? "FILE_URL_SECRET",
    path,
    maxSize: given.maxSize ?? 4 * GIB,
    ttlMs: toMilliseconds(given.ttl ?? "24 hours"),
    urlTtlMs: toMilliseconds(given.urlTtl ?? "15 minutes"),
    publicUrl: given.publicUrl?.replace(/\/+$/, ""),
    tools: given.tools ?? true,
  };
}

function withCors(response: Response): Response {
  const copy = new Response(response.body, response);
  for (const [name, value] of Object.entries(corsHeaders())) copy.headers.set(name, value);
  return copy;
}
