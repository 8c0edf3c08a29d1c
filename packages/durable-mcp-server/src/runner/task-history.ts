import type { FilesSettings } from "../files/file-service.js";
import { MAX_HISTORY_BYTES } from "../limits.js";
import { HISTORY_FORMAT, HISTORY_VERSION, historyStep, type TaskHistory } from "../steps/history-format.js";
import { spilledKey } from "../steps/step-results.js";
import { fileHosts } from "./engine-hosts.js";
import type { RunSite } from "./task-run.js";

// The TaskRunner's `exportHistory` (TaskRunnerRpc): the task's journal as a history document (steps/history-format.ts)
// for an author's replay check. Spilled results are read back from R2 and included; the step-key salt never is.

/**
 * `exportHistory`'s answer: the history's JSON text, or why there is none (no such task for this principal, or a
 * history over MAX_HISTORY_BYTES).
 */
export type HistoryExport = { history: string } | { refused: "unknown_task" | "too_large"; message: string };

/** The history of the task `site` holds (null: the object holds none), if it is `taskId` and `principal`'s. */
export async function exportTaskHistory<Env>(
  site: RunSite<Env> | null,
  files: FilesSettings | undefined,
  taskId: string,
  principal: string | undefined,
): Promise<HistoryExport> {
  const record = site?.store.read();
  if (
    !site ||
    !record ||
    record.taskId !== taskId ||
    (principal !== undefined && principal !== record.principal) ||
    (record.purgeAt !== null && Date.now() >= record.purgeAt)
  ) {
    return { refused: "unknown_task", message: `no task ${taskId}` };
  }
  const spill = fileHosts(site.env, files, record).spill;
  const steps = [];
  // Counted as the steps are read, so that a journal of many spilled results stops reading at the limit.
  let bytes = record.input.length;
  for (const step of site.journal.load()) {
    const key = spilledKey(step.result);
    if (key !== null && !spill) throw new Error(`step "${step.name}" has a spilled result but no files are configured`);
    const result = key === null ? step.result : await spill!.get(key);
    bytes += (result?.length ?? 0) + (step.error?.length ?? 0) + (step.request?.length ?? 0);
    if (bytes > MAX_HISTORY_BYTES) return tooLarge(taskId, `more than ${MAX_HISTORY_BYTES}`);
    steps.push(historyStep(step, result));
  }
  const history: TaskHistory = {
    format: HISTORY_FORMAT,
    version: HISTORY_VERSION,
    tool: record.tool,
    input: JSON.parse(record.input) as unknown,
    steps,
    exportedAt: new Date().toISOString(),
  };
  const text = JSON.stringify(history);
  const size = new TextEncoder().encode(text).byteLength;
  return size > MAX_HISTORY_BYTES ? tooLarge(taskId, String(size)) : { history: text };
}

function tooLarge(taskId: string, bytes: string): HistoryExport {
  return {
    refused: "too_large",
    message: `the history of task ${taskId} is ${bytes} bytes; at most ${MAX_HISTORY_BYTES} are exported`,
  };
}
