// The page's side of its agent: the TaskWatcher (agent/task-watcher.ts) of this browser session, reached with
// `useAgent` over a WebSocket at /agents/task-watcher/<session>. The agent is the MCP client; the page shows the
// state it pushes and calls its @callable methods. The session id is kept in localStorage, so a reload (or a
// restart of the server) finds the same agent, with its connection, its tasks and their logs.
import { useAgent } from "agents/react";
import { useState } from "react";
import { McpError, type JsonObject } from "./mcp.ts";
import { INITIAL_STATE, WATCHER_AGENT, type CallOutcome, type WatcherState } from "./watcher-state.ts";

const SESSION_KEY = "durable-mcp-demo-client/session";

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** This browser's session: names its TaskWatcher agent (a capability: whoever has it sees the agent's tasks). */
export function sessionId(): string {
  try {
    const known = localStorage.getItem(SESSION_KEY);
    if (known && /^[0-9a-f]{32}$/.test(known)) return known;
    const fresh = newSessionId();
    localStorage.setItem(SESSION_KEY, fresh);
    return fresh;
  } catch {
    return newSessionId();
  }
}

type Caller = <T>(method: string, args?: unknown[]) => Promise<T>;
let caller: Caller | undefined;
const waiting: Array<(call: Caller) => void> = [];

/** Calls a @callable method of the agent (queued until the page's agent connection exists). */
export function callWatcher<T>(method: string, args: unknown[] = []): Promise<T> {
  if (caller) return caller<T>(method, args);
  return new Promise<T>((resolve, reject) => waiting.push((call) => call<T>(method, args).then(resolve, reject)));
}

/**
 * An MCP request the agent makes for the page (file_upload_url, file_status, file_download_url): its result, or
 * the agent's McpError rebuilt (unreachable, not-mcp, rpc), so the page can tell the cases apart.
 */
export async function watcherTool(method: string, args: unknown[]): Promise<JsonObject> {
  let outcome: CallOutcome;
  try {
    outcome = await callWatcher<CallOutcome>(method, args);
  } catch (error) {
    throw new McpError(
      "unreachable",
      `The page's agent did not answer (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  if (outcome.ok) return outcome.result;
  throw new McpError(outcome.kind, outcome.message, outcome.rpcError, outcome.httpStatus);
}

export interface Watcher {
  session: string;
  /** The agent's last pushed state (kept while the connection is down); `synced` once one arrived. */
  state: WatcherState & { synced: boolean };
  /** Whether the WebSocket to the agent is open. */
  online: boolean;
}

/** Connects to this session's agent; re-renders on every state it pushes. Use once, at the top of the page. */
export function useWatcher(): Watcher {
  const [session] = useState(sessionId);
  const [online, setOnline] = useState(false);
  const agent = useAgent<WatcherState>({
    agent: WATCHER_AGENT,
    name: session,
    onOpen: () => setOnline(true),
    onClose: () => setOnline(false),
  });
  const call = ((method: string, args?: unknown[]) => agent.call(method, args)) as Caller;
  if (!caller) {
    caller = call;
    for (const resolve of waiting.splice(0)) resolve(call);
  } else {
    caller = call;
  }
  return { session, state: { ...(agent.state ?? INITIAL_STATE), synced: agent.state !== undefined }, online };
}
