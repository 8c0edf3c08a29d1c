import type { CreateMcpHandlerOptions, createMcpHandler } from "@modelcontextprotocol/server";
import type { FileRunnerClass } from "../file-runner/index.js";
import type { OperatorOptions } from "../operator/operator-access.js";
import type { TaskIndexClass, TaskRunnerClass } from "../runner/index.js";
import type { TaskLimiterClass } from "../limiter/index.js";
import type { BulkDriverClass } from "../operator/bulk-driver.js";
import type { Duration } from "../steps/duration.js";
import type { SendEventInput, SendEventOptions, SendEventResult } from "../tasks/send-event.js";
import type { ExportHistoryOptions } from "../tasks/export-history.js";
import type { TaskHistory } from "../steps/history-format.js";
import type { TaskEventLevel } from "../task-events.js";
import type { Authenticate } from "./mcp-endpoint.js";

// What an author deploys with (`durableMcp(createServer, options)`) and what it hands back: the types of the
// deployment, apart from the code that builds it (durable-mcp.ts).

/**
 * The second argument of `durableMcp`: where MCP is served, who may call, and the optional parts (files,
 * webhooks, the task index).
 * @example
 * ```ts
 * import { durableMcp, McpServer, type DurableMcpOptions } from "durable-mcp-server";
 *
 * interface Env {
 *   TASK_RUNNER: DurableObjectNamespace;
 * }
 *
 * const options: DurableMcpOptions<Env> = {
 *   path: "/mcp",
 *   allowedHosts: ["reports.example.workers.dev"],
 *   authenticate: (request) => ({ principal: request.headers.get("X-User") ?? "anonymous" }),
 *   events: "task",
 * };
 * const mcp = durableMcp((_env: Env) => new McpServer({ name: "reports", version: "1.0.0" }), options);
 * ```
 */
export interface DurableMcpOptions<Env> {
  /** Name of the TaskRunner Durable Object binding in wrangler.jsonc. Default "TASK_RUNNER". */
  binding?: string;
  /** Path the default `fetch` serves MCP on. Default "/mcp". */
  path?: string;
  /** Without it every caller is the principal "anonymous": use only for servers that need no auth. */
  authenticate?: Authenticate<Env>;
  /**
   * Hostnames (no port) this server may be reached at, besides loopback (localhost, 127.0.0.1, [::1]): a request
   * with any other Host header is refused 403 (DNS-rebinding protection). Without `authenticate` only loopback
   * is allowed by default, so a deployed Worker without `authenticate` must list its hostnames here. With
   * `authenticate`, Hosts are checked only when this is given.
   */
  allowedHosts?: string[];
  /**
   * Hostnames (no scheme, no port) of browser origins allowed to call, besides loopback and `allowedHosts`: a
   * request whose Origin header names any other is refused 403. A request without Origin always passes. Without
   * `authenticate` this is checked by default; with it, only when this or `allowedHosts` is given.
   */
  allowedOrigins?: string[];
  /** Passed to the SDK's `createMcpHandler`; its `maxRequestBodySize` bounds every path's JSON body. */
  handler?: CreateMcpHandlerOptions;
  /** A TaskRunner run hands off to a fresh alarm after this long (default 10 minutes). */
  alarmBudgetMs?: number;
  /** Finished tasks stay readable this long past their TTL before they are purged (default 60 s). */
  purgeGraceMs?: number;
  /**
   * Which task events are logged as JSON lines: "problems" (default: warnings, errors, tasks that failed), "task"
   * (plus each task's lifecycle), "all" (plus every step), "none".
   */
  events?: TaskEventLevel;
  /**
   * Answer well-formed `tasks/get|update|cancel`, and a plain `tools/call` of a task tool (the create), straight from
   * the TaskRunner, skipping the SDK's per-request server (default true). Anything not on that happy path goes
   * through the SDK either way.
   */
  taskFastPath?: boolean;
  /**
   * Files by handle: the FileRunner class, the tus upload and download endpoints under `files.path`, and the file
   * tools for the model. Needs a FileRunner Durable Object binding, an R2 bucket and a signing secret.
   */
  files?: FilesOptions | boolean;
  /**
   * Secret binding (≥ 32 characters) that signs 2025-11-25 session ids, question ids and `tasks/list` cursors.
   * Default "MCP_SESSION_SECRET"; without it, a key the deployment generates once and keeps in its TaskRunner
   * namespace (one object, SESSION_KEY_OBJECT) signs them, the same on every instance (docs/deploy.md, rotation).
   */
  sessionSecret?: string;
  /**
   * TaskIndex Durable Object binding behind the 2025-11-25 `tasks/list` where no task catalog is bound. Default
   * "TASK_INDEX". Where the `catalog` D1 is bound, lists are read from it and the index is neither written nor read;
   * with neither binding (or `false` and no catalog), tasks are not indexed and `tasks/list` is neither advertised
   * nor served.
   */
  index?: string | false;
  /**
   * Which tasks the 2025-11-25 `tasks/list` shows (from the `catalog` where bound, else the `index` binding). "principal": every task of the caller's
   * principal (the default with `authenticate`; refused without it, where every caller is the one principal
   * "anonymous" and a list would hand anyone every task id). "session": only the tasks created in the same 2025
   * session (an opt-in for servers without `authenticate`: whoever holds the session id sees them). "off": neither
   * advertised nor served, nothing indexed (the default without `authenticate`).
   */
  taskList?: "principal" | "session" | "off";
  /** Webhook URLs of `step.webhookUrl`: where they are served and which secret signs them. */
  webhooks?: WebhooksOptions;
  /**
   * The task catalog's D1 binding (design/operations.md): every TaskRunner writes its task's row there after each
   * change, off the request's path, and the 2025-11-25 `tasks/list` is read from it (nothing indexed at create).
   * Default "TASK_CATALOG"; without such a binding (or `false`) nothing is written, lists come from the `index`,
   * and the operator API says the catalog is off.
   */
  catalog?: string | false;
  /**
   * The operator API (docs/operations.md) under `operator.path` (default "/operator"), authenticated apart from MCP
   * callers by `authenticate` or a `token` secret binding. Left out, it is served on loopback Hosts only (wrangler
   * dev); `false` turns it off everywhere.
   */
  operator?: OperatorOptions<Env> | false;
  /**
   * Fair share (docs/limits.md): shared named concurrency limits tasks can name (`concurrency: { limit: "crawl-api" }`),
   * and per-principal defaults. Needs the TaskLimiter Durable Object bound under `limits.binding`.
   */
  limits?: LimitsOptions;
}

/**
 * `durableMcp(…, { limits })`: concurrency and rate limits beyond each task's own (docs/limits.md, "Fair share").
 * @example
 * ```ts
 * import type { LimitsOptions } from "durable-mcp-server";
 *
 * const limits: LimitsOptions = {
 *   named: { "crawl-api": { concurrent: 5 } },
 *   perPrincipal: { concurrent: 10, createsPerMinute: 60 },
 * };
 * ```
 */
export interface LimitsOptions {
  /** The TaskLimiter Durable Object binding (export `mcp.TaskLimiter` under its `class_name`). Default "TASK_LIMITER". */
  binding?: string;
  /** Shared limits by name: at most `concurrent` runs of all the tasks naming one execute at once. */
  named?: Record<string, { concurrent: number }>;
  /**
   * Per principal: at most `concurrent` runs at once of its tasks that have no concurrency limit of their own (of
   * every task, besides its own limits, with `appliesTo: "every-task"`), and at most `createsPerMinute` creates of
   * any task tool in any 60 s.
   */
  perPrincipal?: { concurrent?: number; createsPerMinute?: number; appliesTo?: "unlimited-tasks" | "every-task" };
}

/**
 * `durableMcp(…, { webhooks })`: where the signed URLs of `step.webhookUrl` are served.
 * @example
 * ```ts
 * import type { WebhooksOptions } from "durable-mcp-server";
 *
 * const webhooks: WebhooksOptions = { path: "/hooks", publicUrl: "https://reports.example.com" };
 * ```
 */
export interface WebhooksOptions {
  /**
   * Env binding of the secret (≥ 32 characters) that signs webhook URLs. Default "WEBHOOK_URL_SECRET"; naming the
   * files secret ("FILE_URL_SECRET") shares it safely (the two sign different messages).
   */
  secret?: string;
  /** Where `fetch` serves them (mount `serveWebhooks` there by hand). Default "/webhooks". */
  path?: string;
  /** Origin for the URLs handed out (behind a proxy); default the origin the task was created at. */
  publicUrl?: string;
}

/**
 * `durableMcp(…, { files })`: files by handle, stored in R2 (docs/files.md).
 * @example
 * ```ts
 * import type { FilesOptions } from "durable-mcp-server";
 *
 * const files: FilesOptions = { bucket: "FILES", maxSize: 100 * 1024 * 1024, ttl: "1 day" };
 * ```
 */
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

/**
 * What `serve`/`fetch` use of the Worker's execution context: only `waitUntil` (to prepare TaskRunners after a reply),
 * so a framework's own context type (Hono's `c.executionCtx`) fits as well as the platform's `ExecutionContext`.
 * @example
 * ```ts
 * import type { WaitUntil } from "durable-mcp-server";
 *
 * const ctx: WaitUntil = { waitUntil: (promise) => void promise.catch(() => {}) };
 * ```
 */
export type WaitUntil = Pick<ExecutionContext, "waitUntil">;

/**
 * What `durableMcp` returns: the Durable Object classes to export from the Worker, and the ways to serve requests
 * and send events.
 * @example
 * ```ts
 * import { durableMcp, McpServer, type DurableMcp } from "durable-mcp-server";
 *
 * interface Env {
 *   TASK_RUNNER: DurableObjectNamespace;
 * }
 *
 * const mcp: DurableMcp<Env> = durableMcp((_env: Env) => new McpServer({ name: "reports", version: "1.0.0" }));
 *
 * export const TaskRunner = mcp.TaskRunner;
 * export default {
 *   async fetch(request, env, ctx) {
 *     if (new URL(request.url).pathname === "/health") return new Response("ok");
 *     return mcp.fetch(request, env, ctx);
 *   },
 * } satisfies ExportedHandler<Env>;
 * ```
 */
export interface DurableMcp<Env> {
  /** The TaskRunner Durable Object class: export it from the Worker under the `class_name` of its binding. */
  TaskRunner: TaskRunnerClass<Env>;
  /** The FileRunner Durable Object class (files by handle); export it when `files` is on. */
  FileRunner: FileRunnerClass<Env>;
  /** The per-principal TaskIndex Durable Object class (2025-11-25 `tasks/list`); export it under its binding. */
  TaskIndex: TaskIndexClass<Env>;
  /** The TaskLimiter Durable Object class (concurrency and rate limits); export it when tasks declare limits. */
  TaskLimiter: TaskLimiterClass<Env>;
  /** The BulkDriver Durable Object class (bulk operator jobs run to their end unread); export it under its binding. */
  BulkDriver: BulkDriverClass<Env>;
  /**
   * Serves MCP at `path` and, with `files`, the file endpoints under `files.path`; 404 elsewhere. Given the Worker's
   * `ctx`, task creates use pre-created TaskRunners, refilled after each reply (`ctx.waitUntil`).
   */
  fetch(request: Request, env: Env, ctx?: WaitUntil): Promise<Response>;
  /** Serves one MCP request at whatever path it arrived on (for mounting inside another router); `ctx` as for fetch. */
  serve(request: Request, env: Env, ctx?: WaitUntil): Promise<Response>;
  /** Serves the file endpoints (tus uploads, downloads); mount under `files.path`. */
  serveFiles(request: Request, env: Env): Promise<Response>;
  /** Serves webhook POSTs (`step.webhookUrl`); mount under `webhooks.path`. */
  serveWebhooks(request: Request, env: Env): Promise<Response>;
  /** Serves the operator API; mount under `operator.path`. `ctx` lets bulk actions run on after the reply. */
  serveOperator(request: Request, env: Env, ctx?: WaitUntil): Promise<Response>;
  /**
   * Sends an event to a task from the Worker's own code (no MCP credentials are checked). `options` says whose task
   * it may reach: `{ principal }` (another's is refused as unknown) or `{ trustedSender: true }` (any task by id).
   * The oldest `step.waitForEvent` of its type takes it, or the task keeps it for a later one. Throws
   * EventRefusedError (unknown or foreign task; finished task; full buffer; payload too large; invalid event).
   */
  sendEvent(env: Env, taskId: string, event: SendEventInput, options: SendEventOptions): Promise<SendEventResult>;
  /**
   * Exports task `taskId`'s history from the Worker's own code (operators only: no MCP method reaches it), for
   * `replayHistory` (durable-mcp-server/testing). `options` says whose task it may read, as for `sendEvent`. Throws
   * TaskHistoryError (`unknown_task`: unknown or foreign; `too_large`: over MAX_HISTORY_BYTES).
   */
  exportHistory(env: Env, taskId: string, options: ExportHistoryOptions): Promise<TaskHistory>;
  /** The SDK's handler underneath, as `createMcpHandler` returned it. */
  handler: ReturnType<typeof createMcpHandler>;
}
