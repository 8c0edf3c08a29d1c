// A task's raw JSON-RPC log: every request the agent sent for the task and what came back, fetched from the agent
// again whenever it logs another exchange.
import { useEffect, useState } from "react";
import type { LogEntry } from "../../shared/mcp.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { callWatcher } from "../watcher.ts";

export function RpcLog({ view }: { view: TaskView }) {
  const log = useTaskLog(view.record.taskId, view.logSeq);
  return (
    <section className="panel">
      <h2>Raw JSON-RPC log ({log?.length ?? "loading"})</h2>
      <p className="muted small">Every request the page's agent sent for the task and what came back, newest last.</p>
      {log === undefined ? (
        <p className="muted">Loading the log from the agent…</p>
      ) : (
        <ol className="log" data-testid="rpc-log">
          {log.map((entry, index) => (
            <li key={index}>
              <div className="muted small">
                {entry.at} · POST {entry.url}
                {entry.inProcess ? " (in-process)" : ""} · {entry.request.method}
                {entry.httpStatus !== undefined ? ` · HTTP ${entry.httpStatus}` : ""}
              </div>
              <pre>→ {JSON.stringify(entry.request)}</pre>
              {entry.related?.map((message, i) => (
                <pre key={i}>⇠ {JSON.stringify(message)}</pre>
              ))}
              {entry.response && <pre>← {JSON.stringify(entry.response)}</pre>}
              {entry.failure && <pre className="error">✗ {entry.failure}</pre>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** The task's log from the agent, fetched again whenever the agent logs another exchange (`logSeq`). */
function useTaskLog(taskId: string, logSeq: number | undefined): LogEntry[] | undefined {
  const [log, setLog] = useState<LogEntry[] | undefined>();
  useEffect(() => {
    if (logSeq === undefined) return;
    let current = true;
    callWatcher<LogEntry[]>("log", [taskId]).then(
      (entries) => current && setLog(entries),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [taskId, logSeq]);
  return log;
}
