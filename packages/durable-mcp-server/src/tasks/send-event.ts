import { EventRefusedError } from "../errors/event-errors.js";
import { isTaskIdShape } from "../ids.js";
import { MAX_EVENT_TYPE_LENGTH } from "../limits.js";
import { eventPayloadProblem } from "../runner/index.js";
import type { RunnerClient } from "./runner-client.js";

/**
 * An event as the Worker's code sends it.
 * @example
 * ```ts
 * import type { SendEventInput } from "durable-mcp-server";
 *
 * const event: SendEventInput = { type: "payment.settled", payload: { amount: 120 } };
 * ```
 */
export interface SendEventInput {
  type: string;
  /** Any JSON value (default null). */
  payload?: unknown;
}

/**
 * Whose task the event may reach, a required choice: `{ principal }`, the caller's (another principal's task is
 * refused as `unknown_task`, as an unknown one); or `{ trustedSender: true }`, for the Worker's own server-side code
 * that may reach any task whose id it holds (a queue consumer, a cron) — never for a route that relays a caller's
 * request.
 * @example
 * ```ts
 * import type { SendEventOptions } from "durable-mcp-server";
 *
 * const fromCaller: SendEventOptions = { principal: "user:42" };
 * const fromCron: SendEventOptions = { trustedSender: true };
 * ```
 */
export type SendEventOptions =
  | { principal: string; trustedSender?: never }
  | { trustedSender: true; principal?: never };

/**
 * What a sent event did: a waiting step (`step`, its label) took it, or the task keeps it for a later wait.
 * @example
 * ```ts
 * import type { SendEventResult } from "durable-mcp-server";
 *
 * const describe = (result: SendEventResult) => (result.outcome === "delivered" ? `taken by ${result.step}` : "kept");
 * ```
 */
export type SendEventResult = { outcome: "delivered"; step: string } | { outcome: "buffered" };

/**
 * Sends an event to task `taskId` (`mcp.sendEvent`, the testing kit's `sendEvent`). Checked here, before any
 * Durable Object is reached: the type, the payload (JSON, at most MAX_EVENT_PAYLOAD_BYTES and MAX_JSON_DEPTH levels deep) and the id's
 * shape (the TaskRunner checks the payload again). Every
 * refusal is an EventRefusedError; nothing was changed then.
 */
export async function sendTaskEvent(
  runners: RunnerClient,
  taskId: string,
  event: SendEventInput,
  options: SendEventOptions,
): Promise<SendEventResult> {
  const principal = senderPrincipal(options);
  const type = (event as Partial<SendEventInput> | null)?.type;
  if (typeof type !== "string" || type.length === 0 || type.length > MAX_EVENT_TYPE_LENGTH) {
    throw new EventRefusedError(
      "invalid_event",
      `an event type must be a string of 1 to ${MAX_EVENT_TYPE_LENGTH} characters`,
    );
  }
  let payload: string | undefined;
  try {
    payload = JSON.stringify(event.payload ?? null);
  } catch (error) {
    throw new EventRefusedError("invalid_event", `the payload is not JSON: ${(error as Error).message}`);
  }
  if (payload === undefined) throw new EventRefusedError("invalid_event", "the payload is not JSON");
  const problem = eventPayloadProblem(payload);
  if (problem) throw new EventRefusedError(problem.refused, problem.message);
  if (!isTaskIdShape(taskId)) throw new EventRefusedError("unknown_task", `no task ${String(taskId)}`);
  const outcome = await runners.sendEvent(taskId, { type, payload }, principal);
  if ("refused" in outcome) throw new EventRefusedError(outcome.refused, outcome.message);
  return outcome;
}

/** The principal the task must belong to, or undefined for a trusted sender; refuses anything but one of the two. */
function senderPrincipal(options: SendEventOptions | undefined): string | undefined {
  const { principal, trustedSender } = (options ?? {}) as { principal?: unknown; trustedSender?: unknown };
  if (typeof principal === "string" && trustedSender === undefined) return principal;
  if (trustedSender === true && principal === undefined) return undefined;
  throw new EventRefusedError(
    "invalid_event",
    "sendEvent needs whose task it may reach: { principal } (the caller's, a string) or { trustedSender: true } " +
      "(server-side code that may reach any task), not both",
  );
}
