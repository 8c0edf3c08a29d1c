import {
  jsonRpcErrorMessage,
  jsonRpcNotification,
  jsonRpcRequest,
  jsonRpcResultMessage,
  jsonRpcStoredErrorMessage,
} from "../../errors/jsonrpc.js";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { isTaskIdShape } from "../../ids.js";
import type { RunnerClient } from "../../tasks/runner-client.js";
import { tasksOf, FINAL_STATUSES } from "../../runner/index.js";
import type { DetailedTask } from "../../wire/task-shapes.js";
import { RESULT_HEARTBEAT_MS } from "../../limits.js";
import { takeStreamSlot, tooManyStreams } from "../stream-budget.js";
import { questionId } from "./questions.js";
import { RELATED_TASK_META, toLegacyTask } from "./shapes.js";
import type { Signer } from "./signing.js";

interface StreamContext {
  principal: string;
  runners: RunnerClient;
  signer: Signer;
}

/**
 * `tasks/result` of 2025-11-25: an SSE stream that stays open until the task is final and then carries its result
 * (or its JSON-RPC error). On the way: `notifications/tasks/status` on every status change, each outstanding
 * question once as a server→client request tied to the task, and a heartbeat (`notifications/progress` when the
 * request has a progressToken, so `resetTimeoutOnProgress` clients keep waiting; else an SSE comment).
 */
export async function resultStream(
  id: string | number,
  taskId: string,
  progressToken: string | number | undefined,
  ctx: StreamContext,
): Promise<Response> {
  const unknown = new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown task");
  // Garbage ids never reach a Durable Object; they look exactly like unknown ones.
  if (!isTaskIdShape(taskId)) throw unknown;
  // One of the principal's stream slots, given back when the stream ends however it ends (docs/limits.md).
  const release = takeStreamSlot(ctx.principal);
  if (!release) return tooManyStreams(id, "principal");
  let watched: Awaited<ReturnType<RunnerClient["watch"]>>;
  try {
    watched = await ctx.runners.watch({ taskId, principal: ctx.principal });
  } catch (error) {
    release();
    throw error;
  }
  if (watched === "too_many_streams") {
    release();
    return tooManyStreams(id, "task");
  }
  if (!watched) {
    release();
    throw unknown;
  }
  const reader = watched.pipeThrough(new TextDecoderStream()).getReader();
  const encoder = new TextEncoder();
  const related = { [RELATED_TASK_META]: { taskId } };
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let open = true;
  const stop = () => {
    open = false;
    if (heartbeat !== undefined) clearInterval(heartbeat);
    release();
  };

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (text: string) => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      const send = (message: unknown) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      let progress = 0;
      heartbeat = setInterval(() => {
        if (progressToken === undefined) write(": keepalive\n\n");
        else send(jsonRpcNotification("notifications/progress", { progressToken, progress: ++progress }));
      }, RESULT_HEARTBEAT_MS);
      const asked = new Set<string>();
      let lastStatus: string | undefined;
      try {
        for await (const task of tasksOf(reader)) {
          if (task.status !== lastStatus) {
            lastStatus = task.status;
            send(jsonRpcNotification("notifications/tasks/status", toLegacyTask(task)));
          }
          for (const [key, question] of Object.entries(task.inputRequests ?? {})) {
            if (asked.has(key)) continue;
            asked.add(key);
            const requestId = await questionId(ctx.signer, ctx.principal, { taskId, key, method: question.method });
            const params = question.params ?? {};
            send(
              jsonRpcRequest(requestId, question.method, {
                ...params,
                _meta: { ...(params._meta as object | undefined), ...related },
              }),
            );
          }
          if (FINAL_STATUSES.has(task.status)) {
            send(finalAnswer(id, task, related));
            return;
          }
        }
        // The runner's stream ended before the task was final (the object was reset): the client may ask again.
        send(interrupted(id));
      } catch (error) {
        console.warn("tasks/result stream interrupted", { taskId, error: String(error) });
        send(interrupted(id));
      } finally {
        if (open) controller.close();
        stop();
        await reader.cancel().catch(() => undefined);
      }
    },
    async cancel(reason) {
      stop();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

function finalAnswer(id: string | number, task: DetailedTask, related: Record<string, unknown>) {
  if (task.status === "completed" && task.result) {
    const { resultType: _resultType, ...result } = task.result;
    return jsonRpcResultMessage(id, { ...result, _meta: { ...(result._meta as object | undefined), ...related } });
  }
  if (task.status === "failed" && task.error) return jsonRpcStoredErrorMessage(id, task.error);
  return jsonRpcErrorMessage(
    id,
    new ProtocolError(ProtocolErrorCode.InternalError, `Task ${task.status}`, {
      taskId: task.taskId,
      status: task.status,
    }),
  );
}

/** The answer when the runner's stream broke off before the task was final: the client may ask again. */
function interrupted(id: string | number) {
  return jsonRpcErrorMessage(
    id,
    new ProtocolError(ProtocolErrorCode.InternalError, "Task stream interrupted; call tasks/result again"),
  );
}
