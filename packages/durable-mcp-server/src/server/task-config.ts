import type {
  CallToolResult,
  InputRequiredResult,
  McpServerOptions,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { Duration } from "../steps/duration.js";
import type { Step } from "../steps/types.js";

// What an author configures a task tool and a server's tasks with (`registerTask`, `new McpServer(info, { tasks })`).

type InferOutput<S extends StandardSchemaWithJSON> = StandardSchemaWithJSON.InferOutput<S>;

/** What a task handler may return: a CallToolResult, or plain JSON that becomes its text content. */
export type TaskHandlerResult = CallToolResult | Record<string, unknown> | string | number | boolean | null | void;

export type TaskHandler<S extends StandardSchemaWithJSON> = (
  input: InferOutput<S>,
  step: Step,
) => Promise<TaskHandlerResult>;

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
  /** How a request that does not declare the Tasks extension is served; defaults to the server's `tasks.fallback`. */
  fallback?: FallbackPolicy;
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
 * How a task tool serves a request that does not declare the Tasks extension (2025-era clients, and 2026-era ones
 * without it). None of them ever receives a CreateTaskResult.
 * - "refuse": -32021, as the spec requires for task-only tools;
 * - "handle": start the task and return an ordinary CallToolResult carrying the task handle and what to do next
 *   (poll, answer, cancel through the facade tools);
 * - "wait": start the task and wait up to `waitFor` for it; return its result if it finished, else the handle.
 */
export type FallbackPolicy = "refuse" | "handle" | "wait";

/** Server-wide task settings, passed as `new McpServer(info, { tasks: { … } })`. */
export interface TaskServerOptions {
  /** Default fallback policy of this server's task tools. Default "wait". */
  fallback?: FallbackPolicy;
  /** Default wait of the "wait" policy. Default 20 seconds, safely under common 60 s client timeouts. */
  waitFor?: Duration;
  /** Prefix of the facade tools (`<prefix>_get`, `_respond`, `_cancel`). Default "durable_task". */
  facadePrefix?: string;
}

export type DurableMcpServerOptions = McpServerOptions & { tasks?: TaskServerOptions };
