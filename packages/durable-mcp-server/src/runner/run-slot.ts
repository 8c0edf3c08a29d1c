import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { JsonRpcErrorObject } from "../errors/jsonrpc.js";
import { limiterOf, type LimiterRpc } from "../limiter/index.js";
import {
  MAX_LIMIT_KEY_LENGTH,
  QUEUE_RECHECK_MAX_MS,
  QUEUE_RECHECK_MIN_MS,
  QUEUE_RECHECK_PER_AHEAD_MS,
  SLOT_LEASE_MS,
} from "../limits.js";
import { RenewedLease } from "./renewed-lease.js";
import type { LimitFunction, TaskDefinition } from "./task-definition.js";
import type { TaskRecord } from "./task-store.js";

// The runner's side of a concurrency limit: which limiter key a run of a task needs a slot of, taking that slot
// before the run executes (or learning its place in the queue), renewing it while the run goes on, and giving it back.
// TaskRun.runDue is the one caller: every run, however it was started, passes through it.

/** The deployment's limits as a TaskRunner applies them (`durableMcp(…, { limits })`). */
export interface LimitSettings {
  /** The TaskLimiter binding. */
  binding: string;
  /** The TaskRunner binding the limiter wakes a waiting task through. */
  runnerBinding: string;
  /** Shared limits by name: how many runs of all the tasks naming one may execute at once. */
  named: Record<string, number>;
  /** How many runs of one principal may execute at once, for tasks without a concurrency limit of their own. */
  perPrincipal: number | null;
  /** The per-principal limit applies to tasks with limits of their own too (a run then takes a slot of each). */
  perPrincipalEveryTask?: boolean;
  /** A slot's lease (default SLOT_LEASE_MS); renewed every third of it while the run executes. */
  leaseMs?: number;
}

/** What a run needs: a slot of `key` (one of at most `limit`), its turn by `fairKey`, then `priority`. */
export interface SlotPlan {
  key: string;
  limit: number;
  fairKey: string;
  priority: number;
}

/** Why a run of this task cannot even ask for a slot: the task fails with this error. */
export class LimitRefusal extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  toJsonRpc(): JsonRpcErrorObject {
    return { code: ProtocolErrorCode.InternalError, message: this.message, data: { reason: this.reason } };
  }
}

/**
 * The slots a run of `record` needs, one per concurrency limit that applies, in the one global order every run takes
 * them in (by key), so that two runs never each hold a slot the other waits for; empty when none applies. Throws
 * LimitRefusal.
 */
export function slotPlansOf(
  definition: TaskDefinition,
  record: TaskRecord,
  settings: LimitSettings | undefined,
): SlotPlan[] {
  const declared = definition.limits?.concurrency;
  const own = declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
  const principalWide = settings?.perPrincipal && (own.length === 0 || settings.perPrincipalEveryTask);
  if (own.length === 0 && !principalWide) return [];
  if (!settings) {
    throw new LimitRefusal(
      "limits_unbound",
      `task "${record.tool}" declares a concurrency limit, but the deployment has no TaskLimiter (durableMcp limits)`,
    );
  }
  const caller = { principal: record.principal };
  const input = JSON.parse(record.input) as unknown;
  const priority = priorityOf(definition.limits?.priority, input, caller);
  const plans = new Map<string, SlotPlan>();
  const add = (plan: SlotPlan) => {
    // Two declarations naming one key: one slot, under the lower of their limits.
    const same = plans.get(plan.key);
    plans.set(plan.key, same && same.limit <= plan.limit ? same : plan);
  };
  if (principalWide) {
    add({ key: `principal:${record.principal}`, limit: settings.perPrincipal!, fairKey: record.principal, priority });
  }
  for (const limit of own) {
    if ("named" in limit) {
      const count = settings.named[limit.named];
      if (count === undefined) {
        throw new LimitRefusal(
          "unknown_limit",
          `task "${record.tool}" names limit "${limit.named}", which is not declared`,
        );
      }
      // Inside a shared limit, a key function names whose turn it is (default: the principal's).
      const fairKey = limit.key ? limitKeyOf(limit.key, input, caller, record.tool) : record.principal;
      add({ key: `named:${limit.named}`, limit: count, fairKey, priority });
    } else {
      const suffix = limit.key ? `:${limitKeyOf(limit.key, input, caller, record.tool)}` : "";
      add({ key: `task:${record.tool}${suffix}`, limit: limit.limit, fairKey: record.principal, priority });
    }
  }
  return [...plans.values()].toSorted((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A key function's answer: a string of 1 to MAX_LIMIT_KEY_LENGTH characters, or a LimitRefusal. */
export function limitKeyOf(key: LimitFunction, input: unknown, caller: { principal: string }, tool: string): string {
  let value: unknown;
  try {
    value = key(input, caller);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new LimitRefusal("limit_key_failed", `task "${tool}": its limit key function threw: ${message}`);
  }
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_LIMIT_KEY_LENGTH) {
    throw new LimitRefusal(
      "limit_key_invalid",
      `task "${tool}": a limit key must be a string of 1 to ${MAX_LIMIT_KEY_LENGTH} characters`,
    );
  }
  return value;
}

function priorityOf(priority: LimitFunction | undefined, input: unknown, caller: { principal: string }): number {
  if (!priority) return 0;
  let value: unknown;
  try {
    value = priority(input, caller);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new LimitRefusal("priority_failed", `the priority function threw: ${message}`);
  }
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new LimitRefusal("priority_invalid", "a priority must be a finite number");
  }
  return value;
}

/** How long a queued task waits before asking its limiter again, from its place in the queue. */
export function recheckDelayMs(ahead: number): number {
  return Math.min(QUEUE_RECHECK_MAX_MS, Math.max(QUEUE_RECHECK_MIN_MS, ahead * QUEUE_RECHECK_PER_AHEAD_MS));
}

/** The answer of asking for the slots of a run: all held (release them at the run's end), or queued in one. */
export type SlotsTaken = { held: HeldSlot[] } | { queued: { ahead: number; key: string } };

/** The TaskLimiter namespace, or a LimitRefusal naming the binding. */
export function limiterNamespace(env: unknown, settings: LimitSettings): DurableObjectNamespace {
  const namespace = (env as Record<string, unknown>)[settings.binding] as DurableObjectNamespace | undefined;
  if (!namespace || typeof namespace.idFromName !== "function") {
    throw new LimitRefusal("limits_unbound", `no TaskLimiter binding named "${settings.binding}"`);
  }
  return namespace;
}

/**
 * Asks for the slot of every plan, in their order. At the first that is full the task queues there and gives back
 * every other (the slots taken before it, and any place or reserved slot it had in a later one), so a waiting task
 * holds nothing and waits in one queue.
 */
export async function takeSlots(
  namespace: DurableObjectNamespace,
  settings: LimitSettings,
  plans: SlotPlan[],
  taskId: string,
): Promise<SlotsTaken> {
  const held: HeldSlot[] = [];
  const leaseMs = settings.leaseMs ?? SLOT_LEASE_MS;
  for (const [i, plan] of plans.entries()) {
    const limiter = limiterOf(namespace, plan.key);
    const askedAt = Date.now();
    const answer = await limiter
      .acquire({
        taskId,
        limit: plan.limit,
        fairKey: plan.fairKey,
        priority: plan.priority,
        leaseMs,
        runnerBinding: settings.runnerBinding,
      })
      .catch(async (error: unknown) => {
        await Promise.all(held.map((slot) => slot.release()));
        throw error;
      });
    if (answer.granted) {
      held.push(new HeldSlot(limiter, taskId, leaseMs, askedAt));
      continue;
    }
    const later = plans.slice(i + 1).map((other) =>
      limiterOf(namespace, other.key)
        .release(taskId)
        .catch(() => undefined),
    );
    await Promise.all([...held.map((slot) => slot.release()), ...later]);
    return { queued: { ahead: answer.ahead, key: plan.key } };
  }
  return { held };
}

/**
 * A slot held by a run. Renewed every third of its lease; the run asks `valid()` before each step, so a run whose
 * lease may have lapsed at the limiter (no renewal landed in time) starts no step after that.
 */
export class HeldSlot {
  private readonly lease: RenewedLease;

  constructor(
    private readonly limiter: LimiterRpc,
    private readonly taskId: string,
    leaseMs: number,
    askedAt: number,
  ) {
    this.lease = new RenewedLease(leaseMs, askedAt, async () => {
      const sentAt = Date.now();
      try {
        // False: gone to another task (or given back).
        if (await this.limiter.renew(this.taskId, leaseMs)) this.lease.extend(sentAt);
        else this.lease.lose();
      } catch {
        // Not renewed this time: the next tick tries again; `valid()` turns false if none lands before the lease ends.
      }
    });
  }

  valid(): boolean {
    return this.lease.live();
  }

  /** Gives the slot back. A failed release is left to the lease: the slot comes back when it lapses. */
  async release(): Promise<void> {
    this.lease.stop();
    try {
      await this.limiter.release(this.taskId);
    } catch {
      // See above.
    }
  }
}
