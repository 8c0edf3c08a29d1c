import type { EventRefusal } from "../errors/event-errors.js";
import { MAX_EVENT_PAYLOAD_BYTES, MAX_JSON_DEPTH } from "../limits.js";
import { exceedsDepth } from "../wire/json-body.js";

// The bounds of an event's payload (docs/limits.md), checked where an event is sent (sendTaskEvent, before any Durable
// Object is reached) and again where a TaskRunner takes one (sendEvent and deliverWebhook), so that no caller — the
// Worker's own code, a route over it, a webhook, a direct RPC — can hand a task a payload its replays cannot read
// back (JSON nested deeper than the runtime's stack kills every replay).

/** Why `payload` (JSON text) may not be an event's, or null when it may. */
export function eventPayloadProblem(payload: string): { refused: EventRefusal; message: string } | null {
  // UTF-8 takes 1–3 bytes per UTF-16 unit: encode only when the length alone cannot decide.
  const bytes =
    payload.length * 3 <= MAX_EVENT_PAYLOAD_BYTES ? payload.length : new TextEncoder().encode(payload).byteLength;
  if (bytes > MAX_EVENT_PAYLOAD_BYTES) {
    return {
      refused: "payload_too_large",
      message: `the payload is ${bytes} bytes of JSON; an event's may be at most ${MAX_EVENT_PAYLOAD_BYTES}`,
    };
  }
  if (exceedsDepth(payload, MAX_JSON_DEPTH)) {
    return {
      refused: "invalid_event",
      message: `the payload nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
    };
  }
  return null;
}
