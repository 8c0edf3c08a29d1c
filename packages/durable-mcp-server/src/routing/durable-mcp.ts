import { createMcpHandler, type AuthInfo, type Implementation } from "@modelcontextprotocol/server";
import { defineFileRunner } from "../file-runner/index.js";
import { routeFileRequest } from "../files/file-routes.js";
import { FileService, type FilesSettings } from "../files/file-service.js";
import { corsHeaders, withCors } from "../util/http.js";
import { toMilliseconds } from "../steps/duration.js";
import {
  defineTaskRunner,
  defineTaskIndex,
  catalogDatabase,
  DEFAULT_WEBHOOK_SETTINGS,
  readSessionKey,
  type WebhookSettings,
} from "../runner/index.js";
import { bindTaskRuntime, registerFileToolsOnce, type McpServer } from "../server/mcp-server.js";
import { DEFAULT_MAX_FILE_BYTES, MAX_BODY_BYTES } from "../limits.js";
import { hostPolicy, hostRefusal, type HostPolicy } from "./request-guards.js";
import { RunnerClient } from "../tasks/runner-client.js";
import { RunnerPool } from "../tasks/runner-pool.js";
import { Signer } from "./wire-2025/signing.js";
import { sendTaskEvent, type SendEventInput, type SendEventOptions } from "../tasks/send-event.js";
import { exportTaskHistory, type ExportHistoryOptions } from "../tasks/export-history.js";
import { routeWebhookRequest } from "./webhook-routes.js";
import { answerMcpRequest, type Authenticate, type McpEndpoint, type RequestBinding } from "./mcp-endpoint.js";
import { bearsOperatorToken, resolveOperator, type OperatorSettings } from "../operator/operator-access.js";
import { serveOperator } from "../operator/operator-api.js";
import { bulkDriverOf, defineBulkDriver } from "../operator/bulk-driver.js";
import type { DurableMcp, DurableMcpOptions, FilesOptions, WaitUntil, WebhooksOptions } from "./durable-mcp-options.js";
import { defineTaskLimiter } from "../limiter/index.js";
import { createLimitsOf, resolveLimits, type ResolvedLimits } from "./limits-settings.js";
import { checkNamedLimits } from "../server/task-limits.js";

/**
 * Wires an author's server factory to Workers: the TaskRunner Durable Object class to export, a `fetch` that
 * serves MCP at `path`, and `serve` for mounting the endpoint by hand inside another router.
 * @param createServer - Builds the McpServer for a request (and for each TaskRunner), given the Worker's `env`.
 * @param options - Where MCP is served, who may call (`authenticate`, `allowedHosts`), files, webhooks, limits.
 * @returns The Durable Object classes to export (`TaskRunner`, and `TaskIndex`/`FileRunner` when used), the Worker's
 * `fetch`, `serve` for mounting by hand, `sendEvent` and `exportHistory`.
 * @throws Error - When `files.path` or `webhooks.path` does not start with "/" (its `fetch` and `serve` throw
 * when `env` has no Durable Object binding named `options.binding`).
 * @example
 * ```ts
 * import { durableMcp, McpServer } from "durable-mcp-server";
 *
 * interface Env {
 *   TASK_RUNNER: DurableObjectNamespace;
 * }
 *
 * const mcp = durableMcp((_env: Env) => new McpServer({ name: "reports", version: "1.0.0" }), {
 *   allowedHosts: ["reports.example.workers.dev"],
 * });
 *
 * export const TaskRunner = mcp.TaskRunner;
 * export default { fetch: mcp.fetch } satisfies ExportedHandler<Env>;
 * ```
 */
export function durableMcp<Env>(
  createServer: (env: Env) => McpServer,
  options: DurableMcpOptions<Env> = {},
): DurableMcp<Env> {
  const settings = resolveSettings(options);
  // Every build of the author's server checks the shared limits its tasks name against `limits.named`.
  const buildServer = (env: Env) => {
    const server = createServer(env);
    checkNamedLimits(server, settings.limits.runner.named);
    return server;
  };
  const { bindingName, files, webhooks, taskList, indexBinding, catalogBinding, operator } = settings;
  const FileRunner = defineFileRunner<Env>({ bucket: files?.bucketBinding ?? "FILES" });
  const TaskIndex = defineTaskIndex<Env>();
  const TaskLimiter = defineTaskLimiter<Env>();
  const TaskRunner = defineTaskRunner<Env>({
    registry: buildServer,
    alarmBudgetMs: options.alarmBudgetMs,
    purgeGraceMs: options.purgeGraceMs,
    events: options.events,
    files,
    // The runner takes its task out of its principal's list at purge; session lists drop their entries themselves.
    indexBinding: taskList === "principal" ? indexBinding : undefined,
    webhooks,
    catalogBinding,
    runnerBinding: bindingName,
    limits: settings.limits.runner,
  });
  const endpoint = mcpEndpoint(buildServer, options, settings);

  // Pre-created TaskRunners of this isolate (tasks/runner-pool.ts); only requests that can refill it take from it.
  const runnersFor = runnerClients<Env>(
    bindingName,
    taskList === "off"
      ? undefined
      : { index: indexBinding, catalog: catalogBinding, scope: taskList === "session" ? "session" : "principal" },
    new RunnerPool(),
    settings.limits,
  );
  // Runs bulk jobs without a reader, where bound (operator.driver); the same catalog and runners as the API's.
  const BulkDriver = defineBulkDriver<Env>({
    deps: (env) => ({ db: catalogDatabase(env, catalogBinding), runners: runnersFor(env) }),
  });
  const serveFiles = (request: Request, env: Env) =>
    serveFileRequest(files, endpoint.hosts, options.authenticate, request, env);
  const serveWebhooks = (request: Request, env: Env) =>
    serveWebhookRequest(webhooks, request, env, () => runnersFor(env));
  /** Serves the operator API; its own authentication, never the MCP one. */
  const serveOperatorApi = (request: Request, env: Env, ctx?: WaitUntil) =>
    serveOperator(request, env, operator, {
      db: catalogDatabase(env, catalogBinding),
      runners: () => runnersFor(env),
      waitUntil: ctx ? (promise) => ctx.waitUntil(promise) : undefined,
      driver: bulkDriverOf(env, operator.driverBinding),
      limits: {
        namespace: createLimitsOf(settings.limits, env).namespace,
        named: Object.keys(settings.limits.runner.named),
      },
    });

  /** Serves one MCP request at whatever path it arrived on. */
  async function serve(request: Request, env: Env, ctx?: WaitUntil): Promise<Response> {
    let runners: RunnerClient | undefined;
    const runnersOf = () => (runners = runnersFor(env, ctx !== undefined));
    const response = await answerMcpRequest(endpoint, request, env, runnersOf);
    // A create took an id from the pool (or found it empty): top it up once the answer is out of our hands.
    if (ctx && runners?.refillWanted) ctx.waitUntil(runners.refill());
    return response;
  }

  function sendEvent(env: Env, taskId: string, event: SendEventInput, eventOptions: SendEventOptions) {
    return sendTaskEvent(runnersFor(env), taskId, event, eventOptions);
  }

  const exportHistory = (env: Env, taskId: string, historyOptions: ExportHistoryOptions) =>
    exportTaskHistory(runnersFor(env), taskId, historyOptions);

  async function fetch(request: Request, env: Env, ctx?: WaitUntil): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    if (pathname.startsWith(`${webhooks.path}/`)) return serveWebhooks(request, env);
    if (pathname === operator.path || pathname.startsWith(`${operator.path}/`))
      return serveOperatorApi(request, env, ctx);
    if (files && (pathname === files.path || pathname.startsWith(`${files.path}/`))) return serveFiles(request, env);
    if (pathname !== settings.path) return new Response("Not found", { status: 404 });
    return serve(request, env, ctx);
  }

  return {
    TaskRunner,
    FileRunner,
    TaskIndex,
    TaskLimiter,
    BulkDriver,
    fetch,
    serve,
    serveFiles,
    serveWebhooks,
    serveOperator: serveOperatorApi,
    sendEvent,
    exportHistory,
    handler: endpoint.handler,
  };
}

/** What `durableMcp`'s options resolve to: the bindings' names, the paths, and which list is served. */
interface DeploymentSettings<Env> {
  bindingName: string;
  path: string;
  files: (FilesSettings & { tools: boolean }) | undefined;
  webhooks: WebhookSettings;
  taskList: "principal" | "session" | "off";
  /** The TaskIndex binding, when a list is served. */
  indexBinding: string | undefined;
  secretBinding: string;
  catalogBinding: string | undefined;
  operator: OperatorSettings<Env>;
  limits: ResolvedLimits;
}

/** Resolves `durableMcp`'s options into settings, refusing a combination that cannot be served safely. */
function resolveSettings<Env>(options: DurableMcpOptions<Env>): DeploymentSettings<Env> {
  const bindingName = options.binding ?? "TASK_RUNNER";
  const path = options.path ?? "/mcp";
  const files = resolveFiles(options.files);
  const webhooks = resolveWebhooks(options.webhooks);
  const taskList = options.taskList ?? (options.authenticate ? "principal" : "off");
  if (taskList === "principal" && !options.authenticate) {
    throw new Error(
      'durableMcp: taskList "principal" needs authenticate: without it every caller is one principal, and the list ' +
        'would show anyone every task. Use taskList "session" (docs/api.md)',
    );
  }
  const indexBinding = options.index === false || taskList === "off" ? undefined : (options.index ?? "TASK_INDEX");
  const secretBinding = options.sessionSecret ?? "MCP_SESSION_SECRET";
  const catalogBinding = options.catalog === false ? undefined : (options.catalog ?? "TASK_CATALOG");
  const operator = resolveOperator(options.operator);
  const limits = resolveLimits(options.limits, bindingName);
  return {
    bindingName,
    path,
    files,
    webhooks,
    taskList,
    indexBinding,
    secretBinding,
    catalogBinding,
    operator,
    limits,
  };
}

/**
 * The MCP endpoint of the deployment: the SDK's handler and the bindings it reads, the host policy, and what the
 * isolate builds once (the server's name and version, the task definitions, the session signer).
 */
function mcpEndpoint<Env>(
  createServer: (env: Env) => McpServer,
  options: DurableMcpOptions<Env>,
  settings: DeploymentSettings<Env>,
): McpEndpoint<Env> {
  const { files, bindingName, secretBinding, operator } = settings;
  const withFiles = (server: McpServer) => (files?.tools ? server[registerFileToolsOnce]() : server);
  // The SDK hands the factory the very authInfo object given to fetch (on the 2025 path too, where the Request
  // is rebuilt), so a fresh authInfo per request carries the request's binding.
  const bindings = new WeakMap<AuthInfo, RequestBinding<Env>>();
  const handler = createMcpHandler(({ authInfo }) => {
    const binding = authInfo ? bindings.get(authInfo) : undefined;
    if (!binding) throw new Error("durableMcp: request reached the MCP handler without its binding");
    const { env, ...caller } = binding;
    return withFiles(createServer(env))[bindTaskRuntime](caller);
  }, options.handler);

  // The fast path answers with the server's name and version, as the SDK does; build the server once to learn them.
  let serverInfo: Implementation | undefined;
  // The 2025-11-25 wire reads task definitions only, as the TaskRunner does: one server per isolate.
  let registry: McpServer | undefined;
  // One signer per isolate: the configured secret, or else the deployment's generated key, read once on first use.
  let signer: Signer | undefined;
  return {
    authenticate: options.authenticate,
    taskFastPath: options.taskFastPath !== false,
    hosts: hostPolicy({
      authenticated: options.authenticate !== undefined,
      allowedHosts: options.allowedHosts,
      allowedOrigins: options.allowedOrigins,
    }),
    maxBodyBytes: options.handler?.maxRequestBodySize ?? MAX_BODY_BYTES,
    files,
    handler,
    bindings,
    signerOf: (env) => {
      const secret = (env as Record<string, unknown>)[secretBinding];
      return (signer ??=
        typeof secret === "string"
          ? new Signer(secret)
          : new Signer(undefined, () => readSessionKey(runnerNamespace(env, bindingName))));
    },
    registryOf: (env) => (registry ??= withFiles(createServer(env))),
    serverInfoOf: (env) => (serverInfo ??= createServer(env).serverInfo),
    bearsOperatorToken: (request, env) => bearsOperatorToken(request, env, operator),
  };
}

/** The TaskRunner namespace bound under `bindingName`, or a clear error naming the binding. */
function runnerNamespace<Env>(env: Env, bindingName: string): DurableObjectNamespace {
  const namespace = (env as Record<string, unknown>)[bindingName] as DurableObjectNamespace | undefined;
  if (!namespace || typeof namespace.idFromName !== "function") {
    throw new Error(`durableMcp: no Durable Object binding named "${bindingName}"; see the wrangler.jsonc in the docs`);
  }
  return namespace;
}

/**
 * Makes a request's RunnerClient from the Worker's env: the TaskRunner binding; where a list is served, the task
 * catalog when its D1 is bound (lists from it, nothing indexed) or else the TaskIndex when bound; and the isolate's
 * pool when the request can refill it.
 */
function runnerClients<Env>(
  bindingName: string,
  lists: { index: string | undefined; catalog: string | undefined; scope: "principal" | "session" } | undefined,
  pool: RunnerPool,
  limits: ResolvedLimits,
): (env: Env, withPool?: boolean) => RunnerClient {
  return (env, withPool = false) => {
    const namespace = runnerNamespace(env, bindingName);
    const catalog = lists ? catalogDatabase(env, lists.catalog) : undefined;
    const indexNamespace = lists?.index ? (env as Record<string, unknown>)[lists.index] : undefined;
    const indexed = typeof (indexNamespace as DurableObjectNamespace | undefined)?.idFromName === "function";
    const source = catalog
      ? { catalog, scope: lists!.scope }
      : indexed
        ? { namespace: indexNamespace as DurableObjectNamespace, scope: lists!.scope }
        : undefined;
    return new RunnerClient(namespace, undefined, source, withPool ? pool : undefined, createLimitsOf(limits, env));
  };
}

/** Serves the file endpoints (tus uploads, downloads); mount under `files.path`. */
async function serveFileRequest<Env>(
  files: FilesSettings | undefined,
  hosts: HostPolicy,
  authenticate: Authenticate<Env> | undefined,
  request: Request,
  env: Env,
): Promise<Response> {
  if (!files) return new Response("Not found", { status: 404 });
  const forbidden = hostRefusal(request, hosts);
  if (forbidden) return new Response(`${forbidden.message}\n`, { status: 403, headers: corsHeaders() });
  try {
    const service = FileService.fromEnv(files, env, request.url);
    return await routeFileRequest(request, service, async (req) => {
      const caller = authenticate ? await authenticate(req, env) : { principal: "anonymous" };
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

/** Serves webhook POSTs; they carry their own signature, so no authentication and no host policy apply. */
async function serveWebhookRequest<Env>(
  webhooks: WebhookSettings,
  request: Request,
  env: Env,
  runners: () => RunnerClient,
): Promise<Response> {
  try {
    return await routeWebhookRequest(request, env, webhooks, runners);
  } catch (error) {
    console.error("durableMcp: webhook request failed", {
      url: new URL(request.url).pathname,
      error: error instanceof Error ? error.stack : String(error),
    });
    return new Response("Internal error\n", { status: 500, headers: corsHeaders() });
  }
}

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
    maxSize: given.maxSize ?? DEFAULT_MAX_FILE_BYTES,
    ttlMs: toMilliseconds(given.ttl ?? "24 hours"),
    urlTtlMs: toMilliseconds(given.urlTtl ?? "15 minutes"),
    publicUrl: given.publicUrl?.replace(/\/+$/, ""),
    tools: given.tools ?? true,
  };
}

function resolveWebhooks(option: WebhooksOptions | undefined): WebhookSettings {
  const path = (option?.path ?? DEFAULT_WEBHOOK_SETTINGS.path).replace(/\/+$/, "");
  if (!path.startsWith("/")) {
    throw new Error(`durableMcp: webhooks.path must start with "/" (got ${JSON.stringify(path)})`);
  }
  return {
    path,
    secretBinding: option?.secret ?? DEFAULT_WEBHOOK_SETTINGS.secretBinding,
    publicUrl: option?.publicUrl?.replace(/\/+$/, ""),
  };
}
