import type { RestartRefusal, RestartRequest, TaskAccess } from "../runner/index.js";
import type { Task } from "../wire/task-shapes.js";
import type { RunnerClient } from "./runner-client.js";

// A restart or retry across the two runners (runner/task-restart.ts says what is kept): the original plans (and links
// the new id first), the new task's runner takes the seed in one transaction, then the original shows the link. Each
// call is safe to repeat, so a request that failed anywhere is retried whole and still makes exactly one new task.

export type RestartOutcome =
  | { task: Task; from: { taskId: string; fromStep: string | null } }
  | { refused: RestartRefusal | "unknown_task"; message: string };

export async function restartTask(
  runners: RunnerClient,
  access: TaskAccess,
  request: RestartRequest,
): Promise<RestartOutcome> {
  const plan = await runners.planRestart(access, request);
  if (plan === null) return { refused: "unknown_task", message: `no task ${access.taskId} (unknown, or purged)` };
  if ("refused" in plan) return plan;
  const task = await runners.seedRestart(plan.seed);
  // The id is derived from the original and the request: another task under it cannot be made by this library.
  if (task === null) throw new Error(`the restart's task id ${plan.seed.task.taskId} holds another task`);
  await runners.confirmRestart(access, task.taskId);
  return { task, from: { taskId: access.taskId, fromStep: request.fromStep } };
}
