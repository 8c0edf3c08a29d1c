import type {
  CallToolResult,
  InputRequiredResult,
  McpServerOptions,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { Duration } from "../steps/duration.js";
import type { ReplayMode } from "../steps/engine-host.js";
import type { Step } from "../steps/types.js";

// What an author configures a task tool and a server's tasks with (`registerTask`, `new McpServer(info, { tasks })`).

type InferOutput<S extends StandardSchemaWithJSON> = StandardSchemaWithJSON.InferOutput<S>;

/**
 * What a task handler may return: a `CallToolResult` as is, a string or other JSON as text (an object also as
 * `structuredContent`), or nothing.
 * @example
 * ```ts
 * import type { TaskHandlerResult } from "durable-mcp-server";
 *
 * const asText: TaskHandlerResult = "done";
 * const asToolResult: TaskHandlerResult = { content: [{ type: "text", text: "done" }] };
 * const asStructured: TaskHandlerResult = { rows: 3 };
 * ```
 */
export type TaskHandlerResult = CallToolResult | Record<string, unknown> | string | number | boolean | null | void;

/**
 * A task tool's body: called with the validated input and the durable `Step` API, replayed from its journal on
 * every run; what it returns is the tool's result (TaskHandlerResult).
 * @example
 * ```ts
 * import type { TaskHandler } from "durable-mcp-server";
 * import * as z from "zod";
 *
 * const inputSchema = z.object({ to: z.string() });
 * const sendReport: TaskHandler<typeof inputSchema> = async ({ to }, step) => {
 *   const id = await step.do("send", async ({ idempotencyKey }) => `${to}:${idempotencyKey}`);
 *   return `sent ${id}`;
 * };
 * ```
 */
export type TaskHandler<S extends StandardSchemaWithJSON> = (
  input: InferOutput<S>,
  step: Step,
) => Promise<TaskHandlerResult>;

/**
 * How a task tool is registered: the second argument of `server.registerTask(name, config, handler)`.
 * @example
 * ```ts
 * import type { TaskConfig } from "durable-mcp-server";
 * import * as z from "zod";
 *
 * const inputSchema = z.object({ region: z.string() });
 * const config: TaskConfig<typeof inputSchema> = {
 *   description: "Builds a report",
 *   inputSchema,
 *   ttl: "1 day",
 *   fallback: "handle",
 * };
 * ```
 */
export interface TaskConfig<S extends StandardSchemaWithJSON> {
  title?: string;
  description?: string;
  inputSchema: S;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
  /** How long the task stays readable after creation (`ttlMs`); null keeps it until it is purged by hand. */
  ttl?: Duration | null;
  /** The polling interval suggested to clients (`pollIntervalMs`). */
  pollInterval?: Duration;
  /**
   * What the task is filed under in the task catalog, from its validated input: the operator API and the CLI filter
   * on them (`--tag customer=acme`). At most 16 tags of string, number or boolean values (docs/limits.md).
   */
  tags?: (input: InferOutput<S>) => Record<string, string | number | boolean>;
  /** How a request that does not declare the Tasks extension is served; defaults to the server's `tasks.fallback`. */
  fallback?: FallbackPolicy;
  /**
   * What a replay that departs from the journal does (docs/how-it-works.md, "Replay"): "fail" (the default) fails
   * the task on a definite divergence, "warn" completes it with a warning, "strict" also fails a new step still
   * waiting for the replay when the run is quiescent — sound only if every await of the handler is a step.
   */
  replay?: ReplayMode;
  /**
   * How many runs of this task may execute at once (docs/limits.md, "Fair share"): `limit` a positive integer for a
   * limit of its own (per `key` when given: one queue per key value), or the name of a shared limit declared in
   * `durableMcp(…, { limits: { named } })` (then `key` names whose turn it is inside it; default the principal).
   * Over the limit the task is created and waits durably ("queued: N ahead"); a slot is held only while a run executes.
   * An array (up to 4) puts the task under each of them at once: a run takes a slot of every one.
   */
  concurrency?: TaskConcurrency<S> | readonly TaskConcurrency<S>[];
  /**
   * At most `limit` creates of this task per `period` (per `key` when given); over it the create is refused with a
   * repairable error carrying `retryAfter` (seconds). With `queue: true` the create is never refused: the limit counts
   * starts instead (when each task's first step begins), and a task over it is created and waits for its turn.
   */
  rateLimit?: {
    limit: number;
    period: Duration;
    key?: (input: InferOutput<S>, caller: { principal: string }) => string;
    queue?: boolean;
  };
  /** Higher runs first among the waiting tasks of one fairness key (default 0). */
  priority?: (input: InferOutput<S>, caller: { principal: string }) => number;
  /** With `fallback: "wait"`: how long the call waits for the result. Defaults to the server's `tasks.waitFor`. */
  waitFor?: Duration;
  /**
   * Inline results for clients that declare the Tasks extension: the call waits up to this long (at most 10 s,
   * MAX_INLINE_MS) and answers with the ordinary CallToolResult when the task completed by then, otherwise with
   * the task as usual. The task runs on its TaskRunner either way. Off by default (docs/api.md, "Inline results").
   */
  inline?: Duration;
  /**
   * Runs at `tools/call` before the task exists. Return `inputRequired(...)` to ask the client first, in the
   * same request/response round trip (multi-round-trip requests); return `{ input }` to start the task with a
   * different input, or nothing to start it as called.
   */
  beforeStart?: (
    input: InferOutput<S>,
    ctx: ServerContext,
  ) =>
    | Promise<InputRequiredResult | { input: InferOutput<S> } | void>
    | InputRequiredResult
    | { input: InferOutput<S> }
    | void;
}

/**
 * One concurrency limit of a task (`registerTask`'s `concurrency`): `limit` a positive integer for a limit of its own
 * (per `key` value when given), or the name of a shared limit declared in `durableMcp(…, { limits: { named } })`.
 * @example
 * ```ts
 * import type { TaskConcurrency } from "durable-mcp-server";
 * import * as z from "zod";
 *
 * const inputSchema = z.object({ tenant: z.string() });
 * const perTenant: TaskConcurrency<typeof inputSchema> = { limit: 2, key: ({ tenant }) => tenant };
 * ```
 */
export interface TaskConcurrency<S extends StandardSchemaWithJSON> {
  limit: number | string;
  key?: (input: InferOutput<S>, caller: { principal: string }) => string;
}

/**
 * How a task tool serves a request that does not declare the Tasks extension (2025-era clients, and 2026-era ones
 * without it). None of them ever receives a CreateTaskResult.
 * - "refuse": -32021, as the spec requires for task-only tools;
 * - "handle": start the task and return an ordinary CallToolResult carrying the task handle and what to do next
 *   (poll, answer, cancel through the facade tools);
 * - "wait": start the task and wait up to `waitFor` for it; return its result if it finished, else the handle.
 * @example
 * ```ts
 * import type { FallbackPolicy } from "durable-mcp-server";
 *
 * const policy: FallbackPolicy = "handle";
 * ```
 */
export type FallbackPolicy = "refuse" | "handle" | "wait";

/**
 * Server-wide task settings, passed as `new McpServer(info, { tasks: { … } })`.
 * @example
 * ```ts
 * import { McpServer } from "durable-mcp-server";
 *
 * const tasks = { fallback: "wait", waitFor: "30 seconds" } as const;
 * const server = new McpServer({ name: "reports", version: "1.0.0" }, { tasks });
 * ```
 */
export interface TaskServerOptions {
  /** Default fallback policy of this server's task tools. Default "wait". */
  fallback?: FallbackPolicy;
  /** Default wait of the "wait" policy. Default 20 seconds, safely under common 60 s client timeouts. */
  waitFor?: Duration;
  /** Prefix of the facade tools (`<prefix>_get`, `_respond`, `_cancel`). Default "durable_task". */
  facadePrefix?: string;
}

/**
 * The options of `new McpServer(info, options)`: the SDK's server options plus `tasks`, the task settings.
 * @example
 * ```ts
 * import { McpServer, type DurableMcpServerOptions } from "durable-mcp-server";
 *
 * const options: DurableMcpServerOptions = { tasks: { fallback: "wait", waitFor: "20 seconds" } };
 * const server = new McpServer({ name: "reports", version: "1.0.0" }, options);
 * ```
 */
export type DurableMcpServerOptions = McpServerOptions & { tasks?: TaskServerOptions };

/** The replay mode a task is registered with (default "fail"); anything else is a TypeError naming the task. */
export function replayModeOf(name: string, mode: ReplayMode | undefined): ReplayMode {
  if (mode === undefined || mode === "fail" || mode === "warn" || mode === "strict") return mode ?? "fail";
  throw new TypeError(`task "${name}": replay must be "fail", "warn" or "strict", not ${JSON.stringify(mode)}`);
}
