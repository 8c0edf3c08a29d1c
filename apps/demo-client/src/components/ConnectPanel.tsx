// "Server": the page connects by itself to its own server (the Worker's /mcp, open on a loopback address); when a
// server answers 401 it asks for a bearer token; "another server" offers only those the agent may call
// (WATCHER_SERVERS). What connecting found is shown: the server and whether it offers the Tasks extension, or the
// problem and a next step (components/ConnectionStatus.tsx); the form is components/ConnectForm.tsx.
import { useEffect, useRef, useState } from "react";
import { errorText } from "../../shared/mcp.ts";
import type { Connection } from "../../shared/watcher-state.ts";
import { useWatcherState } from "../watcher.ts";
import { ConnectForm } from "./ConnectForm.tsx";
import { ConnectionStatus, NoTasksWarning } from "./ConnectionStatus.tsx";

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

  return (
    <section className="panel" aria-labelledby="server-heading">
      <h2 id="server-heading">Server</h2>
      <ConnectionStatus connection={connection} online={online} own={own} connect={connect} problem={problem} />
      <ConnectForm
        servers={servers}
        own={own}
        url={url}
        choose={setEdited}
        showToken={needsToken || state.hasToken || (own !== undefined && url !== own)}
        needsToken={needsToken}
        hasToken={state.hasToken}
        token={token}
        setToken={setToken}
        tokenInput={tokenInput}
        connecting={connection.state === "connecting"}
        connect={connect}
      />
      <p className="muted small">
        Only the servers this deployment allows are offered (WATCHER_SERVERS); the page's agent refuses any other.
      </p>
      {connection.state === "connected" && !connection.tasks && <NoTasksWarning own={own} connect={connect} />}
    </section>
  );
}
