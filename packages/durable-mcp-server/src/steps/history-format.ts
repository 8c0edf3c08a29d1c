import { TaskHistoryError } from "../errors/history-errors.js";
import { MAX_HISTORY_BYTES, MAX_STEP_NAME_LENGTH } from "../limits.js";
import type { StepKind, StepRecord, StepState } from "./step-record.js";

// A task's history as a document: what `mcp.exportHistory` writes (runner/task-history.ts) and the replay check reads
// (steps/replay-check.ts). Its steps are the journal's rows with their values as JSON, spilled results inline; never
// the task's step-key salt nor its idempotency keys.

/** The `format` of every history document. */
export const HISTORY_FORMAT = "durable-mcp-server/history";
/** The one `version` this library writes and reads. */
export const HISTORY_VERSION = 1;

/**
 * One journaled step of a task history: which use of its name it was, its kind and state, and what it ended with.
 * @example
 * ```ts
 * import type { TaskHistoryStep } from "durable-mcp-server";
 *
 * const label = (step: TaskHistoryStep) => `${step.name}#${step.occurrence} ${step.kind}`;
 * ```
 */
export interface TaskHistoryStep {
  name: string;
  /** Which use of `name` it was, from 1 (0 for a `step.patched` marker). */
  occurrence: number;
  kind: StepKind;
  state: StepState;
  /** Its value as JSON (a `do` result, an answer, an event); absent when it had none. */
  result?: unknown;
  /** `{ name, message }` of the failure that ended it; null when none did. */
  error: { name: string; message: string; [key: string]: unknown } | null;
  /** Attempts started (a `do` step); 0 for the other kinds. */
  attempts: number;
  /** What an input step asked, or the type an event step waits for. */
  request?: unknown;
}

/**
 * A task's history as `mcp.exportHistory` gives it and `replayHistory` checks it: a versioned JSON document, to
 * commit beside the tests of the handler it came from.
 * @example
 * ```ts
 * import type { TaskHistory } from "durable-mcp-server";
 *
 * const stepsOf = (history: TaskHistory) => history.steps.map((step) => step.name);
 * ```
 */
export interface TaskHistory {
  format: typeof HISTORY_FORMAT;
  version: typeof HISTORY_VERSION;
  /** The task's tool (its `registerTask` name). */
  tool: string;
  /** The handler's validated input. */
  input: unknown;
  /** The journal, in the order its steps were first written. */
  steps: TaskHistoryStep[];
  /** When it was exported (ISO 8601). */
  exportedAt: string;
}

/** A journal row as a history step; `result` is the row's JSON text (a spilled result already read back). */
export function historyStep(record: StepRecord, result: string | null): TaskHistoryStep {
  const step: TaskHistoryStep = {
    name: record.name,
    occurrence: record.occurrence,
    kind: record.kind,
    state: record.state,
    ...(result === null ? {} : { result: JSON.parse(result) as unknown }),
    error: record.error === null ? null : (JSON.parse(record.error) as TaskHistoryStep["error"]),
    attempts: record.attempts,
  };
  if (record.request !== null) step.request = JSON.parse(record.request) as unknown;
  return step;
}

/** A history step as the journal row a replay reads. */
export function historyRecord(step: TaskHistoryStep): StepRecord {
  return {
    name: step.name,
    occurrence: step.occurrence,
    kind: step.kind,
    state: step.state,
    attempts: step.attempts,
    result: "result" in step ? JSON.stringify(step.result) : null,
    error: step.error === null ? null : JSON.stringify(step.error),
    wakeAt: null,
    request: step.request === undefined ? null : JSON.stringify(step.request),
  };
}

const KINDS: ReadonlySet<string> = new Set(["do", "sleep", "input", "event", "webhook", "patch", "invoke"]);
const STATES: ReadonlySet<string> = new Set(["running", "waiting", "done", "failed"]);

/**
 * Reads a history document (its JSON text, or the parsed value), or throws TaskHistoryError naming what is wrong:
 * over MAX_HISTORY_BYTES, not JSON, another format, a future version, or a field that is not what it must be.
 */
export function parseHistory(document: unknown): TaskHistory {
  const text = typeof document === "string" ? document : JSON.stringify(document);
  const bytes = text === undefined ? 0 : new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_HISTORY_BYTES) {
    throw new TaskHistoryError("too_large", `the history is ${bytes} bytes; at most ${MAX_HISTORY_BYTES} are read`);
  }
  let value: unknown = document;
  if (typeof document === "string") {
    try {
      value = JSON.parse(document);
    } catch (error) {
      throw new TaskHistoryError("malformed", `the history is not JSON: ${(error as Error).message}`);
    }
  }
  const history = value as Partial<TaskHistory> | null;
  if (typeof history !== "object" || history === null || Array.isArray(history)) malformed("it is not an object");
  if (history.format !== HISTORY_FORMAT) malformed(`"format" must be "${HISTORY_FORMAT}"`);
  if (history.version !== HISTORY_VERSION) {
    if (typeof history.version === "number" && Number.isInteger(history.version) && history.version > 0) {
      throw new TaskHistoryError(
        "unsupported_version",
        `the history is version ${history.version}; this library reads version ${HISTORY_VERSION}`,
      );
    }
    malformed(`"version" must be ${HISTORY_VERSION}`);
  }
  if (typeof history.tool !== "string" || history.tool.length === 0) malformed(`"tool" must be a non-empty string`);
  if (!("input" in history)) malformed(`"input" is missing`);
  if (typeof history.exportedAt !== "string") malformed(`"exportedAt" must be a string`);
  if (!Array.isArray(history.steps)) malformed(`"steps" must be an array`);
  const seen = new Set<string>();
  history.steps.forEach((step, index) => checkStep(step, `steps[${index}]`, seen));
  return history as TaskHistory;
}

function checkStep(step: Partial<TaskHistoryStep> | null, at: string, seen: Set<string>): void {
  if (typeof step !== "object" || step === null || Array.isArray(step)) malformed(`${at} is not an object`);
  const { name, occurrence, kind, state, attempts, error } = step;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_LENGTH) {
    malformed(`${at}.name must be a string of 1 to ${MAX_STEP_NAME_LENGTH} characters`);
  }
  if (typeof kind !== "string" || !KINDS.has(kind)) malformed(`${at}.kind must be one of ${[...KINDS].join(", ")}`);
  const first = kind === "patch" ? 0 : 1;
  if (!Number.isInteger(occurrence) || occurrence! < first || (kind === "patch" && occurrence !== 0)) {
    malformed(`${at}.occurrence must be ${kind === "patch" ? "0 for a patch marker" : "an integer from 1"}`);
  }
  if (typeof state !== "string" || !STATES.has(state))
    malformed(`${at}.state must be one of ${[...STATES].join(", ")}`);
  if (!Number.isInteger(attempts) || attempts! < 0) malformed(`${at}.attempts must be an integer from 0`);
  if (error !== null && (typeof error !== "object" || typeof error?.name !== "string")) {
    malformed(`${at}.error must be null or { name, message }`);
  }
  const key = `${occurrence}:${name}`;
  if (seen.has(key)) malformed(`${at} repeats step "${name}" occurrence ${occurrence}`);
  seen.add(key);
}

function malformed(detail: string): never {
  throw new TaskHistoryError("malformed", `not a task history: ${detail}`);
}
