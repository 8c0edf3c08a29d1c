import { idempotencyKeyOf } from "../../wire/idempotency-key.js";
import { jsonRpcErrorResponse, jsonRpcResultResponse } from "../../errors/jsonrpc.js";
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
} from "@modelcontextprotocol/server";
import { isTaskIdShape, taskIdForKey } from "../../ids.js";
import { MAX_STEP_RESULT_BYTES } from "../../limits.js";
import type { RunnerClient } from "../../tasks/runner-client.js";
import { RateLimitedError } from "../../tasks/create-limits.js";
import { type IndexScope, FINAL_STATUSES, type NewTask } from "../../runner/index.js";
import { legacyTaskTool, type McpServer } from "../../server/mcp-server.js";
import { invalidArgumentsResult } from "../../server/tool-arguments.js";
import { cancelTask, getTask } from "../../tasks/task-methods.js";
import type { CallerContext } from "../../tasks/caller-context.js";
import { mapBounded } from "../bounded.js";
import { INDEX_PENDING_MS, LIST_CONCURRENCY, LIST_PAGE_SIZE } from "../../limits.js";
import { issueCursor, readCursor } from "./cursors.js";
import { looksLikeQuestionId, readQuestionId } from "./questions.js";
import { resultStream } from "./result-stream.js";
import { issueSession, LEGACY_TASKS_VERSION, readSession, SESSION_HEADER, type ReadSession } from "./session.js";
import { toLegacyTask } from "./shapes.js";
import type { Signer } from "./signing.js";

export interface LegacyWireContext {
  principal: string;
  runners: RunnerClient;
  signer: Signer;
  /** The author's server, for its task tools' definitions. */
  registry: () => McpServer;
  /** Serves the request through the SDK as the router otherwise would. */
  sdk: () => Promise<Response>;
}

type Id = string | number;

interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

const SERVED = new Set(["initialize", "tools/call", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"]);

/**
 * Serves the 2025-11-25 tasks wire (docs/clients.md) in front of the SDK, which serves 2025 traffic statelessly
 * and cannot: `initialize` gets a signed session and the `tasks` capability; on a 2025-11-25 request, task-augmented
 * `tools/call` and `tasks/get|result|list|cancel` are answered here; a client's response to a question is recorded
 * as its answer. Returns null for everything else, which the SDK serves as before.
 */
export async function serveLegacyWire(
  request: Request,
  body: unknown,
  ctx: LegacyWireContext,
): Promise<Response | null> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const message = body as Message;
  if (message.method === undefined && looksLikeQuestionId(message.id)) return answerQuestion(message, message.id, ctx);
  if (typeof message.method !== "string" || !SERVED.has(message.method)) return null;
  if (message.method === "initialize") return withSession(await ctx.sdk(), message, ctx);
  // Only the 2025-11-25 wire: a 2026-07-28 request never reaches the legacy vocabulary.
  const header = request.headers.get("mcp-protocol-version");
  if (header !== null && header !== LEGACY_TASKS_VERSION) return null;
  const session = await readSession(ctx.signer, ctx.principal, request);
  if ((session?.version ?? header) !== LEGACY_TASKS_VERSION) return null;
  if (typeof message.id !== "string" && typeof message.id !== "number") return null;
  const params = typeof message.params === "object" && message.params !== null ? message.params : {};
  const id = message.id;
  try {
    switch (message.method) {
      case "tools/call":
        return await callTool(request, id, params, session, ctx);
      case "tasks/get":
        return ok(id, toLegacyTask(await getTask(ctx, taskIdOf(params))));
      case "tasks/cancel":
        return ok(id, await cancel(ctx, taskIdOf(params)));
      case "tasks/list":
        return await list(id, params, session, ctx);
      case "tasks/result":
        return await resultStream(id, taskIdOf(params), progressTokenOf(params), ctx);
      default:
        return null;
    }
  } catch (error) {
    if (error instanceof ProtocolError) return jsonRpcErrorResponse(id, error);
    throw error;
  }
}

async function callTool(
  request: Request,
  id: Id,
  params: Record<string, unknown>,
  session: ReadSession | null,
  ctx: LegacyWireContext,
): Promise<Response | null> {
  const capabilities = session?.capabilities ?? {};
  const name = params.name;
  if (typeof name !== "string") return null;
  const tool = ctx.registry()[legacyTaskTool](name);
  // Not a task: `params.task` is ignored and the SDK answers with the ordinary result.
  if (!tool) return null;
  if (params.task === undefined) {
    // The 2025-11-25 spec: a tool that requires task augmentation, called without it, is -32601.
    if (tool.taskSupport === "required") {
      return rpcError(id, ProtocolErrorCode.MethodNotFound, `Tool ${name} must be called as a task (params.task)`);
    }
    return null;
  }
  if (tool.hasBeforeStart) return null;
  const ttl = requestedTtl(params.task);
  const parsed = tool.definition.parseInput(params.arguments ?? {});
  // A tool error, as on every wire: the model can repair its arguments, and no task is created.
  if (!parsed.ok) return ok(id, invalidArgumentsResult(name, parsed.issues) as CallToolResult);
  const key = idempotencyKeyOf(undefined, request.headers);
  const taskId = key === undefined ? ctx.runners.newTaskId() : await taskIdForKey(ctx.principal, name, key);
  const toolTtl = tool.definition.ttlMs;
  // The session's declared capabilities decide which questions the task may ask (`{}` without a session: none); as
  // the client sent them, and only the kinds of question are read from them (questionCapabilities).
  const spec: NewTask = {
    taskId,
    principal: ctx.principal,
    tool: name,
    input: JSON.stringify(parsed.value ?? null),
    ttlMs: ttl === undefined ? toolTtl : toolTtl === null ? ttl : Math.min(ttl, toolTtl),
    pollIntervalMs: tool.definition.pollIntervalMs,
    origin: new URL(request.url).origin,
    clientCapabilities: capabilities as ClientCapabilities,
  };
  let created;
  try {
    created = await ctx.runners.create(spec, sessionScopeOf(session), tool.definition.limits);
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    return rpcError(id, ProtocolErrorCode.InvalidRequest, error.message, error.data);
  }
  if (!created) {
    return rpcError(
      id,
      ProtocolErrorCode.InvalidParams,
      "This idempotency key was already used for a call with other arguments",
      {
        reason: "idempotency_key_reused",
      },
    );
  }
  return ok(id, { task: toLegacyTask(created) });
}

/** `params.task.ttl`: absent, or a non-negative integer of milliseconds. */
function requestedTtl(task: unknown): number | undefined {
  if (typeof task !== "object" || task === null || Array.isArray(task)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid params: task must be an object");
  }
  const ttl = (task as { ttl?: unknown }).ttl;
  if (ttl === undefined) return undefined;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 0) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      "Invalid params: task.ttl must be a non-negative integer (ms)",
    );
  }
  return ttl;
}

/** `tasks/cancel` of 2025-11-25: the cancelled task, or -32602 when it was already final. */
async function cancel(caller: CallerContext, taskId: string) {
  const before = await getTask(caller, taskId);
  if (FINAL_STATUSES.has(before.status)) throw alreadyFinal(before.status);
  await cancelTask(caller, taskId);
  const after = await getTask(caller, taskId);
  // It finished on its own between the two calls: the first ending won.
  if (after.status !== "cancelled") throw alreadyFinal(after.status);
  return toLegacyTask(after);
}

function alreadyFinal(status: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel a task that is already ${status}`);
}

/** What a per-session list is keyed by: the session's own id, for as long as the session lasts. */
function sessionScopeOf(session: ReadSession | null): IndexScope["session"] {
  return session?.sessionId ? { id: session.sessionId, expiresAt: session.expiresAt } : undefined;
}

/**
 * `tasks/list`: the caller's principal's tasks, or with per-session lists the tasks created in this session (none
 * without a session). Not served where lists are off (the default without `authenticate`): -32601, as unadvertised.
 */
async function list(
  id: Id,
  params: Record<string, unknown>,
  session: ReadSession | null,
  ctx: LegacyWireContext,
): Promise<Response> {
  const listScope = ctx.runners.listScope;
  if (!listScope) {
    return rpcError(
      id,
      ProtocolErrorCode.MethodNotFound,
      "Method not found: tasks/list is served only with a task catalog (D1) or TASK_INDEX binding, and without authenticate only as a per-session list (taskList)",
    );
  }
  const sessionScope = sessionScopeOf(session);
  const scope: IndexScope | null =
    listScope === "principal"
      ? { principal: ctx.principal }
      : sessionScope
        ? { principal: ctx.principal, session: sessionScope }
        : null;
  const after = await readCursor(ctx.signer, scope, params.cursor);
  if (!scope) return ok(id, { tasks: [] });
  const entries = await ctx.runners.indexPage(scope, after, LIST_PAGE_SIZE + 1);
  const page = entries.slice(0, LIST_PAGE_SIZE);
  const tasks = await mapBounded(page, LIST_CONCURRENCY, async ({ taskId, indexedAt }) => {
    const task = await ctx.runners.get({ taskId, principal: ctx.principal });
    // No task under an index entry: a create still on its way (indexed first, created next), left alone; past
    // INDEX_PENDING_MS, a create that failed after its index write, dropped now. (A catalog row without its task is
    // one being purged: its runner or the sweep deletes it.)
    if (!task && !ctx.runners.listsFromCatalog && Date.now() - indexedAt > INDEX_PENDING_MS) {
      await ctx.runners.unindex(scope, taskId);
    }
    return task && toLegacyTask(task);
  });
  const last = page.at(-1);
  const nextCursor = entries.length > LIST_PAGE_SIZE && last ? await issueCursor(ctx.signer, scope, last) : undefined;
  return ok(id, { tasks: tasks.filter((task) => task !== null), ...(nextCursor ? { nextCursor } : {}) });
}

/**
 * A client's JSON-RPC response to a question asked on `tasks/result`: recorded as the answer when its id is one this
 * principal was asked under and the question is still outstanding (HTTP 202), else refused (HTTP 400, nothing
 * recorded).
 */
async function answerQuestion(message: Message, id: string, ctx: LegacyWireContext): Promise<Response> {
  const question = await readQuestionId(ctx.signer, ctx.principal, id);
  if (!question || !isTaskIdShape(question.taskId)) return refuseAnswer("no such question was asked");
  let answer: unknown;
  if (message.error !== undefined) {
    if (question.method !== "elicitation/create") {
      // Nothing a sampling or roots question could record in its place: it stays outstanding until answered or timed out.
      console.warn("durableMcp: a client answered a task's question with an error", {
        taskId: question.taskId,
        key: question.key,
        error: message.error,
      });
      return new Response(null, { status: 202 });
    }
    // The client could not show the form: as if the user dismissed it.
    answer = { action: "cancel" };
  } else {
    answer = message.result;
    if (typeof answer !== "object" || answer === null) return refuseAnswer("a response carries a result or an error");
    const { _meta: _dropped, ...bare } = answer as Record<string, unknown>;
    answer = bare;
  }
  if (new TextEncoder().encode(JSON.stringify(answer)).byteLength > MAX_STEP_RESULT_BYTES) {
    return refuseAnswer(`the answer is larger than ${MAX_STEP_RESULT_BYTES} bytes`);
  }
  const outcome = await ctx.runners.update(
    { taskId: question.taskId, principal: ctx.principal },
    { [question.key]: answer },
  );
  if (!outcome) return refuseAnswer("no such question was asked");
  if (outcome.invalid) {
    const { path, message: problem } = outcome.invalid;
    return refuseAnswer(`the answer does not fit its question: ${path} ${problem}`);
  }
  if (outcome.accepted.length === 0) return refuseAnswer("the question is not outstanding (already answered or ended)");
  return new Response(null, { status: 202 });
}

function refuseAnswer(reason: string): Response {
  return jsonRpcErrorResponse(
    null,
    new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${reason}`),
    400,
  );
}

/**
 * The SDK's `initialize` answer plus the signed session (every negotiated version) and, on 2025-11-25, the `tasks`
 * capability. The SDK answers as JSON or as an SSE stream of one message; the answer keeps its format.
 */
async function withSession(response: Response, message: Message, ctx: LegacyWireContext): Promise<Response> {
  if (!response.ok) return response;
  const sse = (response.headers.get("content-type") ?? "").includes("text/event-stream");
  const text = await response.text();
  const messages = sse ? sseMessages(text) : [JSON.parse(text) as Message];
  const answer = messages.find((m) => m.id === message.id && typeof m.result === "object" && m.result !== null);
  const result = answer?.result as { protocolVersion?: unknown; capabilities?: Record<string, unknown> } | undefined;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  if (typeof result?.protocolVersion === "string") {
    if (result.protocolVersion === LEGACY_TASKS_VERSION) {
      result.capabilities = {
        ...result.capabilities,
        tasks: {
          ...(ctx.runners.listScope ? { list: {} } : {}),
          cancel: {},
          requests: { tools: { call: {} } },
        },
      };
    }
    const declared = (message.params?.capabilities ?? {}) as Record<string, unknown>;
    headers.set(
      SESSION_HEADER,
      await issueSession(ctx.signer, ctx.principal, { version: result.protocolVersion, capabilities: declared }),
    );
  }
  const body = sse
    ? messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join("")
    : JSON.stringify(messages[0]);
  return new Response(body, { status: response.status, headers });
}

function sseMessages(text: string): Message[] {
  const messages: Message[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data) messages.push(JSON.parse(data) as Message);
  }
  return messages;
}

function taskIdOf(params: Record<string, unknown>): string {
  if (typeof params.taskId !== "string") {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid params: taskId must be a string");
  }
  return params.taskId;
}

function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

function ok(id: Id, result: unknown): Response {
  return jsonRpcResultResponse(id, result);
}

function rpcError(id: Id, code: number, message: string, data?: unknown): Response {
  return jsonRpcErrorResponse(id, new ProtocolError(code, message, data));
}
