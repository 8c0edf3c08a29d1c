// A task's raw JSON-RPC log: every request the agent sent for the task and what came back, fetched from the agent
// again whenever it logs another exchange.
import { useEffect, useState } from "react";
import type { LogEntry } from "../../shared/mcp.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { useWatcherState } from "../watcher.ts";

export function RpcLog({ view }: { view: TaskView }) {
  const log = useTaskLog(view.record.taskId, view.logSeq);
  // Collapsed by default: the raw exchanges are there one click away, never the default view.
  return (
    <section className="panel">
      <details className="log-section" data-testid="rpc-log-section">
        <summary>
          <h2>Raw JSON-RPC log ({log?.length ?? "loading"})</h2>
        </summary>
        <p className="muted small">
          Every request the page's agent sent for the task and what came back, newest last; open one to read it.
        </p>
        {log === undefined ? (
          <p className="muted">Loading the log from the agent…</p>
        ) : (
          <ol className="log" data-testid="rpc-log">
            {log.map((entry, index) => (
              <LogItem key={index} entry={entry} />
            ))}
          </ol>
        )}
      </details>
    </section>
  );
}

function LogItem({ entry }: { entry: LogEntry }) {
  const [copied, setCopied] = useState<string | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(JSON.stringify(entry, null, 2));
      setCopied("Copied");
    } catch (error) {
      setCopied(`Not copied (${error instanceof Error ? error.message : String(error)}); select the text instead.`);
    }
  };
  const outcome = entry.failure ? "failed" : entry.response?.error ? "error" : "ok";
  return (
    <li className={`log-entry log-${outcome}`}>
      <details>
        <summary className="small">
          {entry.at} · POST {entry.url}
          {entry.inProcess ? " (in-process)" : ""} · <span className="log-method">{entry.request.method}</span>
          {entry.httpStatus !== undefined ? ` · HTTP ${entry.httpStatus}` : ""}
          {outcome !== "ok" && <span className="error-text"> · {outcome}</span>}
        </summary>
        <div className="buttons">
          <button type="button" className="small-button" onClick={() => void copy()}>
            Copy as JSON
          </button>
          {copied && (
            <span className="muted small" role="status">
              {copied}
            </span>
          )}
        </div>
        <pre>→ {JSON.stringify(entry.request, null, 2)}</pre>
        {entry.related?.map((message, i) => (
          <pre key={i}>⇠ {JSON.stringify(message, null, 2)}</pre>
        ))}
        {entry.response && <pre>← {JSON.stringify(entry.response, null, 2)}</pre>}
        {entry.failure && <pre className="error">✗ {entry.failure}</pre>}
      </details>
    </li>
  );
}

/** The task's log from the agent, fetched again whenever the agent logs another exchange (`logSeq`). */
function useTaskLog(taskId: string, logSeq: number | undefined): LogEntry[] | undefined {
  const { call } = useWatcherState();
  const [log, setLog] = useState<LogEntry[] | undefined>();
  useEffect(() => {
    if (logSeq === undefined) return;
    let current = true;
    call<LogEntry[]>("log", [taskId]).then(
      (entries) => current && setLog(entries),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [call, taskId, logSeq]);
  return log;
}
