// The operator console: one page over the operator API (docs/operations.md, "The console"). Routes are the URL's
// hash, so the Worker serves one document at its path: #/ the fleet, #/tasks/ID a run, #/stuck, #/limits, #/audit.
import { StrictMode, useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { api, ApiError, token, type OperatorInfo } from "./api.ts";
import { Audit } from "./Audit.tsx";
import { Fleet } from "./Fleet.tsx";
import { Limits } from "./Limits.tsx";
import { RunView } from "./RunView.tsx";
import { Stuck } from "./Stuck.tsx";
import "uplot/dist/uPlot.min.css";
import "./console.css";

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return hash.replace(/^#/, "") || "/";
}

type Access =
  | { kind: "loading" }
  | { kind: "ready"; info: OperatorInfo }
  | { kind: "token"; refused: boolean }
  | { kind: "error"; message: string };

function App() {
  const [access, setAccess] = useState<Access>({ kind: "loading" });
  const route = useHash();
  const connect = useCallback(async () => {
    try {
      setAccess({ kind: "ready", info: await api<OperatorInfo>("") });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        const refused = token.get() !== null;
        token.clear();
        setAccess({ kind: "token", refused });
      } else setAccess({ kind: "error", message: error instanceof Error ? error.message : String(error) });
    }
  }, []);
  useEffect(() => void connect(), [connect]);
  const page = route.startsWith("/tasks/")
    ? "run"
    : route === "/stuck"
      ? "stuck"
      : route === "/limits"
        ? "limits"
        : route === "/audit"
          ? "audit"
          : "fleet";
  useEffect(() => {
    document.title = `${{ fleet: "Fleet", run: "Task", stuck: "Stuck tasks", limits: "Limits", audit: "Audit log" }[page]} · Tasks console`;
  }, [page]);
  return (
    <>
      <header className="top">
        <p className="brand">Tasks console</p>
        {access.kind === "ready" && (
          <nav aria-label="Console">
            <a href="#/" aria-current={page === "fleet" ? "page" : undefined}>
              Fleet
            </a>
            <a href="#/stuck" aria-current={page === "stuck" ? "page" : undefined}>
              Stuck
            </a>
            <a href="#/limits" aria-current={page === "limits" ? "page" : undefined}>
              Limits
            </a>
            <a href="#/audit" aria-current={page === "audit" ? "page" : undefined}>
              Audit log
            </a>
          </nav>
        )}
        {access.kind === "ready" && (
          <p className="who small">
            as <strong>{access.info.operator}</strong>
            {token.get() && (
              <button type="button" className="link" onClick={() => (token.clear(), void connect())}>
                Sign out
              </button>
            )}
          </p>
        )}
      </header>
      <main>
        {access.kind === "loading" && <p role="status">Connecting…</p>}
        {access.kind === "error" && (
          <p role="alert" className="error">
            The operator API did not answer: {access.message}
          </p>
        )}
        {access.kind === "token" && <TokenForm refused={access.refused} done={connect} />}
        {access.kind === "ready" && access.info.catalog === "off" && page !== "run" && page !== "limits" && (
          <p role="alert" className="error">
            The task catalog is off on this deployment: bind a D1 database (durableMcp's catalog option) to list tasks.
          </p>
        )}
        {access.kind === "ready" && page === "fleet" && <Fleet info={access.info} />}
        {access.kind === "ready" && page === "run" && (
          <RunView key={route} taskId={decodeURIComponent(route.slice("/tasks/".length))} info={access.info} />
        )}
        {access.kind === "ready" && page === "stuck" && <Stuck />}
        {access.kind === "ready" && page === "limits" && <Limits />}
        {access.kind === "ready" && page === "audit" && <Audit />}
      </main>
    </>
  );
}

function TokenForm({ refused, done }: { refused: boolean; done: () => void }) {
  const [value, setValue] = useState("");
  return (
    <form
      className="panel token"
      onSubmit={(event) => {
        event.preventDefault();
        token.set(value.trim());
        done();
      }}
    >
      <h1>Operator token</h1>
      <p>This deployment's operator API needs its operator token. It is kept in this tab only (sessionStorage).</p>
      {refused && (
        <p role="alert" className="error">
          That token was refused.
        </p>
      )}
      <label htmlFor="token">Token</label>
      <input
        id="token"
        type="password"
        autoComplete="off"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        required
      />
      <button type="submit">Sign in</button>
    </form>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
