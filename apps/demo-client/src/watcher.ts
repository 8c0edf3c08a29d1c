// The page's side of its agent: the TaskWatcher (agent/task-watcher.ts) of this browser session, reached with
// `useAgent` over a WebSocket at /agents/task-watcher/<name>. The agent is the MCP client; the page shows the
// state it pushes and calls its @callable methods. The session is a secret cookie the Worker sets (HttpOnly: the
// page never sees it) when the page opens it with POST /agents/session, which answers the agent's name and the
// servers it may call; the browser keeps the cookie, so a reload (or a restart of the server) finds the same agent,
// with its connection, its tasks and their logs.
import { useAgent } from "agents/react";
import { createContext, useContext, useEffect, useState } from "react";
import { McpError, type JsonObject } from "../shared/mcp.ts";
import {
  INITIAL_STATE,
  SESSION_PATH,
  WATCHER_AGENT,
  type CallOutcome,
  type SessionInfo,
  type WatcherState,
} from "../shared/watcher-state.ts";

export type SessionState = { state: "opening"; problem?: string } | { state: "open"; session: SessionInfo };

/** This browser's session, opened once per page load (retried while the server does not answer). */
export function useSession(): SessionState {
  const [state, setState] = useState<SessionState>({ state: "opening" });
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open = async () => {
      try {
        const res = await fetch(SESSION_PATH, { method: "POST", credentials: "same-origin" });
        const body = (await res.json().catch(() => ({}))) as Partial<SessionInfo> & { message?: string };
        if (!current) return;
        if (res.ok && typeof body.name === "string" && Array.isArray(body.servers)) {
          setState({ state: "open", session: { name: body.name, servers: body.servers } });
          return;
        }
        setState({ state: "opening", problem: `${body.message ?? "No session"} (HTTP ${res.status}).` });
        // A refusal for the client (429, 403) or the configuration (503) does not pass by itself soon.
        if (res.status < 500 || res.status === 503) return;
      } catch (error) {
        if (!current) return;
        setState({ state: "opening", problem: `The server did not answer (${String(error)}); retrying.` });
      }
      timer = setTimeout(() => void open(), 2000);
    };
    void open();
    return () => {
      current = false;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
  return state;
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
  /** The agent's name (derived from the session secret; on its own it opens nothing) and the servers it may call. */
  session: SessionInfo;
  /** The agent's last pushed state (kept while the connection is down); `synced` once one arrived. */
  state: WatcherState & { synced: boolean };
  /** Whether the WebSocket to the agent is open. */
  online: boolean;
}

/** Connects to this session's agent; re-renders on every state it pushes. Use once, at the top of the page. */
export function useWatcher(session: SessionInfo): Watcher {
  const [online, setOnline] = useState(false);
  const agent = useAgent<WatcherState>({
    agent: WATCHER_AGENT,
    name: session.name,
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

/** The session's Watcher, provided once at the top of the page (App) to every view below it. */
export const WatcherContext = createContext<Watcher | undefined>(undefined);

export function useWatcherState(): Watcher {
  const watcher = useContext(WatcherContext);
  if (!watcher) throw new Error("useWatcherState outside <App>");
  return watcher;
}
