/**
 * Why a task history was refused: `unknown_task` (`mcp.exportHistory`: no such task, or another principal's);
 * `too_large` (over MAX_HISTORY_BYTES, docs/limits.md); `malformed` (not a history document); `unsupported_version`
 * (a `version` this library does not read, e.g. from a newer one); `unknown_tool` (`replayHistory`: the server
 * registers no task of the history's `tool`).
 * @example
 * ```ts
 * import type { TaskHistoryProblem } from "durable-mcp-server";
 *
 * const fixable = (problem: TaskHistoryProblem) => problem === "unknown_tool";
 * ```
 */
export type TaskHistoryProblem = "unknown_task" | "too_large" | "malformed" | "unsupported_version" | "unknown_tool";

/**
 * Thrown by `mcp.exportHistory` and `replayHistory` when a history cannot be exported or read; nothing ran.
 * @example
 * ```ts
 * import { TaskHistoryError } from "durable-mcp-server";
 *
 * function describe(error: unknown): string {
 *   return error instanceof TaskHistoryError ? `${error.problem}: ${error.message}` : String(error);
 * }
 * ```
 */
export class TaskHistoryError extends Error {
  override readonly name = "TaskHistoryError";
  /**
   * Built by the export or the replay check.
   * @param problem - What is wrong (TaskHistoryProblem).
   * @param message - What to tell the caller, naming the field or the size.
   */
  constructor(
    readonly problem: TaskHistoryProblem,
    message: string,
  ) {
    super(message);
  }
}
