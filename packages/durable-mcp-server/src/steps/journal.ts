// The step journal: the SQLite ledger of one task's steps (StepJournal). Two jobs live beside it: the held-row writer
// (held-rows.ts, a new step's first attempt written with its neighbours in one statement) and the pack codec
// (packed-steps.ts, a run of finished steps kept in the row before them). This module imports both; neither imports
// it. The record types (step-record.ts) are re-exported here, where the engine and the runner import them from.
import { MAX_STEP_ATTEMPTS_KEPT } from "../limits.js";
import { HeldRows, type FirstAttempt } from "./held-rows.js";
import { decodePack, packedRecord, packedTimelineRow } from "./packed-steps.js";
import {
  parseStepLabel,
  SPILLED_PREFIX,
  stepLabel,
  type AttemptHistoryEntry,
  type StepKind,
  type StepRecord,
  type StepState,
  type StepTimelineEntry,
  type TimelineRow,
} from "./step-record.js";

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

/** Every step a row stands for, in journal order: its own, then those packed into it. */
function recordsOf(rows: StepRow[]): StepRecord[] {
  const records: StepRecord[] = [];
  for (const row of rows) {
    records.push(fromRow(row));
    if (row.pack !== null) for (const packed of decodePack(row.pack)) records.push(packedRecord(packed));
  }
  return records;
}

/**
 * The SQLite step ledger of one task. `load()` reads the whole journal in one query per run, so resuming a
 * long task costs one read, not one per past step.
 *
 * The first attempt of a new `do` step is held in memory and written later, with the rows held beside it, in one
 * statement (HeldRows). Every other method writes the held rows first, so journal order and every read are as if
 * they had been written at once.
 */
export class StepJournal {
  private readonly held: HeldRows;

  constructor(private readonly sql: SqlStorage) {
    this.held = new HeldRows(sql);
  }

  /** Every step, in journal order (the order they were first written). */
  load(): StepRecord[] {
    this.held.forgetFailedWrite();
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
   * yet (see HeldRows); the caller passes the handle to finishFirstAttempt.
   */
  beginFirstAttempt(record: StepRecord, now: number): FirstAttempt {
    return this.held.begin(record, now);
  }

  /** The first attempt succeeded with `result`: its held row becomes `done`, or its written row is updated. */
  finishFirstAttempt(attempt: FirstAttempt, result: string | null, now: number): void {
    this.held.finish(attempt, result, now);
  }

  /**
   * Writes the held rows now, in the order their steps started (a run of steps that returned as one row, PackedStep);
   * throws if an earlier write of them failed.
   */
  flush(): void {
    this.held.flush();
  }

  /** When the task's first step began (null: none has yet), held rows included. */
  firstStartedAt(): number | null {
    this.flush();
    return this.sql.exec<{ at: number | null }>("SELECT MIN(started_at) AS at FROM steps").one().at;
  }

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
      for (const packed of decodePack(row.pack)) expanded.push(packedTimelineRow(packed, row));
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

  /** Attempts past each `do` step's first, over the whole task (packed steps took one attempt each). */
  retryCount(): number {
    this.flush();
    return this.sql
      .exec<{ n: number }>("SELECT COALESCE(SUM(MAX(attempts - 1, 0)), 0) AS n FROM steps WHERE kind = 'do'")
      .one().n;
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
        for (const [name, occurrence] of decodePack(row.pack)) labels.push(stepLabel(name, occurrence));
    }
    return labels;
  }
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
