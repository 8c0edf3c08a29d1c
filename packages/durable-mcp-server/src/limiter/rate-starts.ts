// A queued rate limit's state in a TaskLimiter's SQLite storage: the starts of the last period, and the tasks waiting
// for the window. Pure SQL; the object (task-limiter.ts) calls it.
//
// A start is counted by when its task's first step began, which the limiter learns only after the fact: a task asks
// (a provisional start, counted as "now or later"), starts its run, then confirms the moment its first step began.
// A recorded moment is never earlier than the real one (a provisional start lapses to its lease's end, and the
// runner starts no step after that), so at most `limit` first steps begin in any window of the period.

/** A start refused: when to ask again, and how many waiting tasks asked before this one. */
export interface StartRefusal {
  retryAfterMs: number;
  ahead: number;
}

export class RateStarts {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS starts (task_id TEXT PRIMARY KEY, at INTEGER, until INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS start_waiters (task_id TEXT PRIMARY KEY, seq INTEGER NOT NULL,
        expires_at INTEGER NOT NULL);`);
  }

  /**
   * Counts a start of `taskId` if fewer than `limit` are counted in the last `periodMs` (provisional ones always
   * count), as a provisional start until `now + leaseMs`; else refuses with the wait. A task that already has a start
   * counted keeps it (made provisional again: its run asks again after a crash, and starts later than recorded).
   */
  take(taskId: string, limit: number, periodMs: number, leaseMs: number, now: number): StartRefusal | null {
    this.prune(periodMs, now);
    const until = now + leaseMs;
    const reopened = this.sql.exec("UPDATE starts SET at = NULL, until = ? WHERE task_id = ?", until, taskId);
    if (reopened.rowsWritten > 0) return this.leaveWaiters(taskId);
    // A provisional start is estimated as begun now: it is usually confirmed within its run, well before its lease
    // ends (a wait reckoned from the lease would be long; one reckoned from now is at worst asked again).
    const counted = this.sql
      .exec<{ at: number }>("SELECT COALESCE(at, ?) AS at FROM starts ORDER BY 1", now)
      .toArray()
      .map((row) => row.at);
    if (counted.length < limit) {
      this.sql.exec("INSERT INTO starts (task_id, at, until) VALUES (?, NULL, ?)", taskId, until);
      return this.leaveWaiters(taskId);
    }
    // The window is full: a start is taken once enough of the oldest left it; the waiting tasks before this one take
    // the next turns, `limit` a period.
    const ahead = this.waitersBefore(taskId, now);
    const oldest = counted[counted.length - limit]!;
    const retryAfterMs = Math.max(1, oldest + periodMs - now) + Math.floor(ahead / limit) * periodMs;
    this.sql.exec(
      `INSERT INTO start_waiters (task_id, seq, expires_at) VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM start_waiters), ?)
       ON CONFLICT (task_id) DO UPDATE SET expires_at = excluded.expires_at`,
      taskId,
      now + retryAfterMs + leaseMs,
    );
    return { retryAfterMs, ahead };
  }

  /** Extends a provisional start's lease; false when the task has none (it lapsed, or was confirmed). */
  renew(taskId: string, until: number): boolean {
    return this.sql.exec("UPDATE starts SET until = ? WHERE task_id = ? AND at IS NULL", until, taskId).rowsWritten > 0;
  }

  /** Records when the task's first step began (never later than its provisional start's lease, nor than before). */
  confirm(taskId: string, at: number): void {
    this.sql.exec("UPDATE starts SET at = MIN(COALESCE(at, until), ?) WHERE task_id = ?", at, taskId);
  }

  /**
   * The task is gone from the queue (cancelled): it waits no more, and a provisional start of its is recorded as now
   * (a run may have begun a step; counting it later than it was is safe).
   */
  leave(taskId: string, now: number): void {
    this.sql.exec("DELETE FROM start_waiters WHERE task_id = ?", taskId);
    this.sql.exec("UPDATE starts SET at = MIN(until, ?) WHERE task_id = ? AND at IS NULL", now, taskId);
  }

  /** Starts counted in the window now (null: the key has no queued rate limit). */
  windowCount(periodMs: number | null, now: number): number | null {
    if (periodMs === null) return null;
    this.prune(periodMs, now);
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM starts").one().n;
  }

  waiting(now: number): number {
    this.sql.exec("DELETE FROM start_waiters WHERE expires_at <= ?", now);
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM start_waiters").one().n;
  }

  /** Lapsed provisional starts count from their lease's end; starts older than the period leave. */
  private prune(periodMs: number, now: number): void {
    this.sql.exec("UPDATE starts SET at = until WHERE at IS NULL AND until <= ?", now);
    this.sql.exec("DELETE FROM starts WHERE at IS NOT NULL AND at <= ?", now - periodMs);
  }

  private leaveWaiters(taskId: string): null {
    this.sql.exec("DELETE FROM start_waiters WHERE task_id = ?", taskId);
    return null;
  }

  /** Waiting tasks that asked before `taskId` and still ask (a waiter that stopped asking lapses). */
  private waitersBefore(taskId: string, now: number): number {
    this.sql.exec("DELETE FROM start_waiters WHERE expires_at <= ?", now);
    return this.sql
      .exec<{ n: number }>(
        `SELECT COUNT(*) AS n FROM start_waiters
         WHERE seq < COALESCE((SELECT seq FROM start_waiters WHERE task_id = ?), (SELECT MAX(seq) + 1 FROM start_waiters))`,
        taskId,
      )
      .one().n;
  }
}
