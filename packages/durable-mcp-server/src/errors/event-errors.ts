/**
 * Errors of external events (`step.waitForEvent`, `mcp.sendEvent`, webhook URLs). Their own module so that the
 * event feature adds to errors/ without touching what the rest of the runtime's errors are built on.
 */

/**
 * What `step.waitForEvent` throws when its timeout passed before an event of its type arrived. Catch it to go on.
 * @example
 * ```ts
 * import { EventTimeoutError, type Step } from "durable-mcp-server";
 *
 * async function awaitApproval(step: Step) {
 *   try {
 *     return (await step.waitForEvent("approval", { type: "approved", timeout: "1 day" })).payload;
 *   } catch (error) {
 *     if (error instanceof EventTimeoutError) return null;
 *     throw error;
 *   }
 * }
 * ```
 */
export class EventTimeoutError extends Error {
  override readonly name = "EventTimeoutError";
  /**
   * Built by the runtime when the wait's timeout passes.
   * @param step - The label of the waiting step.
   * @param type - The event type it waited for.
   */
  constructor(
    readonly step: string,
    readonly type: string,
  ) {
    super(`no event "${type}" arrived for step "${step}" before its timeout`);
  }
}

/**
 * Why `mcp.sendEvent` refused an event. `unknown_task`: no such task, or (with `principal`) another principal's —
 * the two are told apart by no one; `task_finished`: it completed, failed or was cancelled; `buffer_full`: the task
 * keeps as many events as docs/limits.md allows and no wait took one yet; `payload_too_large`: over the payload
 * limit; `invalid_event`: a type or payload that is not what an event is (an empty type, a payload not JSON).
 * @example
 * ```ts
 * import type { EventRefusal } from "durable-mcp-server";
 *
 * const retryLater = (reason: EventRefusal) => reason === "buffer_full";
 * ```
 */
export type EventRefusal = "unknown_task" | "task_finished" | "buffer_full" | "payload_too_large" | "invalid_event";

/**
 * Thrown by `mcp.sendEvent` (and the testing kit's `sendEvent`) when the event was not taken; nothing changed.
 * @example
 * ```ts
 * import { EventRefusedError, type DurableMcp } from "durable-mcp-server";
 *
 * async function notify(mcp: DurableMcp<unknown>, env: unknown, taskId: string) {
 *   try {
 *     await mcp.sendEvent(env, taskId, { type: "approved" }, { principal: "user:42" });
 *   } catch (error) {
 *     if (error instanceof EventRefusedError && error.reason === "task_finished") return;
 *     throw error;
 *   }
 * }
 * ```
 */
export class EventRefusedError extends Error {
  override readonly name = "EventRefusedError";
  /**
   * Built by `sendEvent` when the event is not taken.
   * @param reason - Why the event was refused (EventRefusal).
   * @param message - What to tell the sender.
   */
  constructor(
    readonly reason: EventRefusal,
    message: string,
  ) {
    super(message);
  }
}
