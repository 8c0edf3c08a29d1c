import {
  classifyInboundRequest,
  ProtocolError,
  SERVER_INFO_META_KEY,
  type Implementation,
} from "@modelcontextprotocol/server";
import { isFastPathRequest } from "./fast-path-request.js";
import { jsonRpcErrorResponse, jsonRpcResultTextResponse } from "../errors/jsonrpc.js";
import type { CallerContext } from "../tasks/caller-context.js";
import type { TaskText } from "../runner/index.js";
import { cancelTask, getTask, getTaskText, updateTask } from "../tasks/task-methods.js";
import { declaredWithin } from "../wire/json-body.js";
import { STEPS_META } from "../wire/meta-keys.js";
import { PROTOCOL_VERSION, TaskMethods } from "../wire/protocol.js";

const FAST_METHODS: ReadonlySet<string> = new Set([TaskMethods.get, TaskMethods.update, TaskMethods.cancel]);

/** Cheap pre-check on headers only: the parsed body is looked at just for `tasks/*`. */
export function isTaskMethodRequest(request: Request): boolean {
  return request.method === "POST" && FAST_METHODS.has(request.headers.get("mcp-method") ?? "");
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A `tasks/get` started from the request's headers alone, while its body is still being read. */
export interface PrefetchedGet {
  taskId: string;
  outcome: Promise<Outcome<TaskText>>;
}

/**
 * Starts the `get` RPC of a `tasks/get` as soon as the caller is known, from its Mcp-Name header, so that it runs
 * while the body arrives and is read (reading it is ≈ a quarter of the request under wrangler dev). A get changes
 * nothing, and its answer is used only if the body then passes every check of the fast path and names the same
 * task without asking for more (`serveTaskMethod`); otherwise it is dropped, its error included. It is made with
 * the authenticated principal, so it reads nothing the request itself could not.
 */
export function prefetchTaskGet(
  request: Request,
  caller: CallerContext,
  maxBodyBytes: number,
): PrefetchedGet | undefined {
  const headers = request.headers;
  if (request.method !== "POST" || headers.get("mcp-method") !== TaskMethods.get) return undefined;
  // Only a body that declares a length within the bound: one the bound refuses (413) never reaches an object.
  if (!declaredWithin(request, maxBodyBytes)) return undefined;
  if (headers.get("mcp-protocol-version") !== PROTOCOL_VERSION) return undefined;
  const taskId = headers.get("mcp-name")?.trim();
  if (!taskId) return undefined;
  const outcome = getTaskText(caller, taskId).then(
    (value): Outcome<TaskText> => ({ ok: true, value }),
    (error: unknown): Outcome<TaskText> => ({ ok: false, error }),
  );
  return { taskId, outcome };
}

/** The prefetched task if it answers this very get (same task; no step timeline asked), else a fresh get. */
async function getText(caller: CallerContext, taskId: string, prefetched?: PrefetchedGet): Promise<TaskText> {
  if (prefetched?.taskId !== taskId) return getTaskText(caller, taskId);
  const outcome = await prefetched.outcome;
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** The server's `Implementation` as JSON text, once per object (`serverInfo()` hands out the same one). */
const serverInfoTexts = new WeakMap<Implementation, string>();

/**
 * The answer to a tasks/get, joined from the runner's text: what `Response.json` of `{ jsonrpc, id, result: {
 * ...task, resultType: "complete", _meta: { ...task._meta, [SERVER_INFO_META_KEY]: serverInfo } } }` sends, but
 * without parsing the task back and encoding it again (key order aside, which JSON leaves free).
 */
function taskTextResponse(id: string | number, task: TaskText, serverInfo: Implementation): Response {
  let info = serverInfoTexts.get(serverInfo);
  if (info === undefined) serverInfoTexts.set(serverInfo, (info = JSON.stringify(serverInfo)));
  const entry = `${JSON.stringify(SERVER_INFO_META_KEY)}:${info}`;
  // `meta` is a non-empty object's text (task-view.ts) without the server's key: its entries, then ours.
  const meta = task.meta === null ? `{${entry}}` : `${task.meta.slice(0, -1)},${entry}}`;
  // `body` is an object's text with at least its taskId: its entries, then resultType and _meta.
  const result = `${task.body.slice(0, -1)},"resultType":"complete","_meta":${meta}}`;
  return jsonRpcResultTextResponse(id, result);
}

interface TaskMethodRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: string;
  params: { taskId: string; inputResponses?: unknown; _meta: Record<string, unknown> };
}

/**
 * Answers a well-formed `tasks/get|update|cancel` directly from the TaskRunner, without building the author's
 * server for the request (the SDK's per-request pipeline costs more than the Durable Object call itself). Only the
 * happy path is served here: a request that is anything but well-formed and declared returns null, and the SDK
 * answers it with its own exact error, so the wire stays the SDK's wherever they could differ.
 */
export async function serveTaskMethod(
  request: Request,
  body: unknown,
  caller: CallerContext,
  serverInfo: () => Implementation,
  prefetched?: PrefetchedGet,
): Promise<Response | null> {
  if (!isWellFormed(request, body)) return null;
  const { id, method, params } = body;
  try {
    if (method === TaskMethods.get && params._meta[STEPS_META] === undefined) {
      return taskTextResponse(id, await getText(caller, params.taskId, prefetched), serverInfo());
    }
    let result: Record<string, unknown> = {};
    if (method === TaskMethods.get) result = { ...(await getTask(caller, params.taskId, params._meta)) };
    else if (method === TaskMethods.update)
      await updateTask(caller, params.taskId, inputResponses(params.inputResponses));
    else await cancelTask(caller, params.taskId);
    const meta = { ...(result._meta as object | undefined), [SERVER_INFO_META_KEY]: serverInfo() };
    return Response.json({ jsonrpc: "2.0", id, result: { ...result, resultType: "complete", _meta: meta } });
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return jsonRpcErrorResponse(id, error);
  }
}

function isWellFormed(request: Request, body: unknown): body is TaskMethodRequest {
  if (!isFastPathRequest(request, body, "taskId")) return false;
  if (request.headers.get("mcp-method") !== body.method) return false;
  return classifiedModern(body as TaskMethodRequest);
}

/**
 * The SDK's classification (the envelope checked against its schemas) of the requests seen so far, by everything
 * it reads: the body with the task id and a string or safe-integer id blanked. It is the costliest check here
 * (≈ 0.15 ms of a tasks/get under wrangler dev, docs/performance.md), and a client sends the same envelope on
 * every request, so each distinct one is classified once. The headers it also reads were checked to match the
 * body above. Bounded: cleared when full (a client cycling envelopes only loses the saving).
 */
const classified = new Map<string, boolean>();
const CLASSIFIED_MAX = 256;
/** Longer envelopes are classified every time rather than kept (256 × this bounds the memory held). */
const CLASSIFIED_KEY_MAX = 4096;

function classifiedModern(message: TaskMethodRequest): boolean {
  const { id, params } = message;
  // Only these ids are blanked: a JSON-RPC id of another kind (a fraction, say) is classified on its own.
  const idClass = typeof id === "string" ? "string" : Number.isSafeInteger(id) ? "integer" : id;
  const key = JSON.stringify({ ...message, id: idClass, params: { ...params, taskId: "" } });
  let modern = classified.get(key);
  if (modern === undefined) {
    modern =
      classifyInboundRequest({
        httpMethod: "POST",
        protocolVersionHeader: PROTOCOL_VERSION,
        mcpMethodHeader: message.method,
        mcpNameHeader: params.taskId,
        body: message,
      }).kind === "modern";
    if (key.length <= CLASSIFIED_KEY_MAX) {
      if (classified.size >= CLASSIFIED_MAX) classified.clear();
      classified.set(key, modern);
    }
  }
  return modern;
}

/** As the SDK lifts them: bare answers only; `{ method, result }` wrappers are dropped. */
function inputResponses(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      ([, answer]) => !(typeof answer === "object" && answer !== null && ("method" in answer || "result" in answer)),
    ),
  );
}
