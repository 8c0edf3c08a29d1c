// What connecting found, in the "Server" panel (components/ConnectPanel.tsx): connecting, connected (and whether
// the agent is live), or the problem with its next step and a retry; and, for a server without the MCP Tasks
// extension, that nothing it runs becomes a task, with the page's own server offered instead.
import { TASKS_EXTENSION } from "../../shared/mcp.ts";
import type { Connection } from "../../shared/watcher-state.ts";

export interface ConnectionStatusProps {
  connection: Connection;
  online: boolean;
  /** The page's own server, when the agent may call it. */
  own: string | undefined;
  connect: (url: string) => Promise<void>;
}

/** The connection's line, then the page's own problem reaching the agent (before a failed connection's box). */
export function ConnectionStatus({ problem, ...props }: ConnectionStatusProps & { problem: string | undefined }) {
  const problemLine = problem && (
    <p className="error" role="alert">
      {problem}
    </p>
  );
  if (props.connection.state === "failed") {
    return (
      <>
        {problemLine}
        <ConnectionLine {...props} />
      </>
    );
  }
  return (
    <>
      <ConnectionLine {...props} />
      {problemLine}
    </>
  );
}

function ConnectionLine({ connection, online, own, connect }: ConnectionStatusProps) {
  switch (connection.state) {
    case "idle":
      return (
        <p className="muted" data-testid="connecting">
          {own !== undefined ? "Connecting to this page's own server…" : "Pick a server to connect to."}
        </p>
      );
    case "connecting":
      return (
        <p className="muted" role="status" data-testid="connecting">
          Connecting to <code>{connection.url}</code>…
        </p>
      );
    case "connected":
      return (
        <p data-testid="connected" className={online ? "connected" : "connected stale"}>
          <span className={online ? "dot dot-ok" : "dot dot-stale"} aria-hidden="true" />
          {online ? "Connected to " : "Last connected to "}
          <strong>{connection.server}</strong> at <code>{connection.url}</code>
          {connection.tasks ? " (Tasks extension: yes)." : "."}
          {!online && " The page's agent is reconnecting; what you see may be out of date."}
        </p>
      );
    case "failed":
      return (
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
      );
  }
}

export function NoTasksWarning({ own, connect }: Pick<ConnectionStatusProps, "own" | "connect">) {
  return (
    <div className="warning" role="alert" data-testid="no-tasks">
      <p>
        This server does not offer the MCP Tasks extension (server/discover has no capabilities.extensions["
        {TASKS_EXTENSION}"]), so nothing it runs becomes a task this page can follow.
      </p>
      <p>
        Next: its tools still answer below as plain calls; for tasks, connect to a server built with durable-mcp-server
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
  );
}
