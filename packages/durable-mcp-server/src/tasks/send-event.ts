import { EventRefusedError } from "../errors/event-errors.js";
import { isTaskIdShape } from "../ids.js";
import { MAX_EVENT_PAYLOAD_BYTES, MAX_EVENT_TYPE_LENGTH } from "../limits.js";
import type { RunnerClient } from "./runner-client.js";

/** An event as the Worker's code sends it. */
export interface SendEventInput {
  type: string;
  /** Any JSON value (default null). */
  payload?: unknown;
}

export interface SendEventOptions {
  /** Deliver only if the task belongs to this principal; another's task is refused as `unknown_task`. */
  principal?: string;
}

/** What a sent event did: a waiting step (`step`, its label) took it, or the task keeps it for a later wait. */
export type SendEventResult = { outcome: "delivered"; step: string } | { outcome: "buffered" };

/**
 * Sends an event to task `taskId` (`mcp.sendEvent`, the testing kit's `sendEvent`). Checked here, before any
 * Durable Object is reached: the type, the payload (JSON, at most MAX_EVENT_PAYLOAD_BYTES) and the id's shape. Every
 * refusal is an EventRefusedError; nothing was changed then.
 */
export async function sendTaskEvent(
  runners: RunnerClient,
  taskId: string,
  event: SendEventInput,
  options: SendEventOptions = {},
): Promise<SendEventResult> {
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
  const bytes = new TextEncoder().encode(payload).byteLength;
  if (bytes > MAX_EVENT_PAYLOAD_BYTES) {
    throw new EventRefusedError(
      "payload_too_large",
      `the payload is ${bytes} bytes of JSON; an event's may be at most ${MAX_EVENT_PAYLOAD_BYTES}`,
    );
  }
  if (options.principal !== undefined && typeof options.principal !== "string") {
    throw new EventRefusedError("invalid_event", "principal must be a string");
  }
  if (!isTaskIdShape(taskId)) throw new EventRefusedError("unknown_task", `no task ${String(taskId)}`);
  const outcome = await runners.sendEvent(taskId, { type, payload }, options.principal);
  if ("refused" in outcome) throw new EventRefusedError(outcome.refused, outcome.message);
  return outcome;
}
