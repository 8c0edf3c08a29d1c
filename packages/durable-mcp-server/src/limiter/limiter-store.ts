// A TaskLimiter's state in its SQLite storage: slot leases, the queue with its round-robin turns, the rate window.
// Pure SQL over the object's storage; the object (task-limiter.ts) decides when to call what and whom to wake.

/** A waiting task a dispatch granted a slot to: the limiter wakes its runner. */
export interface Grant {
  taskId: string;
  runner: string;
}

/** A reservation nobody claimed this many times in a row drops the task from the queue (its runner re-queues it). */
const MAX_MISSES = 3;

export class LimiterStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS slots (task_id TEXT PRIMARY KEY, lease_until INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS queue (task_id TEXT PRIMARY KEY, fair_key TEXT NOT NULL, priority REAL NOT NULL,
        seq INTEGER NOT NULL, enqueued_at INTEGER NOT NULL, runner TEXT NOT NULL, reserved_until INTEGER,
        misses INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS queue_order ON queue (fair_key, priority DESC, seq);
      CREATE TABLE IF NOT EXISTS turns (fair_key TEXT PRIMARY KEY, served INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL);`);
  }

  meta(name: string): number | null {
    const row = this.sql.exec<{ v: number }>("SELECT v FROM meta WHERE k = ?", name).toArray()[0];
    return row ? row.v : null;
  }

  setMeta(name: string, value: number): void {
    this.sql.exec("INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v", name, value);
  }

  private bump(name: string): number {
    const next = (this.meta(name) ?? 0) + 1;
    this.setMeta(name, next);
    return next;
  }

  /** Extends a held slot; false when `taskId` holds none. */
  renew(taskId: string, leaseUntil: number): boolean {
    return this.sql.exec("UPDATE slots SET lease_until = ? WHERE task_id = ?", leaseUntil, taskId).rowsWritten > 0;
  }

  /**
   * Claims a slot for `taskId` if it holds one or one was reserved for it; else queues it (keeping the place it has).
   * Returns whether the slot is now held, and whether the task was newly queued.
   */
  claimOrQueue(
    request: { taskId: string; fairKey: string; priority: number; runner: string },
    now: number,
    leaseUntil: number,
  ): { held: boolean; queued: boolean } {
    if (this.renew(request.taskId, leaseUntil)) return { held: true, queued: false };
    const row = this.sql
      .exec<{ reserved_until: number | null }>("SELECT reserved_until FROM queue WHERE task_id = ?", request.taskId)
      .toArray()[0];
    if (row?.reserved_until != null) {
      this.holdSlot(request.taskId, leaseUntil);
      return { held: true, queued: false };
    }
    if (row) return { held: false, queued: false };
    this.sql.exec(
      "INSERT INTO queue (task_id, fair_key, priority, seq, enqueued_at, runner) VALUES (?, ?, ?, ?, ?, ?)",
      request.taskId,
      request.fairKey,
      request.priority,
      this.bump("seq"),
      now,
      request.runner,
    );
    return { held: false, queued: true };
  }

  /** Moves a queued (reserved) task into a held slot. */
  holdSlot(taskId: string, leaseUntil: number): void {
    const fair = this.sql.exec<{ fair_key: string }>("SELECT fair_key FROM queue WHERE task_id = ?", taskId).toArray();
    this.sql.exec("DELETE FROM queue WHERE task_id = ?", taskId);
    this.sql.exec(
      "INSERT INTO slots (task_id, lease_until) VALUES (?, ?) ON CONFLICT (task_id) DO UPDATE SET lease_until = ?",
      taskId,
      leaseUntil,
      leaseUntil,
    );
    if (fair[0]) this.dropIdleTurn(fair[0].fair_key);
  }

  /** Gives back a slot and leaves the queue. */
  release(taskId: string): void {
    const fair = this.sql.exec<{ fair_key: string }>("SELECT fair_key FROM queue WHERE task_id = ?", taskId).toArray();
    this.sql.exec("DELETE FROM slots WHERE task_id = ?", taskId);
    this.sql.exec("DELETE FROM queue WHERE task_id = ?", taskId);
    if (fair[0]) this.dropIdleTurn(fair[0].fair_key);
  }

  /**
   * Ends lapsed leases and lapsed reservations (a reservation nobody claimed: the task waits again, in its place,
   * until MAX_MISSES in a row drop it). Returns the task ids whose leases lapsed.
   */
  reclaim(now: number): string[] {
    const lapsed = this.sql
      .exec<{ task_id: string }>("DELETE FROM slots WHERE lease_until <= ? RETURNING task_id", now)
      .toArray()
      .map((row) => row.task_id);
    this.sql.exec(
      "UPDATE queue SET reserved_until = NULL, misses = misses + 1 WHERE reserved_until IS NOT NULL AND reserved_until <= ?",
      now,
    );
    this.sql.exec("DELETE FROM queue WHERE misses >= ?", MAX_MISSES);
    return lapsed;
  }

  /** Slots held plus slots reserved for a waiting task. */
  inUse(): number {
    const held = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM slots").one().n;
    const reserved = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM queue WHERE reserved_until IS NOT NULL")
      .one().n;
    return held + reserved;
  }

  /**
   * Reserves free slots for waiting tasks, one at a time in turn order: the fairness key served least recently
   * first (one never served before all others), then the highest priority inside it, then arrival.
   */
  dispatch(limit: number, reservedUntil: number): Grant[] {
    const grants: Grant[] = [];
    let free = limit - this.inUse();
    while (free > 0) {
      const next = this.sql
        .exec<{ task_id: string; fair_key: string; runner: string }>(
          `SELECT q.task_id, q.fair_key, q.runner FROM queue q LEFT JOIN turns t ON t.fair_key = q.fair_key
           WHERE q.reserved_until IS NULL ORDER BY COALESCE(t.served, 0), q.priority DESC, q.seq LIMIT 1`,
        )
        .toArray()[0];
      if (!next) break;
      this.sql.exec("UPDATE queue SET reserved_until = ? WHERE task_id = ?", reservedUntil, next.task_id);
      this.sql.exec(
        "INSERT INTO turns (fair_key, served) VALUES (?, ?) ON CONFLICT (fair_key) DO UPDATE SET served = excluded.served",
        next.fair_key,
        this.bump("turn"),
      );
      grants.push({ taskId: next.task_id, runner: next.runner });
      free--;
    }
    return grants;
  }

  /**
   * How many waiting tasks go before `taskId` if turns run as dispatch takes them: those ahead of it in its own
   * fairness key, and from every other key as many as turns come before its own (one more for a key whose turn
   * comes first). Reserved tasks are not counted: they hold their slot already.
   */
  ahead(taskId: string): number {
    const own = this.sql
      .exec<{ fair_key: string; priority: number; seq: number }>(
        "SELECT fair_key, priority, seq FROM queue WHERE task_id = ?",
        taskId,
      )
      .toArray()[0];
    if (!own) return 0;
    const rank = this.sql
      .exec<{ n: number }>(
        `SELECT COUNT(*) AS n FROM queue WHERE fair_key = ? AND reserved_until IS NULL
         AND (priority > ? OR (priority = ? AND seq < ?))`,
        own.fair_key,
        own.priority,
        own.priority,
        own.seq,
      )
      .one().n;
    const served = (key: string) =>
      this.sql.exec<{ served: number }>("SELECT served FROM turns WHERE fair_key = ?", key).toArray()[0]?.served ?? 0;
    const ownServed = served(own.fair_key);
    const others = this.sql
      .exec<{ fair_key: string; n: number; served: number | null }>(
        `SELECT q.fair_key, COUNT(*) AS n, t.served FROM queue q LEFT JOIN turns t ON t.fair_key = q.fair_key
         WHERE q.reserved_until IS NULL AND q.fair_key <> ? GROUP BY q.fair_key`,
        own.fair_key,
      )
      .toArray();
    let ahead = rank;
    for (const other of others) ahead += Math.min(other.n, rank + ((other.served ?? 0) < ownServed ? 1 : 0));
    return ahead;
  }

  queued(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM queue WHERE reserved_until IS NULL").one().n;
  }

  oldestEnqueuedAt(): number | null {
    return this.sql.exec<{ at: number | null }>("SELECT MIN(enqueued_at) AS at FROM queue").one().at;
  }

  /** When the next lease or reservation lapses (the limiter's alarm), or null. */
  nextLapse(): number | null {
    return this.sql
      .exec<{ at: number | null }>(
        "SELECT MIN(at) AS at FROM (SELECT lease_until AS at FROM slots UNION ALL SELECT reserved_until FROM queue)",
      )
      .one().at;
  }

  countWait(): void {
    this.bump("waits");
  }

  /** Counts a create if fewer than `limit` were counted in the last `periodMs`; else when the oldest leaves it. */
  take(limit: number, periodMs: number, now: number): { taken: true } | { taken: false; retryAfterMs: number } {
    this.sql.exec("DELETE FROM hits WHERE at <= ?", now - periodMs);
    const window = this.sql
      .exec<{ n: number; oldest: number | null }>("SELECT COUNT(*) AS n, MIN(at) AS oldest FROM hits")
      .one();
    if (window.n < limit) {
      this.sql.exec("INSERT INTO hits (at) VALUES (?)", now);
      return { taken: true };
    }
    // The window holds `limit` creates or more: a create is taken once enough of the oldest have left it.
    const nth = this.sql
      .exec<{ at: number }>("SELECT at FROM hits ORDER BY at LIMIT 1 OFFSET ?", window.n - limit)
      .one().at;
    return { taken: false, retryAfterMs: Math.max(1, nth + periodMs - now) };
  }

  windowCount(periodMs: number | null, now: number): number | null {
    if (periodMs === null) return null;
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM hits WHERE at > ?", now - periodMs).one().n;
  }

  /** A fairness key with nothing left waiting loses its turn record: it comes back as a newcomer. */
  private dropIdleTurn(fairKey: string): void {
    const waiting = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM queue WHERE fair_key = ?", fairKey).one().n;
    if (waiting === 0) this.sql.exec("DELETE FROM turns WHERE fair_key = ?", fairKey);
  }
}
