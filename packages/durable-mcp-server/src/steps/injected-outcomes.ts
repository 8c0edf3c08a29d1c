import type { StepRecord } from "./step-record.js";

// Step outcomes the testing seam (durable-mcp-server/testing) injected: a table of their own, never journal rows. The
// engine consults them where a `step.do` would run its body — a new step, or one due for a retry — and then journals
// the outcome as that step's own result, so the journal only ever holds steps a run reached. A deployed Worker has
// no seam, so the table stays empty there and the engine's lookup is one read per run.

/** An injected `step.do` outcome: its result (JSON text) or its failure (the error JSON a failed step keeps). */
export interface InjectedOutcome {
  name: string;
  occurrence: number;
  state: "done" | "failed";
  result: string | null;
  error: string | null;
}

interface InjectedRow extends Record<string, SqlStorageValue> {
  name: string;
  occurrence: number;
  state: string;
  result: string | null;
  error: string | null;
}

/** The injected outcomes of a task, keyed by `${occurrence}:${name}` (the engine's step key). */
export function loadInjectedOutcomes(sql: SqlStorage): Map<string, InjectedOutcome> | undefined {
  const rows = sql.exec<InjectedRow>("SELECT name, occurrence, state, result, error FROM injected_steps").toArray();
  if (rows.length === 0) return undefined;
  return new Map(
    rows.map((row) => [
      `${row.occurrence}:${row.name}`,
      {
        name: row.name,
        occurrence: row.occurrence,
        state: row.state === "failed" ? "failed" : "done",
        result: row.result,
        error: row.error,
      },
    ]),
  );
}

/** The journal record a step that took `injected` gets, over its row so far (`prior`, undefined when new). */
export function injectedRecord(
  injected: InjectedOutcome,
  prior: StepRecord | undefined,
  idempotencyKey: string,
): StepRecord {
  return {
    name: injected.name,
    occurrence: injected.occurrence,
    kind: "do",
    state: injected.state,
    attempts: Math.max(prior?.attempts ?? 0, 1),
    result: injected.result,
    error: injected.error,
    wakeAt: null,
    request: null,
    idempotencyKey,
  };
}
