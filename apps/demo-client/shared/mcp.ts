// What the page and its agent both speak about MCP: the JSON and JSON-RPC types (the library's raw client's own,
// durable-mcp-server/testing/mcp-client), the log entry of one exchange, the failure kinds, a task snapshot and a
// tool as the page shows them, and small readers of results and task `_meta`. No transport here: the agent's
// requests go through agent/transport.ts. No DOM and no Workers API: the agent and the page both type-check it.
import type { JsonObject, JsonRpcMessage } from "durable-mcp-server/testing/mcp-client";

export type { Json, JsonObject, JsonRpcMessage } from "durable-mcp-server/testing/mcp-client";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const PROGRESS_META = "durable-mcp-server/progress";

export type JsonRpcError = NonNullable<JsonRpcMessage["error"]>;

/** One request and what came back, as the page shows it in a task's log. */
export interface LogEntry {
  at: string;
  url: string;
  /** Set when the request went to the agent's own Worker in-process (no network). */
  inProcess?: boolean;
  request: JsonRpcMessage;
  httpStatus?: number;
  /** The JSON-RPC response, plus anything an SSE answer carried before it. */
  response?: JsonRpcMessage;
  related?: JsonRpcMessage[];
  /** Set when no JSON-RPC response arrived (network error, a body that is not JSON-RPC, ...). */
  failure?: string;
}

export type McpErrorKind = "unreachable" | "not-mcp" | "rpc";

/** Why a request failed, in words the page can show, with the kind of failure to pick the next step from. */
export class McpError extends Error {
  constructor(
    readonly kind: McpErrorKind,
    message: string,
    readonly rpcError?: JsonRpcError,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = "McpError";
  }
}

export interface TaskSnapshot {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method: string; params?: JsonObject }>;
  result?: JsonObject;
  error?: JsonRpcError;
  _meta?: JsonObject;
}

export const FINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);

export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  _meta?: JsonObject;
}

export function taskSupport(tool: ToolInfo): string | undefined {
  const meta = tool._meta?.[TASKS_EXTENSION];
  return meta && typeof meta === "object" && !Array.isArray(meta) && typeof meta.taskSupport === "string"
    ? meta.taskSupport
    : undefined;
}

/** Asked for in a `tasks/get`'s `_meta`, durable-mcp-server answers with the task's step timeline under it. */
export const STEPS_META = "durable-mcp-server/steps";

/** One attempt of a `do` step as the server timed it (`endedAt` null while running or when it was cut short). */
export interface TimelineAttempt {
  n: number;
  startedAt: string;
  endedAt: string | null;
  error?: { name: string; message: string };
}

export interface TimelineStep {
  name: string;
  /** Which use of the name this is (from 1); absent from older servers. */
  occurrence?: number;
  /** "do", "sleep", "input", "event", "webhook", "patch", "invoke"; another kind (a newer server's) is shown generically. */
  kind: string;
  state: "running" | "waiting" | "done" | "failed";
  attempts: number;
  startedAt: string | null;
  updatedAt: string;
  durationMs: number | null;
  /** A `do` step's attempts, timed (newest 20); absent from servers without the history. */
  attemptHistory?: TimelineAttempt[];
  /** Bytes of the journaled result, when the server kept it in its journal. */
  resultBytes?: number | null;
  /** An `invoke` step's child task: its id, tool, and status as the parent knows it (`working` until it told). */
  child?: { taskId: string; task: string; status: string };
}

/** The step timeline a task snapshot carries, if its server sent one. */
export function timelineOf(task: TaskSnapshot): { total: number; steps: TimelineStep[] } | undefined {
  const value = task._meta?.[STEPS_META] as { total?: unknown; steps?: unknown } | undefined;
  if (!value || typeof value.total !== "number" || !Array.isArray(value.steps)) return undefined;
  return { total: value.total, steps: value.steps as TimelineStep[] };
}

export function progressOf(task: TaskSnapshot): number | undefined {
  const value = task._meta?.[PROGRESS_META];
  return typeof value === "number" ? value : undefined;
}

/** The text parts of a CallToolResult, joined. */
export function resultText(result: JsonObject | undefined): string {
  const content = result?.content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      part && typeof part === "object" && !Array.isArray(part) && typeof part.text === "string" ? part.text : "",
    )
    .filter(Boolean)
    .join("\n");
}

/** The error envelope of a failed tool result (`structuredContent.error`: code, message, recoveryHint, ...). */
export function errorEnvelope(result: JsonObject | undefined): JsonObject | undefined {
  const structured = result?.structuredContent;
  if (!structured || typeof structured !== "object" || Array.isArray(structured)) return undefined;
  const error = structured.error;
  return error && typeof error === "object" && !Array.isArray(error) ? error : undefined;
}

/** An error's message (anything thrown, as text). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
