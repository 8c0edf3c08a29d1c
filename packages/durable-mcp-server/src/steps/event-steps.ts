import { describeError } from "../errors/errors.js";
import { EventTimeoutError } from "../errors/event-errors.js";
import { MAX_EVENT_TYPE_LENGTH } from "../limits.js";
import { toMilliseconds } from "./duration.js";
import type { EventHost, StoredEvent } from "./engine-host.js";
import type { StepRecord } from "./step-record.js";
import { enterStep, type StepCore } from "./step-core.js";
import type { TaskEvent, WaitForEventOptions, WebhookUrlOptions } from "./types.js";

// The steps of external events: `step.waitForEvent` (kind "event") and `step.webhookUrl` (kind "webhook"), served by
// the runner's EventHost (its inbox and webhook signer).

/** Default timeout of `step.waitForEvent` and lifetime of a `step.webhookUrl`, as in Cloudflare Workflows. */
const DEFAULT_EVENT_WAIT_MS = 24 * 60 * 60_000;

/**
 * `step.waitForEvent`: journaled as kind "event". New: takes the oldest buffered event of its type at once, else
 * journals a wait (state "waiting", `request` = its type, `wakeAt` = its deadline) that a delivery completes in the
 * journal (StepJournal.deliverEvent). Replays return the journaled event, or rethrow the timeout.
 */
export async function eventStep(core: StepCore, name: string, options: WaitForEventOptions): Promise<TaskEvent> {
  const type = eventType(name, options?.type);
  const timeoutMs = options.timeout === undefined ? DEFAULT_EVENT_WAIT_MS : toMilliseconds(options.timeout);
  const events = eventHost(core, name);
  const entered = enterStep(core, name, "event");
  const { occurrence, record, label } = entered instanceof Promise ? await entered : entered;
  if (!record) {
    const base: StepRecord = {
      name,
      occurrence,
      kind: "event",
      state: "waiting",
      attempts: 0,
      result: null,
      error: null,
      wakeAt: core.host.now() + timeoutMs,
      request: JSON.stringify({ type }),
    };
    // Taken and journaled in one synchronous turn: they commit together, so an event is never lost or taken twice.
    const buffered = events.take(type);
    if (buffered) {
      core.write({ ...base, state: "done", wakeAt: null, result: JSON.stringify(buffered) });
      core.host.event("event_received", { step: label, type, buffered: true });
      return toTaskEvent(buffered);
    }
    core.write(base);
    events.waiting(label, type);
    core.host.event("event_waiting", { step: label, type, timeoutMs });
    return core.park();
  }
  if (record.state === "done") return toTaskEvent(JSON.parse(record.result ?? "null") as StoredEvent);
  const timedOut = new EventTimeoutError(label, type);
  if (record.state === "failed") throw timedOut;
  if (record.wakeAt !== null && record.wakeAt <= core.host.now()) {
    // The timeout is journaled first: an event sent later is buffered (docs/how-it-works.md), never given to this wait.
    core.write({ ...record, state: "failed", error: JSON.stringify(describeError(timedOut)) });
    core.host.event("event_timed_out", { step: label, type });
    throw timedOut;
  }
  return core.park();
}

/**
 * `step.webhookUrl`: journaled as kind "webhook" with the URL as its result, so a replay returns the same URL. The
 * hook id is random; a run interrupted before the journal write mints another, but handed out none.
 */
export async function webhookStep(core: StepCore, name: string, options: WebhookUrlOptions): Promise<string> {
  const type = eventType(name, options?.type);
  const lifetimeMs = options.expiresIn === undefined ? DEFAULT_EVENT_WAIT_MS : toMilliseconds(options.expiresIn);
  const events = eventHost(core, name);
  const entered = enterStep(core, name, "webhook");
  const { occurrence, record, label } = entered instanceof Promise ? await entered : entered;
  if (record?.state === "done") return (JSON.parse(record.result ?? "{}") as { url: string }).url;
  const expiresAt = core.host.now() + lifetimeMs;
  const hookId = crypto.randomUUID().replaceAll("-", "");
  let url: string;
  // Counted in flight while signing, so that the run cannot suspend under this step.
  core.workStarted();
  try {
    url = await events.webhookUrl({ hookId, type, expiresAt });
  } finally {
    core.workEnded();
  }
  if (core.settled || core.host.isCancelled()) return core.halt({ kind: "cancelled" });
  core.write({
    name,
    occurrence,
    kind: "webhook",
    state: "done",
    attempts: 1,
    result: JSON.stringify({ url, hookId, type, expiresAt }),
    error: null,
    wakeAt: null,
    request: null,
  });
  core.host.event("webhook_created", { step: label, type });
  return url;
}

function eventHost(core: StepCore, name: string): EventHost {
  if (!core.host.events) throw new Error(`step "${name}": this runner has no event inbox`);
  return core.host.events;
}

/** The event type of a wait or webhook step, checked before anything is journaled. */
function eventType(step: string, type: unknown): string {
  if (typeof type !== "string" || type.length === 0 || type.length > MAX_EVENT_TYPE_LENGTH) {
    throw new TypeError(`step "${step}": an event type must be a string of 1 to ${MAX_EVENT_TYPE_LENGTH} characters`);
  }
  return type;
}

function toTaskEvent(stored: StoredEvent): TaskEvent {
  return { type: stored.type, payload: JSON.parse(stored.payload), timestamp: new Date(stored.sentAt) };
}
