import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/** Thrown inside `step.do`: fail the step at once, without further retries (as in Cloudflare Workflows). */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
}

/**
 * Thrown from a task handler to end the task `failed` with this JSON-RPC error, for protocol-level failures.
 * Anything else a handler throws ends the task `completed` with an `isError` tool result. It is the SDK's
 * `ProtocolError` (so `instanceof ProtocolError` holds and `code`/`message`/`data` go on the wire as given,
 * `data.reason` included); its own name only tells the runner it came from a handler on purpose.
 */
export class TaskProtocolError extends ProtocolError {
  override readonly name: string = "TaskProtocolError";
}

/**
 * What `step.do` throws once a step has failed for good (retries exhausted, NonRetryableError, result too
 * large, timeout on the last attempt). The same error is rebuilt from the journal on every replay.
 */
export class StepFailedError extends Error {
  override readonly name = "StepFailedError";
  constructor(
    readonly step: string,
    readonly attempts: number,
    readonly causeName: string,
    message: string,
    /** The step failed on a NonRetryableError (any subclass, any name); unset for failures journaled before. */
    readonly nonRetryable?: boolean,
  ) {
    super(message);
  }
}

/** What an input step throws when its timeout passed before an answer arrived. */
export class InputTimeoutError extends Error {
  override readonly name = "InputTimeoutError";
  constructor(readonly step: string) {
    super(`no answer to input request "${step}" before its timeout`);
  }
}

/**
 * What an input step throws when the client that created the task did not declare the capability its question
 * needs (`elicitation` form or url, `sampling`, `roots`): the question is never shown. Catch it to go on with a
 * default; uncaught, the task ends with the `input_unavailable` envelope (docs/errors.md).
 */
export class InputUnavailableError extends Error {
  override readonly name = "InputUnavailableError";
  constructor(
    readonly step: string,
    readonly method: string,
    /** The capability the client would have had to declare, e.g. "elicitation.form" or "sampling". */
    readonly capability: string,
  ) {
    super(`the client cannot answer input request "${step}" (${method}): it did not declare "${capability}"`);
  }
}

/** The handler met a journal its code could not have written; the task fails instead of guessing. */
export class ReplayDivergenceError extends TaskProtocolError {
  /** `journaled`: the journaled step the code no longer reaches, when that is the divergence. */
  constructor(step: string, detail: string, journaled?: string) {
    super(ProtocolErrorCode.InternalError, `replay divergence at step "${step}": ${detail}`, {
      reason: "replay_divergence",
      step,
      ...(journaled === undefined ? {} : { journaled }),
    });
  }
}

/** Describes any thrown value as name + message, for the journal and logs. */
export function describeError(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: "Error", message: typeof error === "string" ? error : (JSON.stringify(error) ?? String(error)) };
}

/** A step's result cannot be journaled: not JSON, or larger than the row limit. Never retried. */
export class StepResultError extends NonRetryableError {
  override readonly name = "StepResultError";
}

/** An attempt of `step.do` outlived its `timeout`; the attempt's signal aborts with this reason. */
export class StepTimeoutError extends Error {
  override readonly name = "StepTimeoutError";
  constructor(step: string, timeoutMs: number) {
    super(`step "${step}" attempt timed out after ${timeoutMs} ms`);
  }
}
