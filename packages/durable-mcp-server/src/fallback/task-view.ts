import type { CallToolResult } from "@modelcontextprotocol/server";
import { toolErrorResult, type ErrorEnvelope } from "../errors/envelope.js";
import { exampleAnswer } from "../runner/index.js";
import { expiryOf } from "../util/expiry.js";
import { PROGRESS_META, TASK_ID_META } from "../wire/meta-keys.js";
import type { DetailedTask } from "../wire/task-shapes.js";

/** Where a result handed to a client without the extension names the task it came from. */

/** Names of the facade tools, from their configurable prefix. */
export interface FacadeNames {
  get: string;
  respond: string;
  cancel: string;
}

export function facadeNames(prefix: string): FacadeNames {
  return { get: `${prefix}_get`, respond: `${prefix}_respond`, cancel: `${prefix}_cancel` };
}

interface Question {
  key: string;
  method: string;
  message?: string;
  requestedSchema?: unknown;
}

/**
 * What a client without the Tasks extension sees of a task: a final task as its own result (or an error
 * envelope), a live one as a handle whose text tells the model its next call.
 */
export function taskViewResult(task: DetailedTask, tool: string, names: FacadeNames): CallToolResult {
  switch (task.status) {
    case "completed": {
      // The task's own result, as if the tool had answered at once (minus the task wire's resultType).
      const { resultType: _, ...result } = task.result as CallToolResult;
      return { ...result, _meta: { ...(result._meta as object), [TASK_ID_META]: task.taskId } } as CallToolResult;
    }
    case "failed":
      return toolErrorResult(failedEnvelope(task, tool));
    case "cancelled":
      return toolErrorResult({
        code: "task_cancelled",
        message: `Task ${task.taskId} (${tool}) was cancelled before it finished.`,
        retryable: false,
        recoveryHint: `Start ${tool} again if the work is still needed.`,
      });
    default:
      return liveHandle(task, tool, names);
  }
}

/**
 * The answer to a cancel that took effect: an ordinary result, since the call did what was asked (only later views
 * of the task report it as an error, `task_cancelled`, because it has no result).
 */
export function cancelledResult(task: DetailedTask, tool: string): CallToolResult {
  return {
    content: [
      {
        type: "text",
        text: `Task ${task.taskId} (${tool}) is cancelled; it will not continue. Start ${tool} again if the work is still needed.`,
      },
    ],
    structuredContent: { taskId: task.taskId, tool, status: task.status },
  };
}

function liveHandle(task: DetailedTask, tool: string, names: FacadeNames): CallToolResult {
  const taskId = task.taskId;
  const expiry = expiryOf(Date.parse(task.createdAt), task.ttlMs);
  const expiresAt = expiry === null ? null : new Date(expiry).toISOString();
  const pollMs = task.pollIntervalMs ?? 1_000;
  const progress = task._meta?.[PROGRESS_META] as number | undefined;
  const questions: Question[] = Object.entries(task.inputRequests ?? {}).map(([key, request]) => ({
    key,
    method: request.method,
    message: questionText(request.method, request.params),
    requestedSchema: request.params.requestedSchema,
  }));
  // The answer each kind of question takes, as an example to fill in.
  const examples = Object.fromEntries(
    Object.entries(task.inputRequests ?? {}).map(([key, request]) => [key, exampleAnswer(request)]),
  );
  const lines: string[] = [];
  const state = task.statusMessage ? `: ${task.statusMessage}` : "";
  const structured: Record<string, unknown> = { taskId, tool, status: task.status, pollIntervalMs: pollMs, expiresAt };
  if (task.statusMessage) structured.statusMessage = task.statusMessage;
  if (progress !== undefined) structured.progress = progress;
  if (questions.length > 0) {
    structured.questions = questions;
    structured.next = { tool: names.respond, arguments: { taskId, answers: examples } };
    lines.push(`Task ${taskId} (${tool}) is waiting for an answer before it can continue${state}.`);
    for (const question of questions) {
      lines.push(
        `Question "${question.key}": ${question.message ?? question.method}` +
          (question.requestedSchema ? ` Answer schema: ${JSON.stringify(question.requestedSchema)}` : ""),
      );
    }
    lines.push(
      `Ask the user, then call ${names.respond} with ${JSON.stringify({ taskId, answers: examples })} ` +
        `(use "action": "decline" to refuse). Then call ${names.get} to follow the task.`,
    );
  } else {
    structured.next = { tool: names.get, arguments: { taskId }, afterMs: pollMs };
    lines.push(
      `Task ${taskId} (${tool}) is running in the background${state}` +
        (progress !== undefined ? ` (${Math.round(progress * 100)}% done)` : "") +
        ".",
    );
    lines.push(
      `Call ${names.get} with ${JSON.stringify({ taskId })} in about ${Math.max(1, Math.round(pollMs / 1000))} s to check on it.`,
    );
  }
  lines.push(`Do not call ${tool} again for this request: that would start the work over.`);
  if (expiresAt) lines.push(`The task and its result are kept until ${expiresAt}.`);
  lines.push(`To stop it, call ${names.cancel} with ${JSON.stringify({ taskId })}.`);
  return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: structured };
}

/** What a question asks, in words: an elicitation's message, a model call's prompt, the client's roots. */
function questionText(method: string, params: Record<string, unknown>): string | undefined {
  if (method === "sampling/createMessage") {
    const messages = (params.messages ?? []) as Array<{ content?: { type?: string; text?: string } }>;
    const prompt = messages
      .map((message) => (message.content?.type === "text" ? message.content.text : undefined))
      .filter((text) => text !== undefined)
      .join(" / ");
    return `A model call${params.systemPrompt ? ` (system: ${String(params.systemPrompt)})` : ""}: ${prompt}. Answer with your reply as a CreateMessageResult.`;
  }
  if (method === "roots/list") return "The roots (directories, repositories) you work in, as a ListRootsResult.";
  return params.message as string | undefined;
}

function failedEnvelope(task: DetailedTask, tool: string): ErrorEnvelope {
  const error = task.error;
  if ((error?.data as { reason?: string } | undefined)?.reason === "expired") {
    return {
      code: "expired",
      message: `Task ${task.taskId} (${tool}) expired before it finished.`,
      retryable: false,
      recoveryHint: `Start ${tool} again if the work is still needed.`,
    };
  }
  return {
    code: "task_failed",
    message: error?.message ?? `Task ${task.taskId} (${tool}) failed.`,
    retryable: false,
    recoveryHint: `The server could not run ${tool}; report the message rather than retrying as is.`,
    details: error ? { code: error.code, ...(error.data === undefined ? {} : { data: error.data }) } : undefined,
  };
}
