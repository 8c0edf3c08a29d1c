// "1. Connect": pick one of the servers the agent may call (WATCHER_SERVERS), with a bearer token if it needs one,
// and see what connecting found: the server and whether it offers the Tasks extension, or the problem and a next step.
import { useState } from "react";
import { errorText, TASKS_EXTENSION } from "../../shared/mcp.ts";
import type { Connection } from "../../shared/watcher-state.ts";
import { callWatcher, useWatcherState } from "../watcher.ts";

const defaultServer = () => `${location.origin}/mcp`;

export function ConnectPanel() {
  const { state, session } = useWatcherState();
  const { connection } = state;
  const { servers } = session;
  // The choice follows the agent's server URL until another is picked. Only the servers WATCHER_SERVERS lists are
  // offered: the agent refuses any other.
  const [edited, setEdited] = useState<string | undefined>();
  const known = state.serverUrl !== undefined && servers.includes(state.serverUrl) ? state.serverUrl : undefined;
  const url = edited ?? known ?? servers[0] ?? "";
  const own = servers.includes(defaultServer()) ? defaultServer() : undefined;
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState<string | undefined>();

  const connect = async (target: string) => {
    setEdited(target);
    setProblem(undefined);
    try {
      // An empty token field keeps the token the agent holds for this URL.
      await callWatcher<Connection>("connectTo", token.trim() ? [target, token.trim()] : [target]);
      setEdited(undefined);
      setToken("");
    } catch (error) {
      setProblem(`The page's agent did not answer (${errorText(error)}). Try again once it is connected.`);
    }
  };

  return (
    <section className="panel">
      <h2>1. Connect</h2>
      <form
        className="connect"
        onSubmit={(event) => {
          event.preventDefault();
          void connect(url.trim());
        }}
      >
        <label htmlFor="server-url">MCP server</label>
        <select id="server-url" value={url} onChange={(e) => setEdited(e.target.value)}>
          {servers.map((server) => (
            <option key={server} value={server}>
              {server}
            </option>
          ))}
        </select>
        <label htmlFor="server-token">Bearer token</label>
        <input
          id="server-token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          placeholder={state.hasToken ? "kept by the agent for this URL" : "only for a server with AUTH_TOKENS"}
        />
        <button type="submit" disabled={connection.state === "connecting" || !url}>
          {connection.state === "connecting" ? "Connecting…" : "Connect"}
        </button>
      </form>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {connection.state === "failed" && (
        <div className="error" role="alert" data-testid="connect-error">
          <p>{connection.problem.message}</p>
          <p>Next: {connection.problem.next}</p>
          <div className="buttons">
            <button type="button" onClick={() => void connect(connection.url)}>
              Retry
            </button>
            {own !== undefined && connection.url !== own && (
              <button type="button" onClick={() => void connect(own)}>
                Use this page's server ({own})
              </button>
            )}
          </div>
        </div>
      )}
      {connection.state === "connected" && (
        <p data-testid="connected">
          Connected to <strong>{connection.server}</strong> at <code>{connection.url}</code>
          {connection.tasks ? " (Tasks extension: yes)." : "."}
        </p>
      )}
      {connection.state === "connected" && !connection.tasks && (
        <div className="warning" role="alert" data-testid="no-tasks">
          <p>
            This server does not offer the MCP Tasks extension (server/discover has no capabilities.extensions["
            {TASKS_EXTENSION}"]), so nothing it runs becomes a task this page can follow.
          </p>
          <p>
            Next: its tools still answer below as plain calls; for tasks, connect to a server built with
            durable-mcp-server
            {own !== undefined && (
              <>
                , such as{" "}
                <button type="button" className="link" onClick={() => void connect(own)}>
                  this page's own
                </button>
              </>
            )}
            .
          </p>
        </div>
      )}
    </section>
  );
}
