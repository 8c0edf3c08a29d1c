import { limiterOf } from "../limiter/index.js";
import { SLOT_LEASE_MS } from "../limits.js";
import { RateStart, rateKeyOf } from "./rate-start.js";
import {
  LimitRefusal,
  limiterNamespace,
  recheckDelayMs,
  slotPlansOf,
  takeSlots,
  type HeldSlot,
  type LimitSettings,
} from "./run-slot.js";
import type { TaskDefinition } from "./task-definition.js";
import type { TaskRecord } from "./task-store.js";

// Whether a run may execute now: the slot of every concurrency limit of the task (run-slot.ts), then, before its
// first step ever began, its start under a queued rate limit (rate-start.ts). TaskRun.runHandler is the one caller.

/** The status message of a task waiting for a slot or its start begins with this. */
export const QUEUED_PREFIX = "queued:";

/** Set in the task's own storage once its start under a queued rate limit is confirmed: later runs need not ask. */
const RATE_STARTED_KEY = "rateStarted";

/** What admission reads of the task's object. */
export interface AdmissionSite {
  readonly env: unknown;
  readonly kv: SyncKvStorage;
  /** When the task's first step began (null: none yet). */
  firstStartedAt(): number | null;
}

/** Why a run waits: the status message, when to ask again, and the event's fields. */
export interface Waiting {
  message: string;
  recheckAt: number;
  fields: { limitKey: string; ahead: number; retryAfterMs?: number };
}

/** What a run holds while it executes: give it back at its end with `release`. */
export class Admitted {
  constructor(
    private readonly slots: HeldSlot[],
    private readonly start: RateStart | null,
    private readonly kv: SyncKvStorage,
  ) {}

  /** False once a slot or the provisional start may have lapsed: the run starts no further step. */
  valid(): boolean {
    return this.slots.every((slot) => slot.valid()) && (this.start === null || this.start.valid());
  }

  /** Gives every slot back; confirms the start (`final`: the task ended in this run). */
  async release(final: boolean): Promise<void> {
    const [, confirmed] = await Promise.all([
      Promise.all(this.slots.map((slot) => slot.release())),
      this.start ? this.start.finish(final) : false,
    ]);
    if (confirmed) this.kv.put(RATE_STARTED_KEY, true);
  }
}

/**
 * Takes what a run of `record` needs before it executes: null when no limit applies, the holdings, or why it waits.
 * Throws LimitRefusal (the task fails with its reason).
 */
export async function admitRun(
  site: AdmissionSite,
  settings: LimitSettings | undefined,
  definition: TaskDefinition,
  record: TaskRecord,
): Promise<{ admitted: Admitted } | { waiting: Waiting } | null> {
  const plans = slotPlansOf(definition, record, settings);
  const rate = definition.limits?.rateLimit;
  const rateOpen = rate?.queue === true && site.kv.get(RATE_STARTED_KEY) !== true;
  if (plans.length === 0 && !rateOpen) return null;
  if (!settings) {
    throw new LimitRefusal("limits_unbound", `task "${record.tool}" declares a queued rate limit, but no TaskLimiter`);
  }
  const namespace = limiterNamespace(site.env, settings);
  // Computed before any slot is taken, so that a key function's failure holds nothing.
  const rateKey = rateOpen ? rateKeyOf(rate!, record) : null;
  const taken = await takeSlots(namespace, settings, plans, record.taskId);
  const now = Date.now();
  if ("queued" in taken) {
    const { ahead, key } = taken.queued;
    const recheckAt = now + recheckDelayMs(ahead);
    return { waiting: { message: `${QUEUED_PREFIX} ${ahead} ahead`, recheckAt, fields: { limitKey: key, ahead } } };
  }
  let start: RateStart | null = null;
  if (rateKey !== null) {
    const limiter = limiterOf(namespace, rateKey);
    const leaseMs = settings.leaseMs ?? SLOT_LEASE_MS;
    const first = site.firstStartedAt();
    try {
      if (first !== null) {
        // Begun in an earlier run whose confirmation did not land: confirm it now, take nothing.
        const confirmed = await limiter.confirmStart(record.taskId, first).then(
          () => true,
          () => false,
        );
        if (confirmed) site.kv.put(RATE_STARTED_KEY, true);
      } else {
        const answer = await limiter.startRate({
          taskId: record.taskId,
          limit: rate!.limit,
          periodMs: rate!.periodMs,
          leaseMs,
        });
        if (!answer.taken) {
          await Promise.all(taken.held.map((slot) => slot.release()));
          const seconds = Math.ceil(answer.retryAfterMs / 1000);
          return {
            waiting: {
              message: `${QUEUED_PREFIX} rate limit, next start in ${seconds} s`,
              recheckAt: now + answer.retryAfterMs,
              fields: { limitKey: rateKey, ahead: answer.ahead, retryAfterMs: answer.retryAfterMs },
            },
          };
        }
        start = new RateStart(limiter, record.taskId, leaseMs, now, () => site.firstStartedAt());
      }
    } catch (error) {
      await Promise.all(taken.held.map((slot) => slot.release()));
      throw error;
    }
  }
  return { admitted: new Admitted(taken.held, start, site.kv) };
}

/**
 * Takes a task out of its limiters (cancelled while queued or running): every concurrency limit and a queued rate
 * limit; nothing to do when none applies or a key cannot be computed (such a task never entered a queue). Errors are
 * left to the queue's own repair.
 */
export async function leaveLimiters(
  env: unknown,
  settings: LimitSettings,
  definition: TaskDefinition | undefined,
  record: TaskRecord,
): Promise<void> {
  if (!definition) return;
  const keys: string[] = [];
  try {
    keys.push(...slotPlansOf(definition, record, settings).map((plan) => plan.key));
  } catch {
    // A key that cannot be computed: this task never queued under it.
  }
  const rate = definition.limits?.rateLimit;
  try {
    if (rate?.queue) keys.push(rateKeyOf(rate, record));
  } catch {
    // As above.
  }
  const namespace = (env as Record<string, unknown>)[settings.binding] as DurableObjectNamespace | undefined;
  if (keys.length === 0 || !namespace) return;
  // A slot offered later is refused by the runner (limiterWake), so a release that fails here is repaired there.
  await Promise.all(
    keys.map((key) =>
      limiterOf(namespace, key)
        .release(record.taskId)
        .catch(() => undefined),
    ),
  );
}
