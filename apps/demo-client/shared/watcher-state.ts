// What the TaskWatcher agent (agent/task-watcher.ts) keeps and pushes to the page with setState, and what its
// callable methods answer: plain JSON, shared by the agent and the page.
import type { JsonObject, JsonRpcError, McpErrorKind, TaskSnapshot, ToolInfo } from "./mcp.ts";
import type { ParentLink } from "./task-tree.ts";

/** The agent's class, as `useAgent` and `routeAgentRequest` name it (binding TASK_WATCHER). */
export const WATCHER_AGENT = "task-watcher";

/** POST here (same origin) opens the browser's session: the Worker sets its secret cookie and answers SessionInfo. */
export const SESSION_PATH = "/agents/session";
/** An agent's name in /agents/task-watcher/<name>: anything else is refused with 400 before any agent is reached. */
export const WATCHER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Sessions (hence agents) one client may open per SESSION_WINDOW_MS unless WATCHER_SESSIONS_PER_CLIENT says. */
export const SESSIONS_PER_CLIENT = 20;
export const SESSION_WINDOW_MS = 24 * 3600 * 1000;

/** What POST /agents/session answers: the session's agent and the servers it may call (WATCHER_SERVERS). */
export interface SessionInfo {
  name: string;
  servers: string[];
}

export interface Problem {
  message: string;
  next: string;
  /** The server answered 401: the page asks for a bearer token. */
  needsToken?: boolean;
}

export type Connection =
  | { state: "idle" }
  | { state: "connecting"; url: string }
  | { state: "failed"; url: string; problem: Problem }
  | { state: "connected"; url: string; server: string; tasks: boolean; tools: ToolInfo[] };

export interface TaskRecord {
  taskId: string;
  tool: string;
  serverUrl: string;
  arguments: JsonObject;
  startedAt: string;
  /**
   * Set for a child task the agent follows because a task it follows invoked it (shared/task-tree.ts): its parent.
   * Its `arguments` are then unknown ({}): the parent's handler chose them.
   */
  parent?: ParentLink;
  /** Set once tasks/cancel was acknowledged: the page shows "cancellation requested" until the task is final. */
  cancelRequested?: boolean;
}

export interface TaskView {
  record: TaskRecord;
  snapshot?: TaskSnapshot;
  /** Why the last tasks/get failed (the agent polls on unless the task is gone). */
  pollError?: string;
  /** The server no longer knows the task (expired, purged, or another server's). */
  gone?: string;
  /** When the agent last heard from the server about this task (ISO). */
  polledAt?: string;
  /** The sequence number of the task's newest logged JSON-RPC exchange: the page fetches the log when it changes. */
  logSeq: number;
}

export interface WatcherState {
  /** The server URL last connected to (the page's URL field starts from it). */
  serverUrl?: string;
  /** Whether the agent holds a bearer token for that URL (the token itself never leaves the agent). */
  hasToken: boolean;
  connection: Connection;
  /** The tasks this agent started, newest first, and the child tasks of those (each with its `record.parent`). */
  tasks: TaskView[];
}

export const INITIAL_STATE: WatcherState = { hasToken: false, connection: { state: "idle" }, tasks: [] };

/** A callable's answer for an MCP request: the result, or the McpError's parts (errors do not cross RPC intact). */
export type CallOutcome =
  | { ok: true; result: JsonObject }
  | { ok: false; kind: McpErrorKind; message: string; rpcError?: JsonRpcError; httpStatus?: number };

export type StartOutcome = { kind: "ok" | "error"; text: string; taskId?: string };
