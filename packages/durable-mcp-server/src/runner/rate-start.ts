import type { LimiterRpc } from "../limiter/index.js";
import { SLOT_LEASE_MARGIN_MS, SLOT_RENEW_MS } from "../limits.js";
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
  private validUntil: number;
  private lost = false;
  private confirmed = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly limiter: LimiterRpc,
    private readonly taskId: string,
    private readonly leaseMs: number,
    askedAt: number,
    private readonly firstStartedAt: () => number | null,
  ) {
    this.validUntil = askedAt + leaseMs - SLOT_LEASE_MARGIN_MS;
    const every = Math.min(SLOT_RENEW_MS, Math.floor(leaseMs / 3));
    this.timer = setInterval(() => void this.tick(), every);
  }

  valid(): boolean {
    return this.confirmed || (!this.lost && Date.now() < this.validUntil);
  }

  /** Confirms once the first step began (the window then counts it from there), else extends the lease. */
  private async tick(): Promise<void> {
    const sentAt = Date.now();
    try {
      const first = this.firstStartedAt();
      if (first !== null) {
        await this.confirm(first);
      } else if (await this.limiter.renewStart(this.taskId, this.leaseMs)) {
        this.validUntil = Math.max(this.validUntil, sentAt + this.leaseMs - SLOT_LEASE_MARGIN_MS);
      } else {
        this.lost = true;
        this.stop();
      }
    } catch {
      // Not renewed this time: the next tick tries again; `valid()` turns false if none lands before the lease ends.
    }
  }

  private async confirm(at: number): Promise<void> {
    await this.limiter.confirmStart(this.taskId, at);
    this.confirmed = true;
    this.stop();
  }

  /**
   * At the run's end: confirms with when the first step began, or (no step began) with now when the task is final.
   * A task that goes on without having begun a step leaves its count to lapse, and asks again at its next run.
   * Returns whether the start is confirmed (later runs need not ask).
   */
  async finish(final: boolean): Promise<boolean> {
    this.stop();
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

  private stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
