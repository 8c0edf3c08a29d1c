/**
 * Errors of child tasks (`step.invoke`). Their own module, as the event errors are, so that the feature adds to
 * errors/ without touching what the rest of the runtime's errors are built on.
 */

/**
 * How a child task ended without a result its parent can use: it failed (a JSON-RPC error, or a tool-error result),
 * was cancelled, or did not end before the invoke's `timeout`.
 * @example
 * ```ts
 * import type { ChildTaskEnding } from "durable-mcp-server";
 *
 * const worthRetrying = (ending: ChildTaskEnding) => ending === "timed_out";
 * ```
 */
export type ChildTaskEnding = "failed" | "cancelled" | "timed_out";

/**
 * What `step.invoke` throws when its child did not complete: the child's `code` and `message` (its error envelope's
 * or JSON-RPC error's), how it ended, and its task id. Catch it to go on.
 * @example
 * ```ts
 * import { ChildTaskError, type Step } from "durable-mcp-server";
 *
 * async function chartOrNothing(step: Step) {
 *   try {
 *     return await step.invoke("chart", { task: "render_chart", input: { id: 7 }, timeout: "10 minutes" });
 *   } catch (error) {
 *     if (error instanceof ChildTaskError && error.ending === "timed_out") return null;
 *     throw error;
 *   }
 * }
 * ```
 */
export class ChildTaskError extends Error {
  override readonly name = "ChildTaskError";
  /**
   * Built by the runtime from the child's final state.
   * @param step - The label of the invoke step.
   * @param childTaskId - The child's task id.
   * @param ending - How it ended.
   * @param code - The child's error code (an envelope code such as `step_failed`, or a JSON-RPC code).
   * @param message - The child's error message.
   */
  constructor(
    readonly step: string,
    readonly childTaskId: string,
    readonly ending: ChildTaskEnding,
    readonly code: string | number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Why `step.invoke` refused to start a child: `unknown_task` (no task of that name is registered), `invalid_input`
 * (the input fails the task's schema; `issues` lists why), `too_deep` (past MAX_INVOKE_DEPTH), `too_many_children`
 * (past MAX_CHILDREN_PER_TASK). Nothing was started; the refusal is journaled, so a replay throws it again.
 * @example
 * ```ts
 * import type { InvokeRefusal } from "durable-mcp-server";
 *
 * const fixable = (reason: InvokeRefusal) => reason === "invalid_input";
 * ```
 */
export type InvokeRefusal = "unknown_task" | "invalid_input" | "too_deep" | "too_many_children";

/**
 * What `step.invoke` throws at the call when it cannot start the child (InvokeRefusal); nothing was started.
 * @example
 * ```ts
 * import { InvokeError, type Step } from "durable-mcp-server";
 *
 * async function tryInvoke(step: Step) {
 *   try {
 *     return await step.invoke("child", { task: "maybe_missing", input: {} });
 *   } catch (error) {
 *     if (error instanceof InvokeError && error.reason === "unknown_task") return null;
 *     throw error;
 *   }
 * }
 * ```
 */
export class InvokeError extends Error {
  override readonly name = "InvokeError";
  /**
   * Built by the runtime when it refuses to start a child.
   * @param step - The label of the invoke step.
   * @param reason - Why (InvokeRefusal).
   * @param message - What to fix.
   * @param issues - The schema's issues, for `invalid_input`.
   */
  constructor(
    readonly step: string,
    readonly reason: InvokeRefusal,
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}
