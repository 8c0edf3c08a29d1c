import type { CallToolResult, McpServer as SdkMcpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { toolErrorResult, type ErrorEnvelope } from "../errors/envelope.js";
import { isTaskIdShape } from "../ids.js";
import { type TaskAccess, checkInputAnswer } from "../runner/index.js";
import type { CallerContext } from "../tasks/caller-context.js";
import { cancelledResult, taskViewResult, type FacadeNames } from "./task-view.js";

const taskIdArgument = z.string().describe("The taskId a task tool handed out");

/**
 * Registers the facade tools through which a client that does not speak the Tasks extension drives a task with
 * ordinary tool calls: get (poll), respond (answer its questions), cancel. Same principal binding as `tasks/*`.
 */
export function registerFacadeTools(server: SdkMcpServer, names: FacadeNames, runtime: () => CallerContext): void {
  server.registerTool(
    names.get,
    {
      title: "Check on a background task",
      description:
        "Returns the state of a background task started by another tool: its result once finished, its questions " +
        "when it waits for an answer, otherwise its progress and when to check again.",
      inputSchema: z.object({ taskId: taskIdArgument }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ taskId }) => {
      const found = await inspect(runtime(), taskId);
      return found.ok ? taskViewResult(found.task, found.tool, names) : found.error;
    },
  );

  server.registerTool(
    names.respond,
    {
      title: "Answer a background task's question",
      description:
        "Answers the questions a background task is waiting on. `answers` maps each question key to the answer " +
        'its kind takes: a form (elicitation/create) {"action": "accept", "content": {...}} (content must match the ' +
        'question\'s schema) or {"action": "decline"}; a model call (sampling/createMessage) {"role": "assistant", ' +
        '"content": {"type": "text", "text": "..."}, "model": "..."}; the roots (roots/list) {"roots": [{"uri": ' +
        '"file:///..."}]}.',
      inputSchema: z.object({
        taskId: taskIdArgument,
        answers: z
          .record(z.string(), z.unknown())
          .describe("Question key → its answer: {action, content}, a CreateMessageResult or a ListRootsResult"),
      }),
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ taskId, answers }) => {
      const caller = runtime();
      const found = await inspect(caller, taskId);
      if (!found.ok) return found.error;
      const pending = found.task.inputRequests ?? {};
      if (found.task.status !== "input_required" || Object.keys(pending).length === 0) {
        return envelopeResult({
          code: "not_waiting_for_input",
          message: `Task ${taskId} is ${found.task.status} and is not waiting for an answer.`,
          retryable: false,
          recoveryHint: `Call ${names.get} to see what the task is doing.`,
        });
      }
      const problem = checkAnswers(answers, pending);
      if (problem) return envelopeResult(problem);
      await caller.runners.update(access(caller, taskId), answers);
      const after = await inspect(caller, taskId);
      return after.ok ? taskViewResult(after.task, after.tool, names) : after.error;
    },
  );

  server.registerTool(
    names.cancel,
    {
      title: "Cancel a background task",
      description: "Asks a background task to stop. A task that already finished keeps its result.",
      inputSchema: z.object({ taskId: taskIdArgument }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ taskId }) => {
      const caller = runtime();
      const found = await inspect(caller, taskId);
      if (!found.ok) return found.error;
      if (["completed", "failed", "cancelled"].includes(found.task.status)) {
        return envelopeResult({
          code: "already_final",
          message: `Task ${taskId} already ended ${found.task.status}; nothing was changed.`,
          retryable: false,
          recoveryHint: `Call ${names.get} for its outcome.`,
        });
      }
      await caller.runners.cancel(access(caller, taskId));
      const after = await inspect(caller, taskId);
      if (!after.ok) return after.error;
      // A task that finished before the cancel reached it keeps (and reports) its own outcome.
      if (after.task.status === "cancelled") return cancelledResult(after.task, after.tool);
      return taskViewResult(after.task, after.tool, names);
    },
  );
}

function access(caller: CallerContext, taskId: string): TaskAccess {
  return { taskId, principal: caller.principal };
}

async function inspect(caller: CallerContext, taskId: string) {
  const found = isTaskIdShape(taskId) ? await caller.runners.inspect(access(caller, taskId)) : null;
  if (found) return { ok: true as const, ...found };
  return {
    ok: false as const,
    error: envelopeResult({
      code: "unknown_task",
      message: `No task ${JSON.stringify(taskId)} is visible to you.`,
      retryable: false,
      recoveryHint:
        "Check the taskId. Tasks are visible only to whoever started them and are deleted after they expire; start the tool again if the work is still needed.",
      param: "taskId",
    }),
  };
}

function envelopeResult(envelope: ErrorEnvelope): CallToolResult {
  return toolErrorResult(envelope);
}

/** Every answer must be for a pending key and be the result its kind of question takes (checkInputAnswer). */
function checkAnswers(
  answers: Record<string, unknown>,
  pending: Record<string, { method: string; params: Record<string, unknown> }>,
): ErrorEnvelope | null {
  const keys = Object.keys(answers);
  const invalid = (param: string, message: string): ErrorEnvelope => ({
    code: "invalid_param",
    message,
    retryable: true,
    recoveryHint: `Fix ${param} and call again. Pending questions: ${Object.keys(pending).join(", ")}.`,
    param,
  });
  if (keys.length === 0) return invalid("answers", "answers is empty");
  for (const key of keys) {
    const request = pending[key];
    if (!request) return invalid(`answers.${key}`, `the task is not asking "${key}"`);
    const problem = checkInputAnswer(request, answers[key]);
    if (problem) {
      const path = problem.path ? `answers.${key}.${problem.path}` : `answers.${key}`;
      return invalid(
        path,
        `${path}: ${problem.message} (a ${request.method} question takes ${shapeOf(request.method)})`,
      );
    }
  }
  return null;
}

/** The answer shape of each kind of question, as the respond tool's texts name it. */
function shapeOf(method: string): string {
  switch (method) {
    case "sampling/createMessage":
      return 'a CreateMessageResult {"role": "assistant", "content": {"type": "text", "text": …}, "model": …}';
    case "roots/list":
      return 'a ListRootsResult {"roots": [{"uri": "file:///…", "name"?: …}]}';
    default:
      return '{"action": "accept", "content": {…}} or {"action": "decline"}';
  }
}
