/**
 * The `_meta` keys this runtime defines, all under its own `durable-mcp-server/` prefix. Keys the MCP spec or the
 * Tasks extension define (`io.modelcontextprotocol/…`) are imported from the SDK where it exports them
 * (`CLIENT_CAPABILITIES_META_KEY`, `PROTOCOL_VERSION_META_KEY`, `SERVER_INFO_META_KEY`, `SUBSCRIPTION_ID_META_KEY`,
 * …), never spelled out again here.
 */

/**
 * A caller makes a task-starting call idempotent with `params._meta["durable-mcp-server/idempotencyKey"]` (or an
 * `Idempotency-Key` HTTP header): repeating the call joins the task it started instead of starting another.
 * @example
 * ```ts
 * import { IDEMPOTENCY_KEY_META } from "durable-mcp-server";
 *
 * const _meta = { [IDEMPOTENCY_KEY_META]: "order-42" };
 * const params = { name: "build_report", arguments: { region: "emea" }, _meta };
 * ```
 */
export const IDEMPOTENCY_KEY_META = "durable-mcp-server/idempotencyKey";

/**
 * Progress reported by `step.status(..., { progress })`, carried in a task's `_meta` under this key.
 * @example
 * ```ts
 * import { PROGRESS_META, type Task } from "durable-mcp-server";
 *
 * const progressOf = (task: Task) => task._meta?.[PROGRESS_META] as number | undefined;
 * ```
 */
export const PROGRESS_META = "durable-mcp-server/progress";

/**
 * A `tasks/get` whose `_meta` sets this to true gets the step timeline back under the same key of the result's
 * `_meta`: `{ total, steps: [{ name, kind, state, attempts, startedAt, updatedAt, durationMs }] }` (the last
 * `TIMELINE_LIMIT`, limits.ts).
 * @example
 * ```ts
 * import { STEPS_META } from "durable-mcp-server";
 *
 * const params = { taskId: "…", _meta: { [STEPS_META]: true } };
 * ```
 */
export const STEPS_META = "durable-mcp-server/steps";

/**
 * A task restarted or retried by an operator, and its original, carry their links under this `_meta` key: on the new
 * task `restartedFrom` (the original's id and the step label it re-ran from) or `retriedFrom` (the original's id); on
 * the original `restartedAs` and `retriedAs`, a list each of the new tasks with when they were asked for
 * (docs/operations.md).
 * @example
 * ```ts
 * import { LINKS_META, type Task } from "durable-mcp-server";
 *
 * const originalOf = (task: Task) => (task._meta?.[LINKS_META] as { restartedFrom?: { taskId: string } })?.restartedFrom;
 * ```
 */
export const LINKS_META = "durable-mcp-server/links";

/** The task a fallback handle or a facade tool's result is about (clients without the Tasks extension). */
export const TASK_ID_META = "durable-mcp-server/taskId";

/** On a file tool's ready result: `{ handle, sha256 }` of the file, for hosts that pass files on by handle. */
export const FILE_META = "durable-mcp-server/file";
