// "Server": the page connects by itself to its own server (the Worker's /mcp, open on a loopback address); when a
// server answers 401 it asks for a bearer token; "another server" offers only those the agent may call
// (WATCHER_SERVERS). What connecting found is shown: the server and whether it offers the Tasks extension, or the
// problem and a next step.
import { useEffect, useRef, useState } from "react";
import { errorText, TASKS_EXTENSION } from "../../shared/mcp.ts";
import type { Connection } from "../../shared/watcher-state.ts";
import { useWatcherState } from "../watcher.ts";

const defaultServer = () => `${location.origin}/mcp`;

export function ConnectPanel() {
  const { state, session, online, call } = useWatcherState();
  const { connection } = state;
  const { servers } = session;
  // The choice follows the agent's server URL until another is picked. Only the servers WATCHER_SERVERS lists are
  // offered: the agent refuses any other.
  const [edited, setEdited] = useState<string | undefined>();
  const known = state.serverUrl !== undefined && servers.includes(state.serverUrl) ? state.serverUrl : undefined;
  const own = servers.includes(defaultServer()) ? defaultServer() : undefined;
  const url = edited ?? known ?? own ?? servers[0] ?? "";
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState<string | undefined>();
  const tokenInput = useRef<HTMLInputElement>(null);
  const needsToken = connection.state === "failed" && connection.problem.needsToken === true;

  const connect = async (target: string) => {
    setEdited(target);
    setProblem(undefined);
    const sent = token.trim();
    try {
      // An empty token field keeps the token the agent holds for this URL.
      await call<Connection>("connectTo", sent ? [target, sent] : [target]);
      setEdited(undefined);
      // The agent keeps the token it was given; a token typed while this connect was on its way stays in the field.
      setToken((current) => (current.trim() === sent ? "" : current));
    } catch (error) {
      setProblem(`The page's agent did not answer (${errorText(error)}). Try again once it is connected.`);
    }
  };

  // Connect by itself, once per page load, to the page's own server when the agent is connected to nothing yet
  // (a fresh session): a person should not have to press Connect for the server the page came from.
  const autoConnected = useRef(false);
  const { synced } = state;
  useEffect(() => {
    if (autoConnected.current || !synced || !online || own === undefined || connection.state !== "idle") return;
    autoConnected.current = true;
    void connect(own);
  }, [synced, online, own, connection.state]);

  // A 401 asks for the token: the field takes focus.
  useEffect(() => {
    if (needsToken) tokenInput.current?.focus();
  }, [needsToken]);

  const showToken = needsToken || state.hasToken || (own !== undefined && url !== own);

  return (
    <section className="panel" aria-labelledby="server-heading">
      <h2 id="server-heading">Server</h2>
      {connection.state === "idle" && (
        <p className="muted" data-testid="connecting">
          {own !== undefined ? "Connecting to this page's own server…" : "Pick a server to connect to."}
        </p>
      )}
      {connection.state === "connecting" && (
        <p className="muted" role="status" data-testid="connecting">
          Connecting to <code>{connection.url}</code>…
        </p>
      )}
      {connection.state === "connected" && (
        <p data-testid="connected" className={online ? "connected" : "connected stale"}>
          <span className={online ? "dot dot-ok" : "dot dot-stale"} aria-hidden="true" />
          {online ? "Connected to " : "Last connected to "}
          <strong>{connection.server}</strong> at <code>{connection.url}</code>
          {connection.tasks ? " (Tasks extension: yes)." : "."}
          {!online && " The page's agent is reconnecting; what you see may be out of date."}
        </p>
      )}
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
      <form
        className="connect"
        onSubmit={(event) => {
          event.preventDefault();
          void connect(url.trim());
        }}
      >
        <div className="field">
          <label htmlFor="server-url">{servers.length > 1 ? "Server (or another allowed one)" : "Server"}</label>
          <select id="server-url" value={url} onChange={(e) => setEdited(e.target.value)}>
            {servers.map((server) => (
              <option key={server} value={server}>
                {server === own ? `${server} (this page's own)` : server}
              </option>
            ))}
          </select>
        </div>
        {showToken && (
          <div className="field">
            <label htmlFor="server-token">Bearer token{needsToken ? " (this server requires one)" : ""}</label>
            <input
              id="server-token"
              ref={tokenInput}
              type="password"
              autoComplete="off"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              placeholder={state.hasToken ? "kept by the agent for this URL" : "the server's token (AUTH_TOKENS)"}
            />
          </div>
        )}
        <button type="submit" className="primary" disabled={connection.state === "connecting" || !url}>
          {connection.state === "connecting" ? "Connecting…" : "Connect"}
        </button>
      </form>
      <p className="muted small">
        Only the servers this deployment allows are offered (WATCHER_SERVERS); the page's agent refuses any other.
      </p>
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
