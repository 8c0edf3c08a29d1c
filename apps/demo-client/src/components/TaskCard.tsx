// One task as the agent last heard of it: tool, id, arguments, status and message, progress, its questions, its
// outcome, and cancel/remove; \`full\` on the task's own page (no link to it).
import { useState } from "react";
import { errorText, FINAL_STATUSES, progressOf } from "../../shared/mcp.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { taskPath, type Go } from "../routes.ts";
import { callWatcher } from "../watcher.ts";
import { Link } from "./Link.tsx";
import { InputRequests } from "./Questions.tsx";
import { TaskOutcome } from "./TaskOutcome.tsx";

function statusLabel(view: TaskView): string {
  const status = view.snapshot?.status ?? "unknown";
  if (view.record.cancelRequested && !FINAL_STATUSES.has(status)) return "cancellation requested";
  return status.replace("_", " ");
}

export function TaskCard({ view, go, full }: { view: TaskView; go: Go; full?: boolean }) {
  const { record, snapshot } = view;
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const status = snapshot?.status;
  const final = status !== undefined && FINAL_STATUSES.has(status);
  const progress = snapshot ? progressOf(snapshot) : undefined;

  const cancel = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await callWatcher("cancel", [record.taskId]);
    } catch (error) {
      setProblem(`Cancelling failed: ${errorText(error)}. Try again.`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <article className={`task status-${status ?? "unknown"}`} data-testid="task-card" data-task-id={record.taskId}>
      <div className="task-head">
        <strong>{record.tool}</strong>
        <span className="status" data-testid="task-status">
          {statusLabel(view)}
        </span>
        {!full && (
          <Link to={taskPath(record.taskId)} go={go}>
            details and JSON-RPC log
          </Link>
        )}
      </div>
      <div className="muted small">
        <code>{record.taskId}</code> · started {new Date(record.startedAt).toLocaleTimeString()} ·{" "}
        <code>{JSON.stringify(record.arguments)}</code>
      </div>
      {snapshot?.statusMessage && <p data-testid="task-message">{snapshot.statusMessage}</p>}
      {progress !== undefined && (
        <progress data-testid="task-progress" max={1} value={progress}>
          {Math.round(progress * 100)}%
        </progress>
      )}
      {view.gone && (
        <div className="error" data-testid="task-gone">
          <p>{view.gone}</p>
          <button type="button" onClick={() => void callWatcher("remove", [record.taskId])}>
            Remove from this list
          </button>
        </div>
      )}
      {view.pollError && !view.gone && (
        <p className="warning" data-testid="task-poll-error">
          Could not check on the task: {view.pollError} Retrying in a few seconds.
        </p>
      )}
      {status === "input_required" && snapshot?.inputRequests && (
        <InputRequests taskId={record.taskId} requests={snapshot.inputRequests} />
      )}
      {final && snapshot && <TaskOutcome snapshot={snapshot} record={record} />}
      {!final && !view.gone && (
        <div className="buttons">
          <button
            type="button"
            onClick={() => void cancel()}
            disabled={busy || record.cancelRequested}
            data-testid="cancel"
          >
            {record.cancelRequested ? "Cancellation requested" : "Cancel task"}
          </button>
        </div>
      )}
      {final && (
        <div className="buttons">
          <button type="button" className="link" onClick={() => void callWatcher("remove", [record.taskId])}>
            Remove from this list
          </button>
        </div>
      )}
      {problem && <p className="error">{problem}</p>}
    </article>
  );
}
