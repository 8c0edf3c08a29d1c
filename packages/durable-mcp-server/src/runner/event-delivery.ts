import type { EventRefusal } from "../errors/event-errors.js";
import { sha256Hex, waitingMessage, type EventOutcome, type WebhookAnswer } from "./event-inbox.js";
import { eventPayloadProblem } from "./event-payload.js";
import type { RunSite, TaskRun } from "./task-run.js";
import { FINAL_STATUSES, type TaskRecord } from "./task-store.js";

// How a TaskRunner takes an event (`sendEvent`, a webhook POST): the TaskRunner's RPC methods check who may send and
// delegate here. The object's site (store, journal, inbox, notify) and its run loop (events, wake) are passed in.

type DeliverySite = Pick<RunSite<unknown>, "store" | "journal" | "inbox" | "notify">;
type DeliveryRun = Pick<TaskRun<unknown>, "events" | "wake">;

/**
 * A webhook POST to a live task: delivered once; an identical repeat gets the first answer, a different body 409.
 * Refused bodies are not recorded, so the sender may try again.
 */
export async function deliverWebhook(
  site: DeliverySite,
  run: DeliveryRun,
  record: TaskRecord,
  hook: { hookId: string; type: string; payload: string },
): Promise<WebhookAnswer> {
  const sha256 = await sha256Hex(hook.payload);
  const prior = site.inbox.delivery(hook.hookId);
  if (prior) {
    if (prior.sha256 === sha256) return prior.answer;
    return {
      status: 409,
      body: { error: "already_delivered", message: "this webhook already delivered a different body" },
    };
  }
  const outcome = await acceptEvent(site, run, record, hook.type, hook.payload, "webhook");
  if ("refused" in outcome) {
    // Refused bodies are not recorded: the sender may try again once the inbox has room.
    const status = WEBHOOK_REFUSAL_STATUS[outcome.refused] ?? 400;
    return { status, body: { error: outcome.refused, message: outcome.message } };
  }
  const answer: WebhookAnswer = { status: 202, body: { ...outcome, type: hook.type } };
  site.inbox.recordDelivery(hook.hookId, sha256, answer, Date.now());
  return answer;
}

/**
 * Gives an event to the oldest wait of its type, or buffers it; wakes the task for a delivered one. Synchronous up
 * to the alarm write, so its journal or inbox write never interleaves with a run's take.
 */
export async function acceptEvent(
  site: DeliverySite,
  run: DeliveryRun,
  record: TaskRecord,
  type: string,
  payload: string,
  via: string,
): Promise<EventOutcome> {
  if (FINAL_STATUSES.has(record.status)) {
    return { refused: "task_finished", message: `task ${record.taskId} is ${record.status}` };
  }
  // Whoever called: a payload the task's replays could not read back never reaches its journal or inbox.
  const problem = typeof payload === "string" ? eventPayloadProblem(payload) : NOT_TEXT;
  if (problem) {
    run.events(record)("event_refused", { type, via, reason: problem.refused });
    return problem;
  }
  const now = Date.now();
  const stored = { type, payload, sentAt: now };
  const step = site.journal.deliverEvent(type, JSON.stringify(stored), now);
  if (step === null) {
    if (!site.inbox.add(stored)) {
      run.events(record)("event_refused", { type, via, reason: "buffer_full" });
      return { refused: "buffer_full", message: `task ${record.taskId} already keeps as many events as it may` };
    }
    run.events(record)("event_buffered", { type, via });
    return { outcome: "buffered" };
  }
  run.events(record)("event_delivered", { type, via, step });
  // The wait's status message is over once its event came; the handler's own messages are left alone.
  if (record.statusMessage === waitingMessage(step, type))
    site.store.setMessage(`received event "${type}"`, record.progress, now);
  site.notify();
  await run.wake(now);
  return { outcome: "delivered", step };
}

/** A webhook's answer to each refusal (anything else is 400). */
const WEBHOOK_REFUSAL_STATUS: Partial<Record<EventRefusal, number>> = {
  task_finished: 410,
  buffer_full: 429,
  payload_too_large: 413,
};

/** A payload that is not JSON text at all (only a direct RPC can send one). */
const NOT_TEXT = { refused: "invalid_event", message: "the payload is not JSON text" } as const;
