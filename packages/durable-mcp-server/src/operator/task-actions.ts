import type { TaskAccess } from "../runner/index.js";
import { restartTask } from "../tasks/restart-task.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { OperatorError } from "./operator-errors.js";

// One operator action on one task, through its runner: what a single route (POST /tasks/:id/<action>) and every task
// of a bulk job (bulk-cancel.ts) do. A refusal comes back as the OperatorError the single route answers with; a bulk
// job counts it as failed.

/** What an operator can do to tasks, one by one or by filter. */
export type BulkAction = "cancel" | "pause" | "resume" | "retry" | "restart";
export const BULK_ACTIONS: readonly BulkAction[] = ["cancel", "pause", "resume", "retry", "restart"];

export interface ActionParams {
  /** A restart's step label. */
  fromStep: string | null;
  /** Keys a restart's or retry's new task: the same key makes no second one. */
  requestKey: string | null;
}

export type ActionResult =
  | {
      ok: true;
      taskId: string;
      /** The task's status after the action (the new task's, for a restart or retry). */
      status: string | null;
      /** Whether a pause or resume changed anything (pausing a paused task does not). */
      changed?: boolean;
      /** A restart's or retry's new task. */
      newTaskId?: string;
    }
  | { ok: false; taskId: string; error: OperatorError };

export async function applyAction(
  runners: RunnerClient,
  action: BulkAction,
  access: TaskAccess,
  params: ActionParams,
): Promise<ActionResult> {
  const { taskId } = access;
  const refused = (error: OperatorError): ActionResult => ({ ok: false, taskId, error });
  const gone = () =>
    refused(
      new OperatorError(410, "purged", `task ${taskId} is no longer on its runner (purged): nothing to ${action}`),
    );
  switch (action) {
    case "cancel": {
      if (!(await runners.cancel(access))) return gone();
      const task = await runners.get(access);
      return { ok: true, taskId, status: task?.status ?? null };
    }
    case "pause":
    case "resume": {
      const outcome = action === "pause" ? await runners.pause(access) : await runners.resume(access);
      if (outcome === null) return gone();
      if ("refused" in outcome) return refused(new OperatorError(409, "conflict", outcome.message));
      return { ok: true, taskId, status: outcome.task.status, changed: outcome.changed };
    }
    case "retry":
    case "restart": {
      const fromStep = action === "retry" ? null : params.fromStep;
      const outcome = await restartTask(runners, access, { fromStep, requestKey: params.requestKey });
      if ("task" in outcome) return { ok: true, taskId, status: outcome.task.status, newTaskId: outcome.task.taskId };
      switch (outcome.refused) {
        case "unknown_task":
          return gone();
        case "unknown_step":
          return refused(new OperatorError(400, "unknown_step", outcome.message, "fromStep"));
        default:
          return refused(new OperatorError(409, "conflict", outcome.message));
      }
    }
  }
}
