import { MAX_STEP_ATTEMPTS_KEPT } from "../limits.js";

/** One row of the step journal: the durable memory of what a task's handler has already done. */
export interface StepRecord {
  name: string;
  /**
   * Which use of `name` in the run this step is, counted from 1 across every kind of step (as in Cloudflare
   * Workflows). A journal row is keyed by (name, occurrence). Patch markers use 0: they are not steps.
   */
  occurrence: number;
  kind: StepKind;
  state: StepState;
  /** Attempts started so far (a `do` step writes it before each attempt runs). */
  attempts: number;
  /** JSON text of the step's value (a `do` result or an input answer); null when it had none. */
  result: string | null;
  /** JSON `{ name, message }` of the failure that ended the step. */
  error: string | null;
  /** When a waiting step may go on: retry time, sleep end, or input timeout (ms since epoch). */
  wakeAt: number | null;
  /** JSON `{ method, params }` of an input request. */
  request: string | null;
  /**
   * A `do` step's idempotency key as its row keeps it: DERIVED_KEY for a step first attempted since keys are
   * derived when a body reads them; the key itself for a step first attempted before (kept for good: a step is never
   * re-keyed); null for a row the testing seam injected ahead of the handler.
   */
  idempotencyKey?: string | null;
}

/** `event` and `webhook` are reserved for external events; `patch` is a `step.patched` marker. */
export type StepKind = "do" | "sleep" | "input" | "event" | "webhook" | "patch";

/**
 * The `idempotency_key` of a step whose key is not stored: HMAC(salt, `${occurrence}:${name}`) is deterministic,
 * so it is derived whenever a body reads it (engine.ts LiveAttempt), the same on every attempt, replay and run.
 */
export const DERIVED_KEY = "";

/** The occurrence a patch marker is journaled under: steps count from 1, so a marker never takes a step's key. */
export const PATCH_OCCURRENCE = 0;

/**
 * How a step is named to people and on the wire: its name, then `#n` from its second use on (`confirm`,
 * `confirm#2`). An input request's key in `inputRequests` / `inputResponses` is this label.
 */
export function stepLabel(name: string, occurrence: number): string {
  return occurrence <= 1 ? name : `${name}#${occurrence}`;
}

/** The step a label names: `name#n` (n ≥ 2) is use n of `name`; anything else is the first use of itself. */
export function parseStepLabel(label: string): { name: string; occurrence: number } {
  const match = /^(.+)#([1-9][0-9]{0,8})$/.exec(label);
  if (match && Number(match[2]) >= 2) return { name: match[1]!, occurrence: Number(match[2]) };
  return { name: label, occurrence: 1 };
}

/** One step as the timeline shows it (`tasks/get` with `_meta["durable-mcp-server/steps"]: true`). */
export interface StepTimelineEntry {
  name: string;
  /** Which use of `name` this is (from 1; 0 for a patch marker). */
  occurrence: number;
  kind: StepKind;
  state: StepState;
  attempts: number;
  /** Null for steps journaled before the timeline existed. */
  startedAt: string | null;
  updatedAt: string;
  /** Until the last change: for a finished step, how long it took; for a live one, so far. */
  durationMs: number | null;
  /**
   * A `do` step's attempts as they were timed, oldest first: at most MAX_STEP_ATTEMPTS_KEPT (the newest), and none
   * from before the history existed, so `attempts` (the count) may be larger than this list is long.
   */
  attemptHistory?: AttemptHistoryEntry[];
  /** Bytes of the journaled result (a `do` result or an input answer) when kept in SQLite; null otherwise. */
  resultBytes?: number | null;
}

/** One attempt of a `do` step: when it started and ended (null while it runs, or if it was interrupted). */
export interface AttemptHistoryEntry {
  n: number;
  startedAt: string;
  endedAt: string | null;
  /** Why the attempt failed (the thrown error's name and message). */
  error?: { name: string; message: string };
}
/** running: an attempt started; waiting: a retry, sleep or input is pending; done / failed: final. */
export type StepState = "running" | "waiting" | "done" | "failed";

interface StepRow extends Record<string, SqlStorageValue> {
  name: string;
  occurrence: number;
  kind: string;
  state: string;
  attempts: number;
  result: string | null;
  error: string | null;
  wake_at: number | null;
  request: string | null;
  idempotency_key: string | null;
  pack: string | null;
}

/** How the engine marks a result spilled to R2 (engine.ts `SPILLED`): the row holds the key, not the value. */
const SPILLED_PREFIX = "@r2:";

const INSERT = `INSERT INTO steps (name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at,
  started_at, idempotency_key, attempt_started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** One journal write: a new row, or the step's row updated (its first write sets `started_at`, for good). */
const UPSERT = `${INSERT} ON CONFLICT (name, occurrence) DO UPDATE SET state = excluded.state, attempts = excluded.attempts,
  result = excluded.result, error = excluded.error, wake_at = excluded.wake_at, request = excluded.request,
  updated_at = excluded.updated_at, idempotency_key = COALESCE(steps.idempotency_key, excluded.idempotency_key),
  attempt_started_at = CASE WHEN excluded.attempts >= 2 THEN NULL
    ELSE COALESCE(excluded.attempt_started_at, steps.attempt_started_at) END`;

/** The bindings of INSERT for `record` written at `now`; a `do` step's attempt 1 is timed in its row (see write). */
function rowValues(record: StepRecord, now: number): SqlStorageValue[] {
  return [
    record.name,
    record.occurrence,
    record.kind,
    record.state,
    record.attempts,
    record.result,
    record.error,
    record.wakeAt,
    record.request,
    now,
    now,
    record.idempotencyKey ?? null,
    record.kind === "do" && record.state === "running" && record.attempts === 1 ? now : null,
  ];
}

const STEP_COLUMNS = "name, occurrence, kind, state, attempts, result, error, wake_at, request, idempotency_key, pack";

/**
 * A step packed into the row before it (the `pack` column, schema 11: a JSON array of these, in journal order): a
 * new `do` step that succeeded at its first attempt, written in the same batch as that row and right after it. Its
 * row would have been kind `do`, state `done`, attempts 1, key DERIVED_KEY, attempt 1 timed from its start to its
 * result; so only what varies is kept: [name, occurrence, result], and [started, updated] when those differ from the
 * row's own `started_at` / `updated_at`. A packed step is final: nothing ever writes it again (a `done` step is
 * never retried, re-injected or answered), so it needs no row of its own to update, and (name, occurrence) stays
 * unique because the engine claims each key once and replays every packed step as journaled.
 */
type PackedStep = [name: string, occurrence: number, result: string | null, startedAt?: number, updatedAt?: number];

/** The steps packed into `row`, as the records they stand for (see PackedStep). */
function unpack(pack: string): PackedStep[] {
  return JSON.parse(pack) as PackedStep[];
}

function packedRecord([name, occurrence, result]: PackedStep): StepRecord {
  return {
    name,
    occurrence,
    kind: "do",
    state: "done",
    attempts: 1,
    result,
    error: null,
    wakeAt: null,
    request: null,
    idempotencyKey: DERIVED_KEY,
  };
}

/** Every step a row stands for, in journal order: its own, then those packed into it. */
function recordsOf(rows: StepRow[]): StepRecord[] {
  const records: StepRecord[] = [];
  for (const row of rows) {
    records.push(fromRow(row));
    if (row.pack !== null) for (const packed of unpack(row.pack)) records.push(packedRecord(packed));
  }
  return records;
}

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
/** A held step that returned, with the steps packed into its row (PackedStep[] as JSON text). */
const INSERT_PACKED = `INSERT INTO steps (name, occurrence, kind, state, attempts, result, pack, started_at, updated_at,
  idempotency_key, attempt_started_at) VALUES (?1, ?2, 'do', 'done', 1, ?3, ?4, ?5, ?6, '${DERIVED_KEY}', ?5)`;

/**
 * The SQLite step ledger of one task. `load()` reads the whole journal in one query per run, so resuming a
 * long task costs one read, not one per past step.
 *
 * The first attempt of a new `do` step is held in memory and written later, with the rows held beside it, in one
 * statement: a step that succeeds at once then costs a share of one statement instead of two statements (its
 * `running` row and its result). Held rows are always in SQLite before anything could observe or commit the
 * database: every other method of the journal writes them first (so journal order and every read are as if they
 * had been written at once), and a promise reaction that keeps re-queuing itself while they are held writes them
 * before the run's microtasks drain. The object's event loop (a commit of the implicit transaction, a request, a
 * timer, an I/O completion) only runs once no microtask is queued, so a held row is never missing from a commit, an
 * answer or a crash that a direct write would have been in; a body that awaits I/O finds its `running` row written
 * before the I/O's completion can run.
 */
export class StepJournal {
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

  /** Every step, in journal order (the order they were first written). */
  load(): StepRecord[] {
    // A run starts from what was written: rows a failed write lost (its run failed) are not in the journal.
    if (this.failure !== undefined) this.held = [];
    this.failure = undefined;
    this.flush();
    return recordsOf(this.sql.exec<StepRow>(`SELECT ${STEP_COLUMNS} FROM steps ORDER BY seq`).toArray());
  }

  write(record: StepRecord, now: number): void {
    this.flush();
    const timed = record.kind === "do" && record.attempts >= 2;
    // Attempt 1 is kept in the step's own row (attempt_started_at), so that a step that succeeds at once costs one
    // statement per write; from attempt 2 on, attempts go to step_attempts, attempt 1 first.
    if (timed && record.state === "running") this.archiveFirstAttempt(record);
    this.sql.exec(UPSERT, ...rowValues(record, now));
    if (timed) this.writeAttempt(record, now);
  }

  /**
   * Attempt 1 of a `do` step the journal has no row for starts (`record` is its `running` row). Held, not written
   * yet (see the class comment); the caller passes the handle to finishFirstAttempt.
   */
  beginFirstAttempt(record: StepRecord, now: number): FirstAttempt {
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
  finishFirstAttempt(attempt: FirstAttempt, result: string | null, now: number): void {
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
      if (attempt.state === "done" && last?.head.state === "done") {
        const { record, result, startedAt, updatedAt } = attempt;
        const packed: PackedStep = [record.name, record.occurrence, result];
        if (startedAt !== last.head.startedAt || updatedAt !== last.head.updatedAt) packed.push(startedAt, updatedAt);
        (last.pack ??= []).push(packed);
      } else rows.push((last = { head: attempt, pack: null }));
    }
    try {
      // Rows without a pack go out together through json_each; a row with one is bound on its own, its pack as one
      // text value (inside the batch's JSON SQLite would parse it and write it out again).
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
          JSON.stringify(pack),
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

  /**
   * Before attempt 2 starts: attempt 1, timed in the step's row, becomes step_attempts' first row (ended when the
   * row says so, with its error). A row from before the row kept it (attempt_started_at NULL) moves nothing.
   */
  private archiveFirstAttempt(record: StepRecord): void {
    this.sql.exec(
      `INSERT OR REPLACE INTO step_attempts (name, occurrence, slot, n, started_at, ended_at, error)
       SELECT name, occurrence, 0, 1, attempt_started_at,
         CASE WHEN state = 'running' THEN NULL ELSE updated_at END,
         CASE WHEN state IN ('waiting', 'failed') THEN error END
       FROM steps WHERE name = ? AND occurrence = ? AND attempts = 1 AND attempt_started_at IS NOT NULL`,
      record.name,
      record.occurrence,
    );
  }

  /**
   * A `do` step's attempt from the second on, kept beside the row the engine just wrote (same synchronous call,
   * hence the same implicit transaction): "running" starts attempt `attempts`, in the slot of the oldest kept one;
   * any other state ends it, with the error when it failed. One statement either way.
   */
  private writeAttempt(record: StepRecord, now: number): void {
    if (record.state === "running") {
      this.sql.exec(
        `INSERT OR REPLACE INTO step_attempts (name, occurrence, slot, n, started_at, ended_at, error)
         VALUES (?, ?, ?, ?, ?, NULL, NULL)`,
        record.name,
        record.occurrence,
        (record.attempts - 1) % MAX_STEP_ATTEMPTS_KEPT,
        record.attempts,
        now,
      );
    } else {
      this.sql.exec(
        `UPDATE step_attempts SET ended_at = ?, error = ?
         WHERE name = ? AND occurrence = ? AND n = ? AND ended_at IS NULL`,
        now,
        record.state === "done" ? null : record.error,
        record.name,
        record.occurrence,
        record.attempts,
      );
    }
  }

  /**
   * The steps as a timeline, oldest first: the last `limit` of `total`. A step's duration runs from its first
   * journal write to its last (for a `do` step: first attempt started → result or final failure).
   */
  timeline(limit: number): { total: number; steps: StepTimelineEntry[] } {
    this.flush();
    // Packed steps count as the steps they are (PackedStep).
    const total = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) + COALESCE(SUM(json_array_length(pack)), 0) AS n FROM steps")
      .one().n;
    // The last `limit` rows hold at least the last `limit` steps: each row is one step or more.
    const rows = this.sql
      .exec<TimelineRow>(
        // A spilled result (its R2 key in the row) has no size here: null.
        `SELECT name, occurrence, kind, state, attempts, started_at, updated_at, error, attempt_started_at, pack,
           CASE WHEN result IS NULL OR result LIKE '${SPILLED_PREFIX}%' THEN NULL
             ELSE LENGTH(CAST(result AS BLOB)) END AS result_bytes FROM
           (SELECT * FROM steps ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
        limit,
      )
      .toArray();
    const expanded: TimelineRow[] = [];
    for (const row of rows) {
      expanded.push(row);
      if (row.pack === null) continue;
      for (const [name, occurrence, result, startedAt, updatedAt] of unpack(row.pack)) {
        const started = startedAt ?? row.started_at!;
        const updated = updatedAt ?? row.updated_at;
        expanded.push({
          name,
          occurrence,
          kind: "do",
          state: "done",
          attempts: 1,
          started_at: started,
          updated_at: updated,
          error: null,
          attempt_started_at: started,
          pack: null,
          result_bytes: result === null || result.startsWith(SPILLED_PREFIX) ? null : utf8Bytes(result),
        });
      }
    }
    const history = this.attemptsOf(limit);
    return {
      total,
      steps: expanded.slice(-limit).map((row) => ({
        name: row.name,
        occurrence: row.occurrence,
        kind: row.kind as StepKind,
        state: row.state as StepState,
        attempts: row.attempts,
        startedAt: row.started_at === null ? null : new Date(row.started_at).toISOString(),
        updatedAt: new Date(row.updated_at).toISOString(),
        durationMs: row.started_at === null ? null : row.updated_at - row.started_at,
        resultBytes: row.result_bytes,
        ...(row.kind === "do"
          ? { attemptHistory: history.get(`${row.occurrence}:${row.name}`) ?? rowAttempt(row) }
          : {}),
      })),
    };
  }

  /** The kept attempts of the last `limit` steps, by `occurrence:name`, oldest first: one query. */
  private attemptsOf(limit: number): Map<string, AttemptHistoryEntry[]> {
    const rows = this.sql
      .exec<{
        name: string;
        occurrence: number;
        n: number;
        started_at: number;
        ended_at: number | null;
        error: string | null;
      }>(
        `SELECT a.name, a.occurrence, a.n, a.started_at, a.ended_at, a.error FROM step_attempts a
           JOIN (SELECT name, occurrence FROM steps ORDER BY seq DESC LIMIT ?) s
             ON s.name = a.name AND s.occurrence = a.occurrence
         ORDER BY a.n`,
        limit,
      )
      .toArray();
    const byStep = new Map<string, AttemptHistoryEntry[]>();
    for (const row of rows) {
      const key = `${row.occurrence}:${row.name}`;
      const attempt: AttemptHistoryEntry = {
        n: row.n,
        startedAt: new Date(row.started_at).toISOString(),
        endedAt: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
      };
      if (row.error !== null) attempt.error = JSON.parse(row.error) as { name: string; message: string };
      const list = byStep.get(key);
      if (list) list.push(attempt);
      else byStep.set(key, [attempt]);
    }
    return byStep;
  }

  /** Pending input requests, oldest first. */
  pendingInputs(): StepRecord[] {
    this.flush();
    return this.sql
      .exec<StepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE kind = 'input' AND state = 'waiting' ORDER BY seq`)
      .toArray()
      .map(fromRow);
  }

  /** Records an answer to a pending input request (its key is the step's label); false when not outstanding. */
  answerInput(key: string, response: string, now: number): boolean {
    this.flush();
    const { name, occurrence } = parseStepLabel(key);
    const cursor = this.sql.exec(
      `UPDATE steps SET state = 'done', result = ?, updated_at = ?
       WHERE name = ? AND occurrence = ? AND kind = 'input' AND state = 'waiting'`,
      response,
      now,
      name,
      occurrence,
    );
    return cursor.rowsWritten > 0;
  }

  /**
   * Gives an event to the oldest `step.waitForEvent` waiting for its type whose deadline has not passed; returns that
   * step's label, or null when none waits (the caller then buffers it). `event` is the journaled result's JSON.
   */
  deliverEvent(type: string, event: string, now: number): string | null {
    this.flush();
    const row = this.sql
      .exec<{ name: string; occurrence: number }>(
        `UPDATE steps SET state = 'done', result = ?, wake_at = NULL, updated_at = ?
         WHERE seq = (SELECT seq FROM steps WHERE kind = 'event' AND state = 'waiting'
           AND json_extract(request, '$.type') = ? AND (wake_at IS NULL OR wake_at > ?) ORDER BY seq LIMIT 1)
         RETURNING name, occurrence`,
        event,
        now,
        type,
        now,
      )
      .toArray()[0];
    return row ? stepLabel(row.name, row.occurrence) : null;
  }

  /** Earliest time a waiting step wants to go on, or null when none waits on a clock. */
  nextWake(): number | null {
    this.flush();
    const row = this.sql
      .exec<{ wake: number | null }>("SELECT MIN(wake_at) AS wake FROM steps WHERE state = 'waiting'")
      .one();
    return row.wake;
  }

  /** Labels of the `do` steps that finished, in order: what already succeeded. */
  completedSteps(): string[] {
    this.flush();
    const labels: string[] = [];
    for (const row of this.sql
      .exec<{ name: string; occurrence: number; pack: string | null }>(
        "SELECT name, occurrence, pack FROM steps WHERE kind = 'do' AND state = 'done' ORDER BY seq",
      )
      .toArray()) {
      labels.push(stepLabel(row.name, row.occurrence));
      if (row.pack !== null)
        for (const [name, occurrence] of unpack(row.pack)) labels.push(stepLabel(name, occurrence));
    }
    return labels;
  }
}

/** A row as the timeline reads it (and a packed step as the row it stands for). */
interface TimelineRow extends Record<string, SqlStorageValue> {
  name: string;
  occurrence: number;
  kind: string;
  state: string;
  attempts: number;
  started_at: number | null;
  updated_at: number;
  result_bytes: number | null;
  error: string | null;
  attempt_started_at: number | null;
  pack: string | null;
}

/** UTF-8 bytes of `text`, as SQLite's LENGTH(CAST(text AS BLOB)) counts them. */
function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair: 4 bytes for 2 code units.
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Attempt 1 as the step's row keeps it (see write); none for a row from before it did. */
function rowAttempt(row: {
  state: string;
  attempts: number;
  updated_at: number;
  error: string | null;
  attempt_started_at: number | null;
}): AttemptHistoryEntry[] {
  if (row.attempt_started_at === null) return [];
  const attempt: AttemptHistoryEntry = {
    n: row.attempts,
    startedAt: new Date(row.attempt_started_at).toISOString(),
    endedAt: row.state === "running" ? null : new Date(row.updated_at).toISOString(),
  };
  if ((row.state === "waiting" || row.state === "failed") && row.error !== null) {
    attempt.error = JSON.parse(row.error) as { name: string; message: string };
  }
  return [attempt];
}

function fromRow(row: StepRow): StepRecord {
  return {
    name: row.name,
    occurrence: row.occurrence,
    kind: row.kind as StepKind,
    state: row.state as StepState,
    attempts: row.attempts,
    result: row.result,
    error: row.error,
    wakeAt: row.wake_at,
    request: row.request,
    idempotencyKey: row.idempotency_key,
  };
}
