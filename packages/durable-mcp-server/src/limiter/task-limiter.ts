import { DurableObject } from "cloudflare:workers";
import { LimiterStore, type Grant } from "./limiter-store.js";
import { RateStarts } from "./rate-starts.js";
import type {
  LimiterRpc,
  LimiterStatus,
  LimiterWakeRpc,
  RateAnswer,
  SlotAnswer,
  SlotRequest,
  StartAnswer,
  TaskLimiterClass,
} from "./limiter-rpc.js";

// The TaskLimiter Durable Object: one per limit key. Every call runs to its end without awaiting anything but the
// object's own storage, so the queue, the leases and the turns change in one order; runners are woken after the
// state is written, off the call's path (a lost wake is repaired by the runner's own recheck alarm).

/**
 * Builds the TaskLimiter Durable Object class: export it from the Worker under the `class_name` of the binding that
 * `durableMcp(…, { limits: { binding } })` names (default "TASK_LIMITER").
 */
export function defineTaskLimiter<Env = unknown>(): TaskLimiterClass<Env> {
  return class TaskLimiter extends DurableObject<Env> implements LimiterRpc {
    private store = new LimiterStore(this.ctx.storage.sql);
    private starts = new RateStarts(this.ctx.storage.sql);

    async acquire(request: SlotRequest): Promise<SlotAnswer> {
      const now = Date.now();
      this.store.reclaim(now);
      this.store.setMeta("limit", request.limit);
      this.store.setMeta("lease", request.leaseMs);
      const leaseUntil = now + request.leaseMs;
      const { held, queued } = this.store.claimOrQueue(
        { taskId: request.taskId, fairKey: request.fairKey, priority: request.priority, runner: request.runnerBinding },
        now,
        leaseUntil,
      );
      let granted = held;
      if (!held) {
        const grants = this.store.dispatch(request.limit, leaseUntil);
        // Its own turn came in this very dispatch: it claims the slot now, without a wake.
        const own = grants.findIndex((grant) => grant.taskId === request.taskId);
        if (own >= 0) {
          grants.splice(own, 1);
          this.store.holdSlot(request.taskId, leaseUntil);
          granted = true;
        } else if (queued) {
          this.store.countWait();
        }
        this.wake(grants);
      }
      await this.armLapse();
      return granted ? { granted: true } : { granted: false, ahead: this.store.ahead(request.taskId) };
    }

    async renew(taskId: string, leaseMs: number): Promise<boolean> {
      const now = Date.now();
      // A lease that lapsed is gone even if its alarm has not fired yet: the renewal must not revive it.
      this.afterLapse(now);
      return this.store.renew(taskId, now + leaseMs);
    }

    async release(taskId: string): Promise<void> {
      this.store.release(taskId);
      this.starts.leave(taskId, Date.now());
      this.afterLapse(Date.now());
      await this.armLapse();
    }

    async take(limit: number, periodMs: number): Promise<RateAnswer> {
      this.store.setMeta("period", periodMs);
      return this.store.take(limit, periodMs, Date.now());
    }

    async startRate(request: {
      taskId: string;
      limit: number;
      periodMs: number;
      leaseMs: number;
    }): Promise<StartAnswer> {
      this.store.setMeta("period", request.periodMs);
      this.store.setMeta("startPeriod", 1);
      const refused = this.starts.take(request.taskId, request.limit, request.periodMs, request.leaseMs, Date.now());
      return refused === null ? { taken: true } : { taken: false, ...refused };
    }

    async renewStart(taskId: string, leaseMs: number): Promise<boolean> {
      return this.starts.renew(taskId, Date.now() + leaseMs);
    }

    async confirmStart(taskId: string, at: number): Promise<void> {
      this.starts.confirm(taskId, at);
    }

    async status(): Promise<LimiterStatus> {
      const now = Date.now();
      this.afterLapse(now);
      const oldest = this.store.oldestEnqueuedAt();
      return {
        limit: this.store.meta("limit"),
        inUse: this.store.inUse(),
        queued: this.store.queued(),
        waits: this.store.meta("waits") ?? 0,
        oldestWaitMs: oldest === null ? null : now - oldest,
        windowCount:
          this.store.meta("startPeriod") === null
            ? this.store.windowCount(this.store.meta("period"), now)
            : this.starts.windowCount(this.store.meta("period"), now),
        rateWaiting: this.starts.waiting(now),
      };
    }

    override async alarm(): Promise<void> {
      this.afterLapse(Date.now());
      await this.armLapse();
    }

    /** Lapsed leases and reservations go; the slots they free go to the next waiting tasks. */
    private afterLapse(now: number): void {
      this.store.reclaim(now);
      const limit = this.store.meta("limit");
      if (limit === null) return;
      this.wake(this.store.dispatch(limit, now + (this.store.meta("lease") ?? 30_000)));
    }

    /** The alarm follows the next lapse, so a crashed run's slot comes back without anyone asking. */
    private async armLapse(): Promise<void> {
      const next = this.store.nextLapse();
      if (next === null) await this.ctx.storage.deleteAlarm();
      else await this.ctx.storage.setAlarm(Math.max(next, Date.now() + 1));
    }

    /** Wakes the runners of the granted tasks once the grants are durable; one that no longer wants it gives it back. */
    private wake(grants: Grant[]): void {
      if (grants.length === 0) return;
      const env = this.env as Record<string, unknown>;
      const woken = this.ctx.storage.sync().then(() =>
        Promise.all(
          grants.map(async ({ taskId, runner }) => {
            const namespace = env[runner] as DurableObjectNamespace | undefined;
            if (!namespace) return;
            try {
              const stub = namespace.get(namespace.idFromName(taskId)) as unknown as LimiterWakeRpc;
              if (!(await stub.limiterWake(taskId))) await this.release(taskId);
            } catch {
              // The reservation lapses and is offered again; the runner's recheck alarm asks by itself meanwhile.
            }
          }),
        ),
      );
      this.ctx.waitUntil(woken);
    }
  };
}
