// The pack codec (schema 11, `steps.pack`): a run of finished steps kept in the row before them. The held-row writer
// (held-rows.ts) encodes packs; every reader of the journal (journal.ts: load, timeline, completed steps) expands
// them into the steps they stand for through here, so what a packed step means is said in one place.
import { DERIVED_KEY, SPILLED_PREFIX, type StepRecord, type TimelineRow } from "./step-record.js";

/**
 * A step packed into the row before it (the `pack` column: a JSON array of these, in journal order): a new `do` step
 * that succeeded at its first attempt, written in the same batch as that row and right after it. Its row would have
 * been kind `do`, state `done`, attempts 1, key DERIVED_KEY, attempt 1 timed from its start to its result; so only
 * what varies is kept: [name, occurrence, result], and [started, updated] when those differ from the row's own
 * `started_at` / `updated_at`. A packed step is final: nothing ever writes it again (a `done` step is never retried,
 * re-injected or answered), so it needs no row of its own to update, and (name, occurrence) stays unique because the
 * engine claims each key once and replays every packed step as journaled.
 */
export type PackedStep = [
  name: string,
  occurrence: number,
  result: string | null,
  startedAt?: number,
  updatedAt?: number,
];

/** When a step started and last changed (ms since epoch): a packed step's own, or the row it is packed into. */
export interface PackTimes {
  startedAt: number;
  updatedAt: number;
}

/** A finished first attempt as the writer holds it (held-rows.ts FirstAttempt), as much as packing reads. */
export interface PackableStep extends PackTimes {
  record: { name: string; occurrence: number };
  result: string | null;
}

/** `step` as packed into a row whose own times are `row`'s: its times are kept only where they differ. */
export function packStep(step: PackableStep, row: PackTimes): PackedStep {
  const packed: PackedStep = [step.record.name, step.record.occurrence, step.result];
  if (step.startedAt !== row.startedAt || step.updatedAt !== row.updatedAt) packed.push(step.startedAt, step.updatedAt);
  return packed;
}

/** The `pack` column's text: bound as one value (inside a batch's JSON SQLite would parse it and write it again). */
export function encodePack(pack: PackedStep[]): string {
  return JSON.stringify(pack);
}

/** The steps a row's `pack` column holds, in journal order. */
export function decodePack(pack: string): PackedStep[] {
  return JSON.parse(pack) as PackedStep[];
}

/** A packed step as the record its own row would have been (see PackedStep). */
export function packedRecord([name, occurrence, result]: PackedStep): StepRecord {
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

/** A packed step as the timeline would have read its own row; `row` is the row it is packed into. */
export function packedTimelineRow(
  [name, occurrence, result, startedAt, updatedAt]: PackedStep,
  row: TimelineRow,
): TimelineRow {
  const started = startedAt ?? row.started_at!;
  const updated = updatedAt ?? row.updated_at;
  return {
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
    // As the timeline's query sizes a row's result: none for a spilled one (its R2 key is in the row).
    result_bytes: result === null || result.startsWith(SPILLED_PREFIX) ? null : utf8Bytes(result),
  };
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
