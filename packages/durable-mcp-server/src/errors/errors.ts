import { ErrorCodes } from "./codes.js";

/** A JSON-RPC error object as it travels on the wire. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The one error envelope of the runtime: a JSON-RPC error plus the HTTP status it is answered with.
 * Thrown anywhere between the Worker's fetch and a TaskRunner; the router turns it into a response.
 */
export class JsonRpcError extends Error {
  override readonly name = "JsonRpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly httpStatus: number = 200,
  ) {
    super(message);
  }

  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Thrown inside `step.do`: fail the step at once, without further retries (as in Cloudflare Workflows). */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
}

/**
 * Thrown from a task handler to end the task `failed` with this JSON-RPC error, for protocol-level failures.
 * Anything else a handler throws ends the task `completed` with an `isError` tool result.
 */
export class TaskProtocolError extends Error {
  override readonly name = "TaskProtocolError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
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
  constructor(step: string, detail: string) {
    super(ErrorCodes.InternalError, `replay divergence at step "${step}": ${detail}`, {
      reason: "replay_divergence",
      step,
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
