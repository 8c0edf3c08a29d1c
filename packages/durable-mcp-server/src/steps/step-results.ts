import { NonRetryableError as WorkflowsNonRetryableError } from "cloudflare:workflows";
import {
  describeError,
  InputTimeoutError,
  InputUnavailableError,
  NonRetryableError,
  StepFailedError,
  StepResultError,
} from "../errors/errors.js";
import { MAX_STEP_RESULT_BYTES } from "../limits.js";
import type { TaskEventSink } from "../task-events.js";
import { SPILLED_PREFIX, stepLabel, type StepRecord } from "./step-record.js";
import type { InputRequest, Serializable } from "./types.js";

// What a step's outcome is journaled as, and what a journaled outcome reads back as: result text (inline, or spilled
// to R2 past the journal's cap) and the failures a replay throws again.

/**
 * Whether `value` reads back from its JSON text as itself, so that a step can return it without parsing the text it
 * was just serialized to: strings, booleans, null and finite numbers other than -0 (which JSON writes as 0).
 */
export function sameAsJson(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    default:
      return value === null;
  }
}

/** Where results too large for the journal go. */
export interface ResultSpill {
  /** Stores the JSON text of step `name`'s result; returns the key to journal. */
  put(name: string, text: string): Promise<string>;
  get(key: string): Promise<string>;
}

/** Stores `text` (step `label`'s result) in the spill and returns what the journal keeps in its place. */
export async function spillResult(
  spill: ResultSpill,
  event: TaskEventSink,
  label: string,
  text: string,
): Promise<string> {
  const key = await spill.put(label, text);
  event("step_result_spilled", { step: label, bytes: utf8Length(text) });
  return `${SPILLED_PREFIX}${key}`;
}

/** The spill key a journaled result refers to, or null when the result is inline JSON text (or none). */
export function spilledKey(stored: string | null): string | null {
  return stored?.startsWith(SPILLED_PREFIX) ? stored.slice(SPILLED_PREFIX.length) : null;
}

export function parseJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}

/** UTF-8 size of `text`: exact above a third of the journal cap; below it, a count that is also under the cap. */
export function utf8Length(text: string): number {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: only long texts need the exact count.
  return text.length * 3 <= MAX_STEP_RESULT_BYTES ? text.length : new TextEncoder().encode(text).byteLength;
}

/** The JSON text a step result is journaled as; StepResultError when it is not JSON or over `limit` bytes. */
export function serializeResult(step: string, value: unknown, limit: number): string | null {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value as Serializable);
  } catch (error) {
    throw new StepResultError(`step "${step}" returned a value that is not JSON: ${describeError(error).message}`);
  }
  if (text === undefined) throw new StepResultError(`step "${step}" returned a value that is not JSON`);
  const bytes = utf8Length(text);
  if (bytes > limit) {
    throw new StepResultError(
      `step "${step}" returned ${bytes} bytes of JSON; a step result may be at most ${limit} bytes`,
    );
  }
  return text;
}

/**
 * Whether a `step.do` failure is final at once: our NonRetryableError or Cloudflare Workflows' (so handlers ported
 * from Workflows keep their meaning), subclasses included whatever `name` they set. A name alone is not enough: an
 * unrelated error that merely calls itself "NonRetryableError" is retried like any other.
 */
export function isNonRetryable(error: unknown): boolean {
  return error instanceof NonRetryableError || error instanceof WorkflowsNonRetryableError;
}

/** What a failed `step.do` throws, on the run that failed it and on every replay. */
export function stepFailure(record: StepRecord): StepFailedError {
  const cause = record.error
    ? (JSON.parse(record.error) as { name: string; message: string; nonRetryable?: boolean })
    : { name: "Error", message: "step failed" };
  return new StepFailedError(
    stepLabel(record.name, record.occurrence),
    record.attempts,
    cause.name,
    cause.message,
    cause.nonRetryable,
  );
}

/** What a failed input step throws again on replay: the timeout, or the question its client could not answer. */
export function inputFailure(record: StepRecord, label: string): Error {
  const error = record.error ? (JSON.parse(record.error) as { name?: string; capability?: string }) : {};
  if (error.name === "InputUnavailableError") {
    const method = record.request ? (JSON.parse(record.request) as InputRequest).method : "unknown";
    return new InputUnavailableError(label, method, error.capability ?? "unknown");
  }
  return new InputTimeoutError(label);
}
