import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/**
 * Thrown inside `step.do`: fail the step at once, without further retries (as in Cloudflare Workflows).
 * @example
 * ```ts
 * import { NonRetryableError, type Step } from "durable-mcp-server";
 *
 * async function charge(step: Step, card: string) {
 *   return step.do("charge", async () => {
 *     if (card === "expired") throw new NonRetryableError("the card has expired");
 *     return "charged";
 *   });
 * }
 * ```
 */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
}

/**
 * Thrown from a task handler to end the task `failed` with this JSON-RPC error, for protocol-level failures.
 * Anything else a handler throws ends the task `completed` with an `isError` tool result. It is the SDK's
 * `ProtocolError` (so `instanceof ProtocolError` holds and `code`/`message`/`data` go on the wire as given,
 * `data.reason` included); its own name only tells the runner it came from a handler on purpose.
 * @example
 * ```ts
 * import { TaskProtocolError } from "durable-mcp-server";
 * import { ProtocolErrorCode } from "@modelcontextprotocol/server";
 *
 * function refuse(region: string): never {
 *   const data = { reason: "unknown_region" };
 *   throw new TaskProtocolError(ProtocolErrorCode.InvalidParams, `unknown region ${region}`, data);
 * }
 * ```
 */
export class TaskProtocolError extends ProtocolError {
  override readonly name: string = "TaskProtocolError";
}

/**
 * What `step.do` throws once a step has failed for good (retries exhausted, NonRetryableError, result too
 * large, timeout on the last attempt). The same error is rebuilt from the journal on every replay.
 * @example
 * ```ts
 * import { StepFailedError, type Step } from "durable-mcp-server";
 *
 * async function fetchOrFallback(step: Step) {
 *   try {
 *     return await step.do("fetch", { retries: { limit: 2, delay: "1 second" } }, async () => "fresh");
 *   } catch (error) {
 *     if (error instanceof StepFailedError) return `cached (after ${error.attempts} attempts)`;
 *     throw error;
 *   }
 * }
 * ```
 */
export class StepFailedError extends Error {
  override readonly name = "StepFailedError";
  /**
   * Built by the engine, and rebuilt from the journal on replay.
   * @param step - The step's label.
   * @param attempts - How many attempts it made.
   * @param causeName - The name of the error of its last attempt.
   * @param message - That error's message.
   * @param nonRetryable - Whether it failed on a NonRetryableError.
   */
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

/**
 * What an input step throws when its timeout passed before an answer arrived.
 * @example
 * ```ts
 * import { InputTimeoutError, type Step } from "durable-mcp-server";
 *
 * async function confirm(step: Step) {
 *   const request = { message: "Send it?", requestedSchema: { type: "object", properties: {} } };
 *   try {
 *     return (await step.elicit("confirm", request, { timeout: "1 hour" })).action === "accept";
 *   } catch (error) {
 *     if (error instanceof InputTimeoutError) return false;
 *     throw error;
 *   }
 * }
 * ```
 */
export class InputTimeoutError extends Error {
  override readonly name = "InputTimeoutError";
  /**
   * Built by the engine when the input step's timeout passes.
   * @param step - The label of the input step.
   */
  constructor(readonly step: string) {
    super(`no answer to input request "${step}" before its timeout`);
  }
}

/**
 * What an input step throws when the client that created the task did not declare the capability its question
 * needs (`elicitation` form or url, `sampling`, `roots`): the question is never shown. Catch it to go on with a
 * default; uncaught, the task ends with the `input_unavailable` envelope (docs/errors.md).
 * @example
 * ```ts
 * import { InputUnavailableError, type Step } from "durable-mcp-server";
 *
 * async function askOrDefault(step: Step) {
 *   const request = { message: "Which format?", requestedSchema: { type: "object", properties: {} } };
 *   try {
 *     return await step.elicit("format", request);
 *   } catch (error) {
 *     if (error instanceof InputUnavailableError) return { action: "accept" as const, content: { format: "pdf" } };
 *     throw error;
 *   }
 * }
 * ```
 */
export class InputUnavailableError extends Error {
  override readonly name = "InputUnavailableError";
  /**
   * Built by the engine when the client cannot answer the question.
   * @param step - The label of the input step.
   * @param method - The request it would have sent, e.g. "elicitation/create".
   * @param capability - The capability the client did not declare.
   */
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

/**
 * A step's result cannot be journaled: not JSON, or larger than the row limit. Never retried.
 * @example
 * ```ts
 * import { StepFailedError, type Step } from "durable-mcp-server";
 *
 * async function tooBig(step: Step) {
 *   try {
 *     await step.do("huge", async () => "x".repeat(10_000_000));
 *   } catch (error) {
 *     // The StepResultError of the attempt is the cause; the step fails for good.
 *     if (error instanceof StepFailedError && error.causeName === "StepResultError") return "spill it to a file";
 *     throw error;
 *   }
 * }
 * ```
 */
export class StepResultError extends NonRetryableError {
  override readonly name = "StepResultError";
}

/**
 * An attempt of `step.do` outlived its `timeout`; the attempt's signal aborts with this reason.
 * @example
 * ```ts
 * import { StepTimeoutError, type Step } from "durable-mcp-server";
 *
 * async function slow(step: Step) {
 *   return step.do("slow call", { timeout: "5 seconds" }, async ({ signal }) => {
 *     signal.addEventListener("abort", () => console.log(signal.reason instanceof StepTimeoutError));
 *     return "done";
 *   });
 * }
 * ```
 */
export class StepTimeoutError extends Error {
  override readonly name = "StepTimeoutError";
  /**
   * Built by the engine when an attempt's timeout passes.
   * @param step - The step's label.
   * @param timeoutMs - The timeout the attempt outlived.
   */
  constructor(step: string, timeoutMs: number) {
    super(`step "${step}" attempt timed out after ${timeoutMs} ms`);
  }
}
