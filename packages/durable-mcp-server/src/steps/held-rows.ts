// The held-row writer: a new `do` step's first attempt is held in memory and written later, with the rows held beside
// it, in one statement. A step that succeeds at once then costs a share of one statement instead of two (its
// `running` row and its result). StepJournal (journal.ts) owns one and writes its rows before anything else it does.
import { encodePack, packStep, type PackedStep } from "./packed-steps.js";
import { DERIVED_KEY, type StepRecord } from "./step-record.js";

/**
 * A new `do` step's first attempt, held by the journal until it is written (see StepJournal.beginFirstAttempt):
 * its row as it stands (running, or done with its result) and when the attempt started and last changed.
 */
export interface FirstAttempt {
  /** The step's `running` row as the engine made it (not changed here). */
  record: StepRecord;
  /** Where the held row stands: `running`, or `done` with its result. */
  state: "running" | "done";
  result: string | null;
  startedAt: number;
  updatedAt: number;
  /** Written to SQLite: from then on the row is updated in place. */
  written: boolean;
}

/** Rows held before they are written in one statement; and how many characters of them (below SQLite's limits). */
const MAX_HELD_ROWS = 256;
const MAX_HELD_CHARS = 256 * 1024;
/** A result longer than this is written with its own statement rather than inside the batch's JSON. */
const MAX_BATCHED_RESULT_CHARS = 16 * 1024;
/**
 * Microtask generations with no new step or result after which held rows are written. A step whose body returns at
 * once takes a handful; the bound only decides how many rows share a statement, never whether they are written.
 */
const IDLE_HOPS = 32;
const RESOLVED = Promise.resolve();

/**
 * Held rows, written as one statement: a JSON array of [name, occurrence, state, result, started, updated]. A
 * `do` step's key is derived, not stored (DERIVED_KEY); attempt 1 is timed in its row (attempt_started_at).
 */
const INSERT_HELD = `INSERT INTO steps (name, occurrence, kind, state, attempts, result, updated_at, started_at,
  idempotency_key, attempt_started_at)
  SELECT value ->> 0, value ->> 1, 'do', value ->> 2, 1, value ->> 3, value ->> 5, value ->> 4, '${DERIVED_KEY}',
    value ->> 4 FROM json_each(?)`;
/**
 * The same when every held row started and last changed at one time (?2), as a batch of steps that return at once
 * does where the clock only moves at I/O: [name, occurrence, state, result], a third fewer extractions per row.
 */
const INSERT_HELD_AT = `INSERT INTO steps (name, occurrence, kind, state, attempts, result, updated_at, started_at,
  idempotency_key, attempt_started_at)
  SELECT value ->> 0, value ->> 1, 'do', value ->> 2, 1, value ->> 3, ?2, ?2, '${DERIVED_KEY}', ?2 FROM json_each(?1)`;
/** A held step that returned, with the steps packed into its row (packed-steps.ts encodePack). */
const INSERT_PACKED = `INSERT INTO steps (name, occurrence, kind, state, attempts, result, pack, started_at, updated_at,
  idempotency_key, attempt_started_at) VALUES (?1, ?2, 'do', 'done', 1, ?3, ?4, ?5, ?6, '${DERIVED_KEY}', ?5)`;

/**
 * The first attempts held for one journal. Held rows are always in SQLite before anything could observe or commit
 * the database: the journal writes them (flush) before every other read or write, and a promise reaction that keeps
 * re-queuing itself while they are held writes them before the run's microtasks drain. The object's event loop (a
 * commit of the implicit transaction, a request, a timer, an I/O completion) only runs once no microtask is queued,
 * so a held row is never missing from a commit, an answer or a crash that a direct write would have been in; a body
 * that awaits I/O finds its `running` row written before the I/O's completion can run.
 */
export class HeldRows {
  private held: FirstAttempt[] = [];
  private heldChars = 0;
  /** New steps and results since the writer last looked (it writes once this stops moving). */
  private changes = 0;
  private writerQueued = false;
  private seen = 0;
  private idle = 0;
  /** Why writing held rows failed: every later use in the run throws it (the run fails, as a crash would). */
  private failure: { error: unknown } | undefined;

  constructor(private readonly sql: SqlStorage) {}

  /**
   * A new run starts from what was written: rows a failed write lost (its run failed) are dropped, and the failure
   * no longer stands. Rows held without a failure are kept (the caller flushes them next).
   */
  forgetFailedWrite(): void {
    if (this.failure !== undefined) this.held = [];
    this.failure = undefined;
  }

  /** Holds attempt 1 of a step with no row yet (`record` is its `running` row); see StepJournal.beginFirstAttempt. */
  begin(record: StepRecord, now: number): FirstAttempt {
    if (this.failure !== undefined) throw this.failure.error;
    // Full: the rows held so far go out before this one joins them (most are done by now, so they pack together).
    if (this.held.length >= MAX_HELD_ROWS || this.heldChars >= MAX_HELD_CHARS) this.flush();
    const attempt: FirstAttempt = {
      record,
      state: "running",
      result: null,
      startedAt: now,
      updatedAt: now,
      written: false,
    };
    this.held.push(attempt);
    this.heldChars += record.name.length + 96;
    this.changes++;
    this.queueWriter();
    return attempt;
  }

  /** The first attempt succeeded with `result`: its held row becomes `done`, or its written row is updated. */
  finish(attempt: FirstAttempt, result: string | null, now: number): void {
    if (this.failure !== undefined) throw this.failure.error;
    this.changes++;
    // A long result is not escaped into the batch's JSON: the row goes out as running, and is updated below.
    if (!attempt.written && result !== null && result.length > MAX_BATCHED_RESULT_CHARS) this.flush();
    if (attempt.written) {
      this.sql.exec(
        "UPDATE steps SET state = 'done', result = ?, updated_at = ? WHERE name = ? AND occurrence = ?",
        result,
        now,
        attempt.record.name,
        attempt.record.occurrence,
      );
      return;
    }
    attempt.state = "done";
    attempt.result = result;
    attempt.updatedAt = now;
    this.heldChars += result === null ? 0 : result.length;
    if (this.heldChars >= MAX_HELD_CHARS) this.flush();
  }

  /**
   * Writes the held rows now, in the order their steps started; throws if an earlier write of them failed. Done
   * steps that follow a done step in the batch are packed into the first one's row (PackedStep): a run of steps that
   * returned is one row. A step still running gets a row of its own, updated in place when it ends.
   */
  flush(): void {
    if (this.failure !== undefined) throw this.failure.error;
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    this.heldChars = 0;
    // The rows to write, in order: each held attempt that is not packed into the one before it, with its pack.
    const rows: Array<{ head: FirstAttempt; pack: PackedStep[] | null }> = [];
    let last: { head: FirstAttempt; pack: PackedStep[] | null } | undefined;
    for (const attempt of held) {
      attempt.written = true;
      if (attempt.state === "done" && last?.head.state === "done")
        (last.pack ??= []).push(packStep(attempt, last.head));
      else rows.push((last = { head: attempt, pack: null }));
    }
    try {
      // Rows without a pack go out together through json_each; a row with one is bound on its own, its pack as one
      // text value.
      let from = 0;
      for (let i = 0; i < rows.length; i++) {
        const { head, pack } = rows[i]!;
        if (pack === null) continue;
        if (i > from) this.insertHeld(rows, from, i);
        from = i + 1;
        this.sql.exec(
          INSERT_PACKED,
          head.record.name,
          head.record.occurrence,
          head.result,
          encodePack(pack),
          head.startedAt,
          head.updatedAt,
        );
      }
      if (rows.length > from) this.insertHeld(rows, from, rows.length);
    } catch (error) {
      this.failure = { error };
      throw error;
    }
  }

  /** Writes rows[from, to) (none with a pack) in one statement. */
  private insertHeld(rows: Array<{ head: FirstAttempt }>, from: number, to: number): void {
    const at = rows[from]!.head.startedAt;
    let oneTime = true;
    for (let i = from; i < to; i++) {
      const { startedAt, updatedAt } = rows[i]!.head;
      if (startedAt !== at || updatedAt !== at) oneTime = false;
    }
    const values: unknown[] = [];
    for (let i = from; i < to; i++) {
      const { record, state, result, startedAt, updatedAt } = rows[i]!.head;
      values.push(
        oneTime
          ? [record.name, record.occurrence, state, result]
          : [record.name, record.occurrence, state, result, startedAt, updatedAt],
      );
    }
    if (oneTime) this.sql.exec(INSERT_HELD_AT, JSON.stringify(values), at);
    else this.sql.exec(INSERT_HELD, JSON.stringify(values));
  }

  /**
   * Keeps one promise reaction queued while rows are held, re-queuing itself until new steps stop coming
   * (IDLE_HOPS generations), then writes them: the microtask queue cannot drain, nor the event loop run, first.
   */
  private queueWriter(): void {
    if (this.writerQueued) return;
    this.writerQueued = true;
    this.seen = this.changes;
    this.idle = 0;
    void RESOLVED.then(this.look);
  }

  /** One generation of the writer: a promise reaction (cheaper here than queueMicrotask, which crosses into C++). */
  private readonly look = (): void => {
    if (this.held.length === 0 || this.failure !== undefined) {
      this.writerQueued = false;
      return;
    }
    if (this.changes !== this.seen) {
      this.seen = this.changes;
      this.idle = 0;
    } else if (++this.idle >= IDLE_HOPS) {
      this.writerQueued = false;
      try {
        this.flush();
      } catch {
        // Kept by flush and thrown to the run at its next use of the journal.
      }
      return;
    }
    void RESOLVED.then(this.look);
  };
}
