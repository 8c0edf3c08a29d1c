import { isTaskIdShape } from "../ids.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { jsonResponse, OperatorError } from "./operator-errors.js";

// `GET /operator/tasks/:id/children` (docs/operations.md): the child tasks a task started with `step.invoke`, as its
// runner keeps them (its `children` table: each child's id, step, task, policy and state once it told), oldest first.
// Read from the parent's runner rather than the catalog, so that it is there with the catalog off.

export async function taskChildren(runners: RunnerClient, taskId: string, owner: string): Promise<Response> {
  const children = isTaskIdShape(taskId) ? await runners.children(taskId, owner) : null;
  if (!children) throw new OperatorError(404, "not_found", `no task ${taskId} on its runner`);
  return jsonResponse({ taskId, children });
}
