import type { CallToolResult } from "@modelcontextprotocol/server";
import {
  describeError,
  InputTimeoutError,
  InputUnavailableError,
  NonRetryableError,
  StepFailedError,
  StepResultError,
} from "./errors.js";

/**
 * The one repairable error envelope: what went wrong (`code`, `message`), whether repeating the call can work
 * (`retryable`), what to do instead (`recoveryHint`), which argument was at fault (`param`), and what already
 * succeeded (`partial`). Facade tools, task results and handlers all speak it, so a model can repair a failure in
 * one round trip.
 * @example
 * ```ts
 * import type { ErrorEnvelope } from "durable-mcp-server";
 *
 * const envelope: ErrorEnvelope = {
 *   code: "input_timeout",
 *   message: "nobody answered",
 *   retryable: true,
 *   recoveryHint: "Call the tool again when someone can answer.",
 * };
 * ```
 */
export interface ErrorEnvelope {
  code: ErrorEnvelopeCode | (string & {});
  message: string;
  retryable: boolean;
  recoveryHint: string;
  param?: string;
  partial?: { cursor?: string | number; completedSteps?: string[] };
  details?: Record<string, unknown>;
}

/**
 * The documented codes (see docs/errors.md). Handlers may use their own codes too.
 * @example
 * ```ts
 * import type { ErrorEnvelopeCode } from "durable-mcp-server";
 *
 * const code: ErrorEnvelopeCode = "invalid_param";
 * ```
 */
export type ErrorEnvelopeCode =
  | "unknown_task"
  | "expired"
  | "invalid_param"
  | "invalid_arguments"
  | "not_waiting_for_input"
  | "already_final"
  | "task_failed"
  | "task_cancelled"
  | "step_failed"
  | "input_timeout"
  | "input_unavailable"
  | "handler_error"
  | "internal"
  | "unknown_file"
  | "file_not_ready"
  | "file_too_large"
  | "offset_mismatch"
  | "offset_out_of_range"
  | "checksum_mismatch"
  | "digest_mismatch"
  | "too_long"
  | "upload_incomplete"
  | "rate_limited";

/**
 * Thrown by a task handler (or a tool) to end with this envelope, intact, as an `isError` result.
 * @example
 * ```ts
 * import { RepairableError } from "durable-mcp-server";
 *
 * function checkRegion(region: string) {
 *   if (region.length === 0) {
 *     throw new RepairableError({
 *       code: "invalid_param",
 *       message: "region is empty",
 *       retryable: false,
 *       recoveryHint: "Pass a region such as emea.",
 *       param: "region",
 *     });
 *   }
 * }
 * ```
 */
export class RepairableError extends Error {
  override readonly name = "RepairableError";
  readonly envelope: ErrorEnvelope;
  /**
   * Wraps the envelope; the error's message is the envelope's.
   * @param envelope - The envelope the result carries, as given.
   */
  constructor(envelope: Omit<ErrorEnvelope, "message"> & { message: string }) {
    super(envelope.message);
    this.envelope = { ...envelope };
  }
}

/** The envelope for anything a task handler threw. */
export function envelopeFor(error: unknown, completedSteps: string[] = []): ErrorEnvelope {
  const partial = completedSteps.length > 0 ? { partial: { completedSteps } } : {};
  if (error instanceof RepairableError) return { ...partial, ...error.envelope };
  if (error instanceof InputTimeoutError) {
    return {
      code: "input_timeout",
      message: error.message,
      retryable: true,
      recoveryHint: "Start the task again and answer its question before the timeout.",
      details: { step: error.step },
      ...partial,
    };
  }
  if (error instanceof InputUnavailableError) {
    return {
      code: "input_unavailable",
      message: error.message,
      // The same call from the same client asks the same question of it again.
      retryable: false,
      recoveryHint: `This client cannot answer ${error.method} requests. Call the tool again from a client that declares the "${error.capability}" capability, or without the Tasks extension (its questions then come back as a handle to answer).`,
      details: { step: error.step, method: error.method, capability: error.capability },
      ...partial,
    };
  }
  if (error instanceof StepFailedError) {
    // Failures journaled before the flag existed carry only the name, which was the rule then.
    const permanent =
      error.nonRetryable ?? (error.causeName === NonRetryableError.name || error.causeName === StepResultError.name);
    return {
      code: "step_failed",
      message: error.message,
      retryable: !permanent,
      recoveryHint: permanent
        ? `Step "${error.step}" cannot succeed with this input; change the arguments before starting the task again.`
        : `Step "${error.step}" failed ${error.attempts} times; starting the task again may work once the cause is fixed.`,
      details: { step: error.step, attempts: error.attempts, cause: error.causeName },
      ...partial,
    };
  }
  const { name, message } = describeError(error);
  return {
    code: "handler_error",
    message,
    retryable: false,
    recoveryHint: "The tool failed; read the message before trying again with different arguments.",
    details: { name },
    ...partial,
  };
}

/** An `isError` tool result carrying the envelope as data and as one line of text. */
export function toolErrorResult(envelope: ErrorEnvelope): CallToolResult {
  return {
    content: [{ type: "text", text: `Error ${envelope.code}: ${envelope.message} ${envelope.recoveryHint}` }],
    structuredContent: { error: envelope },
    isError: true,
  };
}

/** Passes a handler's CallToolResult through; any other value becomes JSON text content. */
export function toToolResult(value: unknown): CallToolResult {
  if (returnsToolResult(value)) return value;
  const text = value === undefined ? "" : JSON.stringify(value);
  return { content: [{ type: "text", text }] };
}

/**
 * A handler's value that is its CallToolResult (TaskHandlerResult's first member): an object with a `content`
 * array. Deliberately the same loose test as always (not the SDK's schema check): the runtime stores and returns
 * what the handler built, and the SDK validates it on the way out as it does for any tool.
 */
function returnsToolResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null && "content" in value && Array.isArray(value.content);
}
