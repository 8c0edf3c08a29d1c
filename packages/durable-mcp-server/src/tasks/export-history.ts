import { TaskHistoryError } from "../errors/history-errors.js";
import { isTaskIdShape } from "../ids.js";
import { parseHistory, type TaskHistory } from "../steps/history-format.js";
import type { RunnerClient } from "./runner-client.js";

/**
 * Whose task's history may be exported, a required choice as for `sendEvent`: `{ principal }` (another principal's
 * task is refused as `unknown_task`, as an unknown one), or `{ trustedSender: true }` for the Worker's own
 * operator code that may read any task whose id it holds — never for a route that relays a caller's request.
 * @example
 * ```ts
 * import type { ExportHistoryOptions } from "durable-mcp-server";
 *
 * const ownTask: ExportHistoryOptions = { principal: "user:42" };
 * const anyTask: ExportHistoryOptions = { trustedSender: true };
 * ```
 */
export type ExportHistoryOptions =
  | { principal: string; trustedSender?: never }
  | { trustedSender: true; principal?: never };

/**
 * Exports task `taskId`'s history (`mcp.exportHistory`). Every refusal is a TaskHistoryError: an id of the wrong
 * shape, an unknown or foreign task (`unknown_task`), a history over MAX_HISTORY_BYTES (`too_large`).
 */
export async function exportTaskHistory(
  runners: RunnerClient,
  taskId: string,
  options: ExportHistoryOptions,
): Promise<TaskHistory> {
  const principal = ownerOf(options);
  if (!isTaskIdShape(taskId)) throw new TaskHistoryError("unknown_task", `no task ${String(taskId)}`);
  const answer = await runners.exportHistory(taskId, principal);
  if ("refused" in answer) throw new TaskHistoryError(answer.refused, answer.message);
  return parseHistory(answer.history);
}

/** The principal the task must belong to, or undefined for trusted code; refuses anything but one of the two. */
function ownerOf(options: ExportHistoryOptions | undefined): string | undefined {
  const { principal, trustedSender } = (options ?? {}) as { principal?: unknown; trustedSender?: unknown };
  if (typeof principal === "string" && trustedSender === undefined) return principal;
  if (trustedSender === true && principal === undefined) return undefined;
  throw new TypeError(
    "exportHistory needs whose task it may read: { principal } (a string) or { trustedSender: true } " +
      "(server-side code that may read any task), not both",
  );
}
