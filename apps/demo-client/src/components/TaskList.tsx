// The tasks this session's agent started, newest first, each as a card. The child tasks it follows under them are
// on their parents' pages (the task tree), not here.
import { rootsOf } from "../../shared/task-tree.ts";
import type { Go } from "../routes.ts";
import { useWatcherState } from "../watcher.ts";
import { TaskCard } from "./TaskCard.tsx";

export function TaskList({ go, heading }: { go: Go; heading: string }) {
  const tasks = rootsOf(useWatcherState().state.tasks);
  return (
    <section className="panel">
      <h2>{heading}</h2>
      {tasks.length === 0 && (
        <p className="muted">
          None yet: start one above. This page's agent keeps them, and follows them while no page is open.
        </p>
      )}
      <div className="tasks">
        {tasks.map((view) => (
          <TaskCard key={view.record.taskId} view={view} go={go} />
        ))}
      </div>
    </section>
  );
}
