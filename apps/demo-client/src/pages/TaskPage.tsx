// One task's run view: its state, duration and actions (the card), its tree (parent and child tasks), the waterfall
// of its steps, and its raw JSON-RPC log (collapsed).
import { Link } from "../components/Link.tsx";
import { RpcLog } from "../components/RpcLog.tsx";
import { StepTimeline } from "../components/StepTimeline.tsx";
import { TaskCard } from "../components/TaskCard.tsx";
import { TaskTree } from "../components/TaskTree.tsx";
import { HOME_PATH, type Go } from "../routes.ts";
import { useWatcherState } from "../watcher.ts";

export function TaskPage({ taskId, go }: { taskId: string; go: Go }) {
  const { state } = useWatcherState();
  const view = state.tasks.find((t) => t.record.taskId === taskId);
  if (!state.synced) return <p className="muted">Loading this session's tasks from its agent…</p>;
  if (!view) {
    return (
      <section className="panel">
        <p className="error" data-testid="task-unknown">
          This page's agent has not started a task with id <code>{taskId}</code> (or it was removed from the list).
        </p>
        <p>
          Next:{" "}
          <Link to={HOME_PATH} go={go}>
            go back to the task list
          </Link>
          .
        </p>
      </section>
    );
  }
  return (
    <>
      <p>
        <Link to={HOME_PATH} go={go}>
          ← all tasks
        </Link>
      </p>
      <section className="panel">
        <h2>Run of {view.record.tool}</h2>
        <TaskCard view={view} go={go} full />
      </section>
      <TaskTree view={view} go={go} />
      <StepTimeline view={view} go={go} />
      <RpcLog view={view} />
    </>
  );
}
