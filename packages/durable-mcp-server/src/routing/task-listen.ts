import {
  classifyInboundRequest,
  ProtocolError,
  ProtocolErrorCode,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/server";
import { OwnErrorCode } from "../errors/codes.js";
import {
  jsonRpcErrorMessage,
  jsonRpcErrorResponse,
  jsonRpcNotification,
  jsonRpcResultMessage,
} from "../errors/jsonrpc.js";
import { isTaskIdShape } from "../ids.js";
// MAX_LISTEN_TASK_IDS: each id is a Durable Object call, and each owned one holds a stream; LISTEN_CONCURRENCY keeps
// one request from monopolising the isolate.
import { LISTEN_CONCURRENCY, MAX_LISTEN_TASK_IDS } from "../limits.js";
import { type TaskAccess, tasksOf } from "../runner/index.js";
import { declaresTasks, REQUIRED_TASKS_CAPABILITY } from "../wire/protocol.js";
import type { DetailedTask } from "../wire/task-shapes.js";
import { mapBounded } from "./bounded.js";
import { takeStreamSlot, tooManyStreams } from "./stream-budget.js";
import type { CallerContext } from "../tasks/caller-context.js";

const LISTEN = "subscriptions/listen";
const KEEPALIVE_MS = 15_000;

interface ListenRequest {
  id: string | number;
  params?: { _meta?: Record<string, unknown>; notifications?: { taskIds?: unknown } };
}

/** Cheap pre-check on headers only: the body is read just for listens. */
export function wantsTaskListen(request: Request): boolean {
  return request.headers.get("mcp-method") === LISTEN;
}

/**
 * Serves `subscriptions/listen` for `notifications.taskIds` (the SDK's own listen router drops task ids). Returns
 * null to leave any other listen to the SDK. The stream acknowledges the ids this caller owns (others are left
 * out, exactly as unknown ones), then sends `notifications/tasks` with the full task on every change, and ends
 * with the listen's result once every acknowledged task is final.
 */
export async function serveTaskListen(
  request: Request,
  body: unknown,
  context: CallerContext,
): Promise<Response | null> {
  const listen = body as ListenRequest;
  const requested = listen?.params?.notifications?.taskIds;
  if (!Array.isArray(requested)) return null;

  const rejection = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: request.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body,
  });
  if (rejection.kind === "reject") {
    const { code, message, data, httpStatus } = rejection;
    return jsonRpcErrorResponse(listen.id ?? null, new ProtocolError(code, message, data), httpStatus);
  }
  if (!request.headers.get("mcp-protocol-version")) {
    return jsonRpcErrorResponse(
      listen.id,
      new ProtocolError(OwnErrorCode.HeaderMismatch, "Missing MCP-Protocol-Version header"),
      400,
    );
  }
  if (!declaresTasks(listen.params?._meta)) {
    return jsonRpcErrorResponse(
      listen.id,
      new ProtocolError(
        ProtocolErrorCode.MissingRequiredClientCapability,
        "Missing required client capability",
        REQUIRED_TASKS_CAPABILITY,
      ),
      400,
    );
  }

  if (requested.length > MAX_LISTEN_TASK_IDS) {
    return jsonRpcErrorResponse(
      listen.id,
      new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid params: a listen names at most ${MAX_LISTEN_TASK_IDS} task ids (got ${requested.length})`,
      ),
      400,
    );
  }

  const ids = [...new Set(requested.filter(isTaskIdShape))];
  // A listen is one of the principal's stream slots, given back when it ends however it ends (docs/limits.md).
  const release = takeStreamSlot(context.principal);
  if (!release) return tooManyStreams(listen.id, "principal");
  // An id that is not this caller's task answers null at once from an object that stays empty (no storage, no
  // stream), so it costs one call and is gone; owned ones open a stream each.
  const opened = await mapBounded(ids, LISTEN_CONCURRENCY, async (taskId) => {
    const access: TaskAccess = { taskId, principal: context.principal };
    try {
      return { taskId, stream: await context.runners.watch(access) };
    } catch (error) {
      return { taskId, stream: null, error };
    }
  });
  const failure = opened.find((w) => "error" in w);
  const full = opened.some((w) => w.stream === "too_many_streams");
  if (failure || full) {
    // Release the streams already open before the request fails, so no TaskRunner keeps a dead listener.
    await Promise.allSettled(opened.map((w) => (typeof w.stream === "object" ? w.stream?.cancel() : undefined)));
    release();
    if (failure) throw failure.error;
    return tooManyStreams(listen.id, "task");
  }
  const accepted = opened.filter(
    (w): w is { taskId: string; stream: ReadableStream<Uint8Array> } =>
      w.stream !== null && typeof w.stream === "object",
  );
  return new Response(sseStream(listen.id, accepted, release), {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function sseStream(
  id: string | number,
  watched: Array<{ taskId: string; stream: ReadableStream<Uint8Array> }>,
  release: () => void,
) {
  const encoder = new TextEncoder();
  const subscriptionMeta = { [SUBSCRIPTION_ID_META_KEY]: id };
  const readers = watched.map((w) => w.stream.pipeThrough(new TextDecoderStream()).getReader());
  let keepalive: ReturnType<typeof setInterval> | null = null;
  let open = true;
  const stop = () => {
    open = false;
    if (keepalive) clearInterval(keepalive);
    release();
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (text: string) => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      const send = (message: unknown) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      send(
        jsonRpcNotification("notifications/subscriptions/acknowledged", {
          notifications: { taskIds: watched.map((w) => w.taskId) },
          _meta: subscriptionMeta,
        }),
      );
      keepalive = setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS);
      try {
        await Promise.all(
          readers.map((reader) => forwardTasks(reader, (task) => send(taskNotification(task, subscriptionMeta)))),
        );
        send(jsonRpcResultMessage(id, { resultType: "complete", _meta: subscriptionMeta }));
      } catch (error) {
        // A TaskRunner went away mid-listen (reset, deploy): end the listen with an error the client can act on.
        console.warn("task listen interrupted", { id, error: String(error) });
        await Promise.allSettled(readers.map((reader) => reader.cancel()));
        send(
          jsonRpcErrorMessage(
            id,
            new ProtocolError(ProtocolErrorCode.InternalError, "Task stream interrupted; listen again"),
          ),
        );
      } finally {
        if (open) controller.close();
        stop();
      }
    },
    async cancel(reason) {
      stop();
      await Promise.allSettled(readers.map((reader) => reader.cancel(reason)));
    },
  });
}

/** Reads one TaskRunner's task stream to its end. */
async function forwardTasks(reader: ReadableStreamDefaultReader<string>, onTask: (task: DetailedTask) => void) {
  for await (const task of tasksOf(reader)) onTask(task);
}

function taskNotification(task: DetailedTask, subscriptionMeta: Record<string, unknown>) {
  return jsonRpcNotification("notifications/tasks", { ...task, _meta: { ...task._meta, ...subscriptionMeta } });
}
