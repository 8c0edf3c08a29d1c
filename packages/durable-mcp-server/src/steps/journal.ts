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
  /** A `do` step's idempotency key, journaled with its first attempt and never changed after. */
  idempotencyKey?: string | null;
}

/** `event` and `webhook` are reserved for external events; `patch` is a `step.patched` marker. */
export type StepKind = "do" | "sleep" | "input" | "event" | "webhook" | "patch";

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

const STEP_COLUMNS = "name, occurrence, kind, state, attempts, result, error, wake_at, request, idempotency_key";

/**
 * The SQLite step ledger of one task. `load()` reads the whole journal in one query per run, so resuming a
 * long task costs one read, not one per past step; every change is written through at once.
 */
export class StepJournal {
  constructor(private readonly sql: SqlStorage) {}

  /** Every step, in journal order (the order they were first written). */
  load(): StepRecord[] {
    return this.sql.exec<StepRow>(`SELECT ${STEP_COLUMNS} FROM steps ORDER BY seq`).toArray().map(fromRow);
  }

  write(record: StepRecord, now: number): void {
    const timed = record.kind === "do" && record.attempts >= 2;
    // Attempt 1 is kept in the step's own row (attempt_started_at), so that a step that succeeds at once costs one
    // statement per write; from attempt 2 on, attempts go to step_attempts, attempt 1 first.
    if (timed && record.state === "running") this.archiveFirstAttempt(record);
    this.sql.exec(UPSERT, ...rowValues(record, now));
    if (timed) this.writeAttempt(record, now);
  }

  /**
   * The two writes of a `do` step that succeeds at its first attempt, as plain statements (an upsert costs about
   * twice either): its row, new, as attempt 1 starts (the caller knows the journal has no row for it)…
   */
  insertFirstAttempt(record: StepRecord, now: number): void {
    this.sql.exec(INSERT, ...rowValues(record, now));
  }

  /** …and its result, on the row written by insertFirstAttempt. */
  writeFirstResult(record: StepRecord, now: number): void {
    this.sql.exec(
      "UPDATE steps SET state = 'done', result = ?, updated_at = ? WHERE name = ? AND occurrence = ?",
      record.result,
      now,
      record.name,
      record.occurrence,
    );
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
    const total = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM steps").one().n;
    const steps = this.sql
      .exec<{
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
      }>(
        // A spilled result (its R2 key in the row) has no size here: null.
        `SELECT name, occurrence, kind, state, attempts, started_at, updated_at, error, attempt_started_at,
           CASE WHEN result IS NULL OR result LIKE '${SPILLED_PREFIX}%' THEN NULL
             ELSE LENGTH(CAST(result AS BLOB)) END AS result_bytes FROM
           (SELECT * FROM steps ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
        limit,
      )
      .toArray();
    const history = this.attemptsOf(limit);
    return {
      total,
      steps: steps.map((row) => ({
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
    return this.sql
      .exec<StepRow>(`SELECT ${STEP_COLUMNS} FROM steps WHERE kind = 'input' AND state = 'waiting' ORDER BY seq`)
      .toArray()
      .map(fromRow);
  }

  /** Records an answer to a pending input request (its key is the step's label); false when not outstanding. */
  answerInput(key: string, response: string, now: number): boolean {
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
    const row = this.sql
      .exec<{ wake: number | null }>("SELECT MIN(wake_at) AS wake FROM steps WHERE state = 'waiting'")
      .one();
    return row.wake;
  }

  /** Labels of the `do` steps that finished, in order: what already succeeded. */
  completedSteps(): string[] {
    return this.sql
      .exec<{ name: string; occurrence: number }>(
        "SELECT name, occurrence FROM steps WHERE kind = 'do' AND state = 'done' ORDER BY seq",
      )
      .toArray()
      .map((row) => stepLabel(row.name, row.occurrence));
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
