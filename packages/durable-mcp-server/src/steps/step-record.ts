// What the step journal keeps and how steps are named: the record of one step, its labels, and the shapes the
// timeline gives out. Shared by the journal (journal.ts), the pack codec (packed-steps.ts), the held-row writer
// (held-rows.ts) and the engine; it imports none of them, so the journal's modules form a tree.
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

/**
 * `event` and `webhook` are reserved for external events; `patch` is a `step.patched` marker; `invoke` is a child task
 * (`step.invoke`).
 */
export type StepKind = "do" | "sleep" | "input" | "event" | "webhook" | "patch" | "invoke";

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

/**
 * One step as the timeline shows it (`tasks/get` with `_meta["durable-mcp-server/steps"]: true`).
 * @example
 * ```ts
 * import type { StepTimelineEntry } from "durable-mcp-server";
 *
 * const waiting = (steps: StepTimelineEntry[]) =>
 *   steps.filter((entry) => entry.state === "waiting").map((entry) => entry.name);
 * ```
 */
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
  /** An `invoke` step's child: its task id and its state as the parent knows it (`working` until it told). */
  child?: { taskId: string; task: string; status: "working" | "completed" | "failed" | "cancelled" };
}

/**
 * One attempt of a `do` step: when it started and ended (null while it runs, or if it was interrupted).
 * @example
 * ```ts
 * import type { AttemptHistoryEntry } from "durable-mcp-server";
 *
 * const failures = (history: AttemptHistoryEntry[]) => history.filter((entry) => entry.error).length;
 * ```
 */
export interface AttemptHistoryEntry {
  n: number;
  startedAt: string;
  endedAt: string | null;
  /** Why the attempt failed (the thrown error's name and message). */
  error?: { name: string; message: string };
}
/**
 * running: an attempt started; waiting: a retry, sleep or input is pending; done / failed: final.
 * @example
 * ```ts
 * import type { StepState } from "durable-mcp-server/testing";
 *
 * const state: StepState = "waiting";
 * ```
 */
export type StepState = "running" | "waiting" | "done" | "failed";
/** A journaled result that starts with this is a reference to R2 (step-results.ts): the row holds the key, not the value; JSON text never starts with "@". */
export const SPILLED_PREFIX = "@r2:";

/** A row as the timeline reads it (and a packed step as the row it stands for). */
export interface TimelineRow extends Record<string, SqlStorageValue> {
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
