// One task as the agent last heard of it: tool, id, arguments, a status that tells the truth (an `isError` result
// is a failure, with whether the tool or the protocol failed), duration, retries, status message, progress, its
// questions, its outcome, and its actions with a line of help each (components/TaskActions.tsx); stale while the
// page's agent reconnects. `full` on the task's own page (no link to it).
import { FINAL_STATUSES, progressOf } from "../../shared/mcp.ts";
import { durationOf, formatDuration, outcomeOf, retriesOfSnapshot, type Outcome } from "../../shared/outcome.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { taskPath, type Go } from "../routes.ts";
import { useNow } from "../use-now.ts";
import { useWatcherState } from "../watcher.ts";
import { Link } from "./Link.tsx";
import { InputRequests } from "./Questions.tsx";
import { TaskActions } from "./TaskActions.tsx";
import { TaskOutcome } from "./TaskOutcome.tsx";

function statusLabel(view: TaskView, outcome: Outcome): string {
  const status = view.snapshot?.status ?? "unknown";
  if (view.record.cancelRequested && !FINAL_STATUSES.has(status)) return "cancellation requested";
  return outcome.state.replace("_", " ");
}

export function TaskCard({ view, go, full }: { view: TaskView; go: Go; full?: boolean }) {
  const { record, snapshot } = view;
  const { online, call } = useWatcherState();
  const status = snapshot?.status;
  const final = status !== undefined && FINAL_STATUSES.has(status);
  const outcome = outcomeOf(snapshot);
  const progress = snapshot && !final ? progressOf(snapshot) : undefined;
  const stale = !online && !final;

  return (
    <article
      className={`task state-${outcome.state}${stale ? " stale" : ""}`}
      data-testid="task-card"
      data-task-id={record.taskId}
      data-state={outcome.state}
      aria-label={`${record.tool} task, ${statusLabel(view, outcome)}`}
    >
      <div className="task-head">
        <strong className="task-tool">{record.tool}</strong>
        <span className={`status-badge badge-${outcome.state}`} data-testid="task-status">
          {statusLabel(view, outcome)}
        </span>
        {outcome.detail && (
          <span className="muted small" data-testid="task-failure">
            {outcome.detail}
          </span>
        )}
        {!full && (
          <Link to={taskPath(record.taskId)} go={go} className="task-link">
            Run view · details and JSON-RPC log →
          </Link>
        )}
      </div>
      <TaskFacts view={view} final={final} live={!final && online} />
      {stale && (
        <p className="warning small" data-testid="task-stale">
          Not live: the page's agent is reconnecting. This is the last state it reported.
        </p>
      )}
      {snapshot?.statusMessage && !final && <p data-testid="task-message">{snapshot.statusMessage}</p>}
      {progress !== undefined && (
        <progress data-testid="task-progress" max={1} value={progress} aria-label="progress">
          {Math.round(progress * 100)}%
        </progress>
      )}
      {view.gone && (
        <div className="error" data-testid="task-gone">
          <p>{view.gone}</p>
          <button type="button" onClick={() => void call("remove", [record.taskId])}>
            Remove from this list
          </button>
        </div>
      )}
      {view.pollError && !view.gone && (
        <p className="warning" data-testid="task-poll-error">
          Could not check on the task: {view.pollError} Retrying in a few seconds.
        </p>
      )}
      {status === "input_required" && snapshot?.inputRequests && !stale && (
        <InputRequests taskId={record.taskId} requests={snapshot.inputRequests} />
      )}
      {final && snapshot && <TaskOutcome snapshot={snapshot} record={record} />}
      <TaskActions record={record} final={final} gone={!!view.gone} stale={stale} />
    </article>
  );
}

/** How long the task ran (counting while `live`), which steps were retried, when it started, its arguments. */
function TaskFacts({ view, final, live }: { view: TaskView; final: boolean; live: boolean }) {
  const { record, snapshot } = view;
  const now = useNow(live);
  const duration = durationOf(snapshot, now);
  const retries = retriesOfSnapshot(snapshot);
  // A child's record is made when the agent found it; the server's creation time is the truer start.
  const startedAt = record.parent && snapshot?.createdAt ? snapshot.createdAt : record.startedAt;
  return (
    <>
      <div className="task-facts small">
        {duration !== undefined && (
          <span data-testid="task-duration">
            {final ? "took" : "running for"} {formatDuration(duration)}
          </span>
        )}
        {retries.length > 0 && <span data-testid="task-retries">{retries.join(", ")}</span>}
        <span className="muted">
          started {new Date(startedAt).toLocaleTimeString()} · <code className="id">{record.taskId}</code>
        </span>
      </div>
      <div className="muted small args">
        {record.parent ? "a child task: its input is its parent's" : <code>{JSON.stringify(record.arguments)}</code>}
      </div>
    </>
  );
}
