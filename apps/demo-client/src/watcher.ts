// The page's side of its agent: the TaskWatcher (agent/task-watcher.ts) of this browser session, reached with
// `useAgent` over a WebSocket at /agents/task-watcher/<name>. The agent is the MCP client; the page shows the
// state it pushes and calls its @callable methods. The session is a secret cookie the Worker sets (HttpOnly: the
// page never sees it) when the page opens it with POST /agents/session, which answers the agent's name and the
// servers it may call; the browser keeps the cookie, so a reload (or a restart of the server) finds the same agent,
// with its connection, its tasks and their logs. The calls go through the session's AgentCalls (src/agent-calls.ts),
// handed to every view with the Watcher.
import { useAgent } from "agents/react";
import { createContext, useContext, useEffect, useState } from "react";
import {
  INITIAL_STATE,
  SESSION_PATH,
  WATCHER_AGENT,
  type SessionInfo,
  type WatcherState,
} from "../shared/watcher-state.ts";
import { AgentCalls, type AgentTool, type Caller } from "./agent-calls.ts";

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

export interface Watcher {
  /** The agent's name (derived from the session secret; on its own it opens nothing) and the servers it may call. */
  session: SessionInfo;
  /** The agent's last pushed state (kept while the connection is down); `synced` once one arrived. */
  state: WatcherState & { synced: boolean };
  /** Whether the WebSocket to the agent is open. */
  online: boolean;
  /** Calls a @callable method of the agent (queued until the page's agent connection exists). */
  call: AgentCalls["call"];
  /** An MCP request the agent makes for the page: its result, or the agent's McpError rebuilt. */
  tool: AgentTool;
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
  // The session's calls, kept across renders; the connection is attached after the commit, never during a render.
  const [calls] = useState(() => new AgentCalls());
  const agentCall = agent.call;
  useEffect(
    () => calls.attach(((method: string, args?: unknown[]) => agentCall(method, args)) as Caller),
    [calls, agentCall],
  );
  return {
    session,
    state: { ...(agent.state ?? INITIAL_STATE), synced: agent.state !== undefined },
    online,
    call: calls.call,
    tool: calls.tool,
  };
}

/** The session's Watcher, provided once at the top of the page (App) to every view below it. */
export const WatcherContext = createContext<Watcher | undefined>(undefined);

export function useWatcherState(): Watcher {
  const watcher = useContext(WatcherContext);
  if (!watcher) throw new Error("useWatcherState outside <App>");
  return watcher;
}
