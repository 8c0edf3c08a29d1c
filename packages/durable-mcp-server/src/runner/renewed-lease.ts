import { SLOT_LEASE_MARGIN_MS, SLOT_RENEW_MS } from "../limits.js";

// A lease a run holds at its limiter (a slot, or a provisional start under a queued rate limit), as the run reckons
// it: renewed every third of its length by the holder's `renew`, and counted from when the last successful ask was
// sent, less a margin — so this side's end is never later than the limiter's.

export class RenewedLease {
  private validUntil: number;
  private lost = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  /** `renew` runs every third of the lease (at most every SLOT_RENEW_MS) until `stop` or `lose`. */
  constructor(
    private readonly leaseMs: number,
    askedAt: number,
    renew: () => Promise<void>,
  ) {
    this.validUntil = askedAt + leaseMs - SLOT_LEASE_MARGIN_MS;
    const every = Math.min(SLOT_RENEW_MS, Math.floor(leaseMs / 3));
    this.timer = setInterval(() => void renew(), every);
  }

  /** False once the lease may have lapsed at the limiter (no renewal landed in time) or was lost. */
  live(): boolean {
    return !this.lost && Date.now() < this.validUntil;
  }

  /** A renewal sent at `sentAt` landed. */
  extend(sentAt: number): void {
    this.validUntil = Math.max(this.validUntil, sentAt + this.leaseMs - SLOT_LEASE_MARGIN_MS);
  }

  /** The limiter no longer holds it for this run: nothing left to renew. */
  lose(): void {
    this.lost = true;
    this.stop();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
