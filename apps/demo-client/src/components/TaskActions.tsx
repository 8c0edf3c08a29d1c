// A task card's actions, each with a line of help: cancel a live task (disabled while the page's agent reconnects),
// remove a final one from the list; and what went wrong when the agent did not take the cancel.
import { useState } from "react";
import { errorText } from "../../shared/mcp.ts";
import type { TaskRecord } from "../../shared/watcher-state.ts";
import { useWatcherState } from "../watcher.ts";

export function TaskActions({
  record,
  final,
  gone,
  stale,
}: {
  record: TaskRecord;
  final: boolean;
  gone: boolean;
  stale: boolean;
}) {
  const { call } = useWatcherState();
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const cancel = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await call("cancel", [record.taskId]);
    } catch (error) {
      setProblem(`Cancelling failed: ${errorText(error)}. Try again.`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {!final && !gone && (
        <div className="action">
          <button
            type="button"
            className="danger"
            onClick={() => void cancel()}
            disabled={busy || record.cancelRequested || stale}
            data-testid="cancel"
          >
            {record.cancelRequested ? "Cancellation requested" : "Cancel task"}
          </button>
          <span className="muted small">
            {stale
              ? "Available again once the agent is back."
              : "Stops the task at its next step; steps already done stay done."}
          </span>
        </div>
      )}
      {final && (
        <div className="action">
          <button type="button" className="link" onClick={() => void call("remove", [record.taskId])}>
            Remove from this list
          </button>
          <span className="muted small">Forgets it on this page; the server keeps it until its TTL.</span>
        </div>
      )}
      {problem && <p className="error">{problem}</p>}
    </>
  );
}
