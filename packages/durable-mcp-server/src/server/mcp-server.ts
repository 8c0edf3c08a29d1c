import { idempotencyKeyOf } from "../wire/idempotency-key.js";
import {
  isInputRequiredResult,
  McpServer as SdkMcpServer,
  mergeCapabilities,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import { taskIdForKey } from "../ids.js";
import { MAX_INLINE_MS } from "../limits.js";
import { installedRequestHandler, registeredTool } from "./sdk-internals.js";
import { cancelTask, getTask, updateTask } from "../tasks/task-methods.js";
import { taskDefinitionOf, type TaskDefinition, type TaskRegistry } from "../runner/index.js";
import type { CallerContext } from "../tasks/caller-context.js";
import { toMilliseconds, type Duration } from "../steps/duration.js";
import { declaresTasks, REQUIRED_TASKS_CAPABILITY, TaskMethods, TASKS_EXTENSION } from "../wire/protocol.js";
import { declaredCapabilities } from "../wire/input-capabilities.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";
import { registerFacadeTools } from "../fallback/facade-tools.js";
import { registerFileTools } from "../files/file-tools.js";
import { facadeNames, taskViewResult, type FacadeNames } from "../fallback/task-view.js";
import {
  replayModeOf,
  type DurableMcpServerOptions,
  type FallbackPolicy,
  type TaskConfig,
  type TaskHandler,
} from "./task-config.js";
import { invalidArgumentsResult, validateSync } from "./tool-arguments.js";
import { taskLimitsOf } from "./task-limits.js";
import { RateLimitedError } from "../tasks/create-limits.js";

type InferOutput<S extends StandardSchemaWithJSON> = StandardSchemaWithJSON.InferOutput<S>;

/**
 * Keys of the router-only methods of McpServer. Symbols the package does not export: authors cannot call these
 * methods (they do not autocomplete), and the router reaches them without a private-field hack.
 */
export const bindTaskRuntime: unique symbol = Symbol("durable-mcp-server.bindTaskRuntime");
export const registerFileToolsOnce: unique symbol = Symbol("durable-mcp-server.registerFileTools");
/** The router's `tools/call` fast path for task tools (routing/tool-fast-path.ts). */
export const fastTaskCall: unique symbol = Symbol("durable-mcp-server.fastTaskCall");
/** The router's view of a task tool for the 2025-11-25 tasks wire (routing/wire-2025/). */
export const legacyTaskTool: unique symbol = Symbol("durable-mcp-server.legacyTaskTool");

/** What the 2025-11-25 tasks wire needs to know of a task tool. */
export interface LegacyTaskTool {
  definition: TaskDefinition;
  taskSupport: "optional" | "required";
  /** Tools with `beforeStart` start their task only on SEP-2663 (docs/clients.md). */
  hasBeforeStart: boolean;
}

const DEFAULT_TTL_MS = 3_600_000;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
const DEFAULT_WAIT_FOR_MS = 20_000;

interface RegisteredTask extends TaskDefinition {
  fallback: FallbackPolicy;
  waitForMs: number;
  /** 0: no inline result. */
  inlineMs: number;
  beforeStart?: (input: unknown, ctx: ServerContext) => Promise<unknown> | unknown;
}

const taskIdParams = z.object({ taskId: z.string() });

/**
 * The SDK's McpServer plus durable tasks: `registerTask` tools run on a TaskRunner Durable Object each, and the
 * server answers `tasks/get`, `tasks/update` and `tasks/cancel`. Ordinary `registerTool` tools work as before.
 * @example
 * ```ts
 * import { McpServer } from "durable-mcp-server";
 * import * as z from "zod";
 *
 * const server = new McpServer({ name: "reports", version: "1.0.0" });
 * server.registerTask(
 *   "build_report",
 *   { description: "Builds a report", inputSchema: z.object({ region: z.string() }) },
 *   async ({ region }, step) => {
 *     const rows = await step.do("fetch rows", async () => [region, "totals"]);
 *     await step.sleep("cool down", "10 seconds");
 *     return { content: [{ type: "text", text: rows.join("\n") }] };
 *   },
 * );
 * ```
 */
export class McpServer extends SdkMcpServer implements TaskRegistry {
  readonly #tasks = new Map<string, RegisteredTask>();
  readonly #defaults: { fallback: FallbackPolicy; waitForMs: number };
  readonly #facade: FacadeNames;
  readonly #serverInfo: Implementation;
  #facadeRegistered = false;
  #fileToolsRegistered = false;
  #runtime: CallerContext | undefined;

  /**
   * Creates a server; task tools are added with `registerTask`.
   * @param serverInfo - The server's name and version, as the SDK's `McpServer` takes them.
   * @param input - The SDK's server options, plus `tasks` (TaskServerOptions) for the server-wide task settings.
   */
  constructor(serverInfo: Implementation, { tasks, ...options }: DurableMcpServerOptions = {}) {
    super(serverInfo, {
      ...options,
      // Declaring tools here installs the SDK's tools/call handler now, so it can be wrapped below.
      capabilities: mergeCapabilities(options.capabilities ?? {}, { tools: {}, extensions: { [TASKS_EXTENSION]: {} } }),
    });
    this.#serverInfo = serverInfo;
    this.#defaults = {
      fallback: tasks?.fallback ?? "wait",
      waitForMs: toMilliseconds(tasks?.waitFor ?? DEFAULT_WAIT_FOR_MS),
    };
    this.#facade = facadeNames(tasks?.facadePrefix ?? "durable_task");
    const sdkToolsCall = installedRequestHandler(this.server, "tools/call");
    const sdkToolsList = installedRequestHandler(this.server, "tools/list");
    // A client that declares the extension gets native tasks, never handles: the facade tools are not for it.
    this.server.setRequestHandler("tools/list", async (request, ctx) => {
      const listed = await sdkToolsList(request, ctx);
      if (!this.#facadeRegistered || !declaresTasks(ctx.mcpReq.envelope)) return listed;
      const facade = new Set(Object.values(this.#facade));
      return { ...listed, tools: listed.tools.filter((tool) => !facade.has(tool.name)) };
    });
    this.server.setRequestHandler("tools/call", async (request, ctx) => {
      const task = this.#tasks.get(request.params.name);
      if (task) return (await this.#callTask(task, request.params.arguments, ctx)) as CallToolResult;
      // Every tool's argument errors get the same envelope as task tools' (the SDK's own is plain text).
      const invalid = await this.#checkToolArguments(request.params.name, request.params.arguments);
      return (invalid ?? (await sdkToolsCall(request, ctx))) as CallToolResult;
    });
    this.server.setRequestHandler(TaskMethods.get, { params: taskIdParams }, async ({ taskId }, ctx) => {
      const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
      return { ...(await getTask(this.#tasksRuntime(ctx), taskId, meta)) } as Record<string, unknown>;
    });
    this.server.setRequestHandler(TaskMethods.update, { params: taskIdParams }, async ({ taskId }, ctx) => {
      await updateTask(this.#tasksRuntime(ctx), taskId, ctx.mcpReq.inputResponses ?? {});
      return {};
    });
    this.server.setRequestHandler(TaskMethods.cancel, { params: taskIdParams }, async ({ taskId }, ctx) => {
      await cancelTask(this.#tasksRuntime(ctx), taskId);
      return {};
    });
  }

  /** The name and version this server was constructed with (the router's fast path answers with them). */
  get serverInfo(): Implementation {
    return this.#serverInfo;
  }

  /**
   * Registers a durable task tool. It is listed by `tools/list` like any tool; a call from a client that declares
   * the Tasks extension returns a task at once, and `handler` runs on the task's own TaskRunner.
   */
  registerTask<S extends StandardSchemaWithJSON>(name: string, config: TaskConfig<S>, handler: TaskHandler<S>): void {
    if (this.#tasks.has(name)) throw new Error(`a task named "${name}" is already registered`);
    const schema = config.inputSchema;
    const fallback = config.fallback ?? this.#defaults.fallback;
    this.#tasks.set(name, {
      name,
      parseInput: (args) => validateSync(schema, args),
      handler: (input, step) => handler(input as InferOutput<S>, step),
      ttlMs: config.ttl === null ? null : toMilliseconds(config.ttl ?? DEFAULT_TTL_MS),
      pollIntervalMs: toMilliseconds(config.pollInterval ?? DEFAULT_POLL_INTERVAL_MS),
      fallback,
      waitForMs: config.waitFor === undefined ? this.#defaults.waitForMs : toMilliseconds(config.waitFor),
      inlineMs: inlineBudgetMs(name, config.inline),
      beforeStart: config.beforeStart as RegisteredTask["beforeStart"],
      tags: config.tags as RegisteredTask["tags"],
      replay: replayModeOf(name, config.replay),
      limits: taskLimitsOf(name, config, this),
    });
    // Listed through the SDK so tools/list shows the schema; calls never reach this callback (see constructor).
    // Listed under the constraint of S: the callback below never sees typed arguments, so none are inferred.
    const listedSchema: StandardSchemaWithJSON = schema;
    const registered = this.registerTool(
      name,
      {
        title: config.title,
        description: config.description,
        inputSchema: listedSchema,
        annotations: config.annotations,
        _meta: { ...config._meta, [TASKS_EXTENSION]: { taskSupport: fallback === "refuse" ? "required" : "optional" } },
      },
      () => {
        throw new Error(`task tool "${name}" was called outside the task runtime`);
      },
    );
    // The 2025-11-25 tools/list shows it (registerTool takes no `execution`); the SDK strips it on 2026-07-28.
    registered.execution = { taskSupport: fallback === "refuse" ? "required" : "optional" };
    // The facade tools appear once some task can hand a handle to a client without the extension.
    if (fallback !== "refuse" && !this.#facadeRegistered) {
      this.#facadeRegistered = true;
      registerFacadeTools(this, this.#facade, () => this.#boundRuntime());
    }
  }

  /**
   * Registers the file tools (`file_upload_url`, `file_download_url`, `file_upload_open/write/commit`,
   * `file_download_read`, `file_status`). `durableMcp(…, { files })` calls it; calling it again is a no-op.
   */
  [registerFileToolsOnce](): this {
    if (this.#fileToolsRegistered) return this;
    this.#fileToolsRegistered = true;
    registerFileTools(this, () => {
      const runtime = this.#boundRuntime();
      if (!runtime.files) throw new Error("file tools need durableMcp(…, { files: … })");
      return { principal: runtime.principal, files: runtime.files() };
    });
    return this;
  }

  [taskDefinitionOf](name: string): TaskDefinition | undefined {
    return this.#tasks.get(name);
  }

  [legacyTaskTool](name: string): LegacyTaskTool | undefined {
    const task = this.#tasks.get(name);
    if (!task) return undefined;
    const taskSupport = task.fallback === "refuse" ? "required" : "optional";
    return { definition: task, taskSupport, hasBeforeStart: task.beforeStart !== undefined };
  }

  /** Binds the caller and the TaskRunner namespace for one request. Called by the router, not by authors. */
  [bindTaskRuntime](runtime: CallerContext): this {
    this.#runtime = runtime;
    return this;
  }

  /**
   * Starts a task for the router's `tools/call` fast path: a plain call, by a request that declares the extension, of
   * an enabled task tool without `beforeStart`, whose arguments pass the tool's own schema. Null for anything else,
   * which the router then hands to the SDK as before. What it answers is what `#callTask` answers for the same call.
   */
  async [fastTaskCall](
    name: string,
    args: unknown,
    envelope: Record<string, unknown>,
    origin: string,
    runtime: CallerContext,
  ): Promise<Record<string, unknown> | null> {
    const task = this.#tasks.get(name);
    if (!task || task.beforeStart || !registeredTool(this, name)?.enabled) return null;
    const parsed = task.parseInput(args ?? {});
    if (!parsed.ok) return null;
    const access = { taskId: runtime.runners.newTaskId(), principal: runtime.principal };
    const capabilities = declaredCapabilities(envelope);
    const created = await this.#create(task, parsed.value, access, runtime, origin, capabilities).catch(refused);
    return this.#declaredResult(task, created, access, runtime);
  }

  async #callTask(task: RegisteredTask, args: unknown, ctx: ServerContext): Promise<unknown> {
    const declared = declaresTasks(ctx.mcpReq.envelope);
    if (!declared && task.fallback === "refuse") {
      throw new MissingRequiredClientCapabilityError(REQUIRED_TASKS_CAPABILITY);
    }
    const runtime = this.#boundRuntime();
    const parsed = task.parseInput(args ?? {});
    // A tool error, not -32602, on both wires: the model can repair its arguments (and no task is created).
    if (!parsed.ok) return invalidArgumentsResult(task.name, parsed.issues);
    let input = parsed.value;
    if (task.beforeStart) {
      const prepared = await task.beforeStart(input, ctx);
      if (isInputRequiredResult(prepared)) return prepared;
      if (prepared && typeof prepared === "object" && "input" in prepared) input = prepared.input;
    }
    const key = idempotencyKeyOf(ctx.mcpReq._meta as Record<string, unknown> | undefined, ctx.http?.req?.headers);
    const taskId =
      key === undefined ? runtime.runners.newTaskId() : await taskIdForKey(runtime.principal, task.name, key);
    const access = { taskId, principal: runtime.principal };
    // What this client can answer: a task-capable request's own declaration. Without the extension the task's
    // questions reach the model through the facade tools, which can answer every kind (null).
    const capabilities = declared ? declaredCapabilities(ctx.mcpReq.envelope) : null;
    let created: Task;
    try {
      created = await this.#create(task, input, access, runtime, originOf(ctx), capabilities);
    } catch (error) {
      // Over a rate limit: a JSON-RPC error for a task client, the repairable envelope for the fallback.
      if (error instanceof RateLimitedError && !declared) return error.toToolResult();
      return refused(error);
    }
    if (declared) return this.#declaredResult(task, created, access, runtime);
    // A client without the extension never sees a task: it gets the result, or a handle it can follow with
    // the facade tools.
    const settled =
      task.fallback === "wait"
        ? await runtime.runners.awaitSettled(access, task.waitForMs)
        : await runtime.runners.get(access);
    if (!settled) throw new Error(`task ${access.taskId} vanished right after it was created`);
    return taskViewResult(settled, task.name, this.#facade);
  }

  async #create(
    task: RegisteredTask,
    input: unknown,
    access: { taskId: string; principal: string },
    runtime: CallerContext,
    origin: string | null,
    clientCapabilities: ClientCapabilities | null,
  ): Promise<Task> {
    const created = await runtime.runners.create(
      {
        ...access,
        tool: task.name,
        input: JSON.stringify(input ?? null),
        ttlMs: task.ttlMs,
        pollIntervalMs: task.pollIntervalMs,
        origin,
        clientCapabilities,
      },
      undefined,
      task.limits,
    );
    if (!created) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        "This idempotency key was already used for a call with other arguments",
        {
          reason: "idempotency_key_reused",
        },
      );
    }
    return created;
  }

  /** What a client that declares the extension gets: the task, or with `inline` its result when it came in time. */
  async #declaredResult(
    task: RegisteredTask,
    created: Task,
    access: { taskId: string; principal: string },
    runtime: CallerContext,
  ): Promise<Record<string, unknown>> {
    if (task.inlineMs === 0) return { ...created, resultType: "task" };
    // Inline: the ordinary result if the task completes within the budget, else the task as it stands then.
    const settled = await runtime.runners.awaitSettled(access, task.inlineMs);
    if (!settled) throw new Error(`task ${access.taskId} vanished right after it was created`);
    // A completed task's result as the call's own (the same view the fallback gives: `_meta` names the task).
    if (settled.status === "completed") return taskViewResult(settled, task.name, this.#facade);
    return { ...taskOnly(settled), resultType: "task" };
  }

  /**
   * Validates a registered tool's arguments against its input schema, as the SDK is about to; null when they pass
   * or the tool is unknown or disabled (the SDK answers those itself).
   */
  async #checkToolArguments(name: string, args: unknown): Promise<CallToolResult | null> {
    const tool = registeredTool(this, name);
    if (!tool?.enabled || !tool.inputSchema) return null;
    const result = await tool.inputSchema["~standard"].validate(args ?? {});
    return result.issues ? invalidArgumentsResult(name, result.issues) : null;
  }

  /** The runtime of a `tasks/*` request, which must declare the extension. */
  #tasksRuntime(ctx: ServerContext): CallerContext {
    if (!declaresTasks(ctx.mcpReq.envelope)) {
      throw new MissingRequiredClientCapabilityError(REQUIRED_TASKS_CAPABILITY);
    }
    return this.#boundRuntime();
  }

  #boundRuntime(): CallerContext {
    if (!this.#runtime) {
      throw new Error("this McpServer is not served by durableMcp(): task tools need a TaskRunner binding");
    }
    return this.#runtime;
  }
}

/** A task's `inline` option in milliseconds (0: off); a RangeError above MAX_INLINE_MS. */
function inlineBudgetMs(name: string, inline: Duration | undefined): number {
  if (inline === undefined) return 0;
  const ms = toMilliseconds(inline);
  if (ms > MAX_INLINE_MS) {
    throw new RangeError(`task "${name}": inline may be at most ${MAX_INLINE_MS} ms, got ${ms} ms`);
  }
  return ms;
}

/** The Task fields of a DetailedTask: what a CreateTaskResult carries (tasks/get carries the rest). */
function taskOnly(task: DetailedTask): Record<string, unknown> {
  const { inputRequests: _inputs, result: _result, error: _error, ...rest } = task;
  return rest;
}

/** Rethrows a create's error, a rate limit's as the JSON-RPC error a task client gets. */
function refused(error: unknown): never {
  throw error instanceof RateLimitedError ? error.toProtocolError() : error;
}

function originOf(ctx: ServerContext): string | null {
  const url = ctx.http?.req?.url;
  return url ? new URL(url).origin : null;
}
