import { describeError, StepFailedError } from "./errors.js";

/** A CallToolResult as the runtime stores and returns it. */
export interface ToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** Passes a handler's CallToolResult through; any other value becomes JSON text content. */
export function toToolResult(value: unknown): ToolResult {
  if (typeof value === "object" && value !== null && Array.isArray((value as ToolResult).content)) {
    return value as ToolResult;
  }
  const text = value === undefined ? "" : JSON.stringify(value);
  return { content: [{ type: "text", text }] };
}

/** A handler that threw ends `completed` with this tool error: readable text plus the same facts as data. */
export function toToolErrorResult(error: unknown): ToolResult {
  const { name, message } = describeError(error);
  const structured: Record<string, unknown> = { error: { name, message } };
  if (error instanceof StepFailedError) {
    structured.error = { name, message, step: error.step, attempts: error.attempts, cause: error.causeName };
  }
  return { content: [{ type: "text", text: message }], structuredContent: structured, isError: true };
}
