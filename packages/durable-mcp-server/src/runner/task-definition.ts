import type { StandardSchemaV1 } from "@modelcontextprotocol/server";
import type { ReplayMode } from "../steps/engine-host.js";
import type { Step } from "../steps/types.js";

/** What a TaskRunner needs to know about a registered task to create and run it. */
export interface TaskDefinition {
  name: string;
  /** Validates tool arguments; returns the handler's input or the schema issues it was refused for. */
  parseInput(args: unknown): { ok: true; value: unknown } | { ok: false; issues: readonly StandardSchemaV1.Issue[] };
  handler: (input: unknown, step: Step) => Promise<unknown>;
  ttlMs: number | null;
  pollIntervalMs: number;
  /** What the task is filed under in the catalog, from its validated input (`registerTask`'s `tags`). */
  tags?: (input: unknown) => unknown;
  /** What a replay that departs from the journal does; absent: "fail". */
  replay?: ReplayMode;
  /** The task's declared fair-share limits (registerTask's `concurrency`, `rateLimit`, `priority`), checked. */
  limits?: TaskLimits;
}

/** What a limit's `key` (or `priority`) function is called with besides the input. */
export interface LimitCaller {
  principal: string;
}

/** A limit key (or priority) from a task's input and caller; its answer is checked where it is used. */
export type LimitFunction = (input: unknown, caller: LimitCaller) => unknown;

/** One concurrency limit of a task: its own (`limit`: how many run at once), or a shared named one (`named`). */
export type ConcurrencyLimit = { limit: number; key?: LimitFunction } | { named: string; key?: LimitFunction };

/** A task's limits as registration checked them: counts are positive integers, periods in milliseconds. */
export interface TaskLimits {
  /** Every concurrency limit the task is under (a run takes a slot of each). */
  concurrency?: ConcurrencyLimit | ConcurrencyLimit[];
  /** With `queue`, over the limit the task is created and waits for its start; without, the create is refused. */
  rateLimit?: { limit: number; periodMs: number; key?: LimitFunction; queue?: boolean };
  priority?: LimitFunction;
}

/**
 * The key of the one registry method the TaskRunner calls. A symbol not exported from the package, so the method is
 * no part of the author-facing `McpServer` surface (it does not even autocomplete), yet lives beside the runner that
 * needs it rather than in the server above it.
 */
export const taskDefinitionOf: unique symbol = Symbol("durable-mcp-server.taskDefinitionOf");

/** Anything that can name its task definitions: the author's McpServer. */
export interface TaskRegistry {
  [taskDefinitionOf](name: string): TaskDefinition | undefined;
}
