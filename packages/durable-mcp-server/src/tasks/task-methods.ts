import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { isTaskIdShape } from "../ids.js";
import type { TaskAccess, TaskText } from "../runner/index.js";
import type { CallerContext } from "./caller-context.js";
import { MAX_STEP_RESULT_BYTES } from "../limits.js";
import { STEPS_META } from "../wire/meta-keys.js";
import type { DetailedTask } from "../wire/task-shapes.js";

/**
 * `tasks/get` (with the step timeline when the request's `_meta` asks for it: STEPS_META), `tasks/update` and
 * `tasks/cancel`, once the request is known to be well-formed and to declare the
 * extension. The one implementation behind both the SDK handlers and the router's fast path. Unknown, expired and
 * foreign tasks are indistinguishable: same code, same message, no data.
 */
export async function getTask(
  caller: CallerContext,
  taskId: string,
  requestMeta?: Record<string, unknown>,
): Promise<DetailedTask> {
  const steps = requestMeta?.[STEPS_META] === true;
  const task = await caller.runners.get(access(caller, taskId), steps ? { steps } : undefined);
  if (!task) throw unknownTask();
  return task;
}

/** `getTask` without the step timeline, as the runner's JSON text (the router's fast path). */
export async function getTaskText(caller: CallerContext, taskId: string): Promise<TaskText> {
  const task = await caller.runners.getText(access(caller, taskId));
  if (!task) throw unknownTask();
  return task;
}

export async function updateTask(
  caller: CallerContext,
  taskId: string,
  responses: Record<string, unknown>,
): Promise<void> {
  for (const [key, value] of Object.entries(responses)) {
    // An answer is journaled like a step result, so it obeys the same size limit.
    if (new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength > MAX_STEP_RESULT_BYTES) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `input response "${key}" is larger than ${MAX_STEP_RESULT_BYTES} bytes`,
      );
    }
  }
  const outcome = await caller.runners.update(access(caller, taskId), responses);
  if (!outcome) throw unknownTask();
  if (outcome.invalid) {
    const { key, path, message } = outcome.invalid;
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `input response "${key}" does not fit its question: ${path} ${message}`,
      {
        key,
        path,
      },
    );
  }
}

export async function cancelTask(caller: CallerContext, taskId: string): Promise<void> {
  if (!(await caller.runners.cancel(access(caller, taskId)))) throw unknownTask();
}

function access(caller: CallerContext, taskId: string): TaskAccess {
  // Garbage ids never reach a Durable Object; they look exactly like unknown ones.
  if (!isTaskIdShape(taskId)) throw unknownTask();
  return { taskId, principal: caller.principal };
}

function unknownTask(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown task");
}
