import { describeError } from "../errors/errors.js";
import { retryDelayMs, type ResolvedStepConfig } from "./retry-policy.js";
import type { Entry, StepCore } from "./step-core.js";
import { DERIVED_KEY, type StepRecord } from "./step-record.js";
import { isNonRetryable, stepFailure } from "./step-results.js";

// What `step.do` journals for an attempt besides its success, which the engine's doStep writes itself: the attempt's
// record, and the ways an attempt fails (off the hot path of a step that succeeds).

/** A `step.do` record for the attempt about to run. */
export function attemptRecord(entry: Entry, attempt: number): StepRecord {
  return {
    name: entry.name,
    occurrence: entry.occurrence,
    kind: "do",
    state: "running",
    attempts: attempt,
    result: null,
    error: null,
    wakeAt: null,
    request: null,
    // A key journaled when keys were still stored stays the step's key; otherwise it is derived when read.
    idempotencyKey: entry.record?.idempotencyKey || DERIVED_KEY,
  };
}

/** An attempt past the last one: the step was interrupted (an eviction, a crash) on its last attempt. */
export function failInterrupted(core: StepCore, base: StepRecord, label: string): never {
  const error = {
    name: "StepInterruptedError",
    message: `step "${label}" was interrupted on its last attempt`,
    nonRetryable: false,
  };
  const failed: StepRecord = { ...base, attempts: base.attempts - 1, state: "failed", error: JSON.stringify(error) };
  core.write(failed);
  throw stepFailure(failed);
}

/**
 * A failed attempt: journaled as the step's failure when the error is permanent or the attempt was the last (and
 * thrown), else as a wait for its retry (and the caller parks).
 */
export function failOrRetry(
  core: StepCore,
  error: unknown,
  base: StepRecord,
  label: string,
  policy: ResolvedStepConfig,
  startedAt: number,
): Promise<never> {
  const failed = describeError(error);
  const durationMs = core.host.now() - startedAt;
  const permanent = isNonRetryable(error);
  const attempt = base.attempts;
  if (permanent || attempt > policy.limit) {
    // Journaled with the failure: what makes it permanent is the class, not the name it carries.
    const final: StepRecord = {
      ...base,
      state: "failed",
      error: JSON.stringify({ ...failed, nonRetryable: permanent }),
    };
    core.write(final);
    core.host.event("step_failed", { step: label, attempt, durationMs, error: failed.message, cause: failed.name });
    throw stepFailure(final);
  }
  const delayMs = retryDelayMs(policy, attempt);
  core.write({ ...base, state: "waiting", error: JSON.stringify(failed), wakeAt: core.host.now() + delayMs });
  core.host.event("step_retry_scheduled", { step: label, attempt, durationMs, delayMs, error: failed.message });
  return core.park();
}
