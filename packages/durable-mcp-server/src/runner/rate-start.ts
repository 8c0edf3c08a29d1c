import type { LimiterRpc } from "../limiter/index.js";
import { RenewedLease } from "./renewed-lease.js";
import { limitKeyOf } from "./run-slot.js";
import type { TaskLimits } from "./task-definition.js";

// The runner's side of a queued rate limit (`rateLimit: { queue: true }`): the task's start is counted when its first
// run is about to execute, not at create. The limiter counts it provisionally; the run confirms when its first step
// began, and starts no step once the provisional count may have lapsed (see limiter/rate-starts.ts).

/** The limiter key a task's creates (or, queued, its starts) are counted under: one per tool, or per key value. */
export function rateKeyOf(
  rate: NonNullable<TaskLimits["rateLimit"]>,
  task: { tool: string; principal: string; input: string },
): string {
  if (!rate.key) return `rate:task:${task.tool}`;
  const input = JSON.parse(task.input) as unknown;
  return `rate:task:${task.tool}:${limitKeyOf(rate.key, input, { principal: task.principal }, task.tool)}`;
}

/**
 * A start counted provisionally for this run: renewed every third of its lease until the run's first step began,
 * then confirmed with that moment. `valid()` turns false once the provisional count may have lapsed unrenewed.
 */
export class RateStart {
  private readonly lease: RenewedLease;
  private confirmed = false;

  constructor(
    private readonly limiter: LimiterRpc,
    private readonly taskId: string,
    leaseMs: number,
    askedAt: number,
    private readonly firstStartedAt: () => number | null,
  ) {
    this.lease = new RenewedLease(leaseMs, askedAt, () => this.tick(leaseMs));
  }

  valid(): boolean {
    return this.confirmed || this.lease.live();
  }

  /** Confirms once the first step began (the window then counts it from there), else extends the lease. */
  private async tick(leaseMs: number): Promise<void> {
    const sentAt = Date.now();
    try {
      const first = this.firstStartedAt();
      if (first !== null) await this.confirm(first);
      else if (await this.limiter.renewStart(this.taskId, leaseMs)) this.lease.extend(sentAt);
      else this.lease.lose();
    } catch {
      // Not renewed this time: the next tick tries again; `valid()` turns false if none lands before the lease ends.
    }
  }

  private async confirm(at: number): Promise<void> {
    await this.limiter.confirmStart(this.taskId, at);
    this.confirmed = true;
    this.lease.stop();
  }

  /**
   * At the run's end: confirms with when the first step began, or (no step began) with now when the task is final.
   * A task that goes on without having begun a step leaves its count to lapse, and asks again at its next run.
   * Returns whether the start is confirmed (later runs need not ask).
   */
  async finish(final: boolean): Promise<boolean> {
    this.lease.stop();
    if (this.confirmed) return true;
    try {
      const first = this.firstStartedAt();
      if (first === null && !final) return false;
      await this.confirm(first ?? Date.now());
      return true;
    } catch {
      // Unconfirmed: the count lapses at its lease's end, no earlier than any step this run began.
      return false;
    }
  }
}
