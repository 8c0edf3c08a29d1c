// The step journal read straight from SQLite (not through StepJournal, which would first write what it holds), one
// row per step: a row's packed steps (schema 11, packed-steps.ts PackedStep) expanded into the rows they stand for,
// with the values such a row has (a `do` step done at attempt 1, its key derived, attempt 1 timed from start to
// result).

export interface JournalRow {
  name: string;
  occurrence: number;
  kind: string;
  state: string;
  attempts: number;
  result: string | null;
  key: string | null;
  wake_at: number | null;
  started_at: number | null;
  updated_at: number;
  attempt_started_at: number | null;
}

type PackedStep = [name: string, occurrence: number, result: string | null, startedAt?: number, updatedAt?: number];

/** Every step of the journal in journal order. */
export function journalRows(sql: SqlStorage): JournalRow[] {
  const rows = sql
    .exec<JournalRow & { pack: string | null } & Record<string, SqlStorageValue>>(
      `SELECT name, occurrence, kind, state, attempts, result, idempotency_key AS key, wake_at, started_at, updated_at,
         attempt_started_at, pack FROM steps ORDER BY seq`,
    )
    .toArray();
  const out: JournalRow[] = [];
  for (const { pack, ...row } of rows) {
    out.push(row);
    if (pack === null) continue;
    for (const [name, occurrence, result, startedAt, updatedAt] of JSON.parse(pack) as PackedStep[]) {
      const started = startedAt ?? row.started_at;
      out.push({
        name,
        occurrence,
        kind: "do",
        state: "done",
        attempts: 1,
        result,
        key: "",
        wake_at: null,
        started_at: started,
        updated_at: updatedAt ?? row.updated_at,
        attempt_started_at: started,
      });
    }
  }
  return out;
}
