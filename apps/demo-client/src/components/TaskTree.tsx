// The task's tree on its page: the parent whose `step.invoke` started it (a link, when it is a child task), this
// task, and its children, each a link with its tool, the invoke step's label and its status as the parent's step
// timeline reports it (`working` until the child told its parent it ended). Read by shared/task-tree.ts; the agent
// follows the children, so each link opens a page of its own.
import { childrenOf, parentOf, type ChildLink, type ParentLink } from "../../shared/task-tree.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { taskPath, type Go } from "../routes.ts";
import { useWatcherState } from "../watcher.ts";
import { Link } from "./Link.tsx";

export function TaskTree({ view, go }: { view: TaskView; go: Go }) {
  const { tasks } = useWatcherState().state;
  const parent: ParentLink | undefined = parentOf(view.snapshot) ?? view.record.parent;
  const children = childrenOf(view.snapshot);
  if (!parent && children.length === 0) return null;
  const parentTool = parent && tasks.find((t) => t.record.taskId === parent.taskId)?.record.tool;
  const self = (
    <li aria-current="page" data-testid="tree-self">
      <span className="tree-node">
        <strong>{view.record.tool}</strong> <span className="muted small">(this task)</span>
      </span>
      {children.length > 0 && (
        <ul className="tree" aria-label="Child tasks">
          {children.map((child) => (
            <ChildItem
              key={child.taskId}
              child={child}
              go={go}
              followed={tasks.some((t) => t.record.taskId === child.taskId)}
            />
          ))}
        </ul>
      )}
      {children.length === 0 && <p className="muted small">No child tasks.</p>}
    </li>
  );
  return (
    <section className="panel" aria-labelledby="tree-heading" data-testid="task-tree">
      <h2 id="tree-heading">Task tree</h2>
      <ul className="tree tree-root">
        {parent ? (
          <li data-testid="tree-parent">
            <span className="tree-node">
              <Link to={taskPath(parent.taskId)} go={go}>
                {parentTool ?? "parent task"}
              </Link>{" "}
              <span className="muted small">
                parent{parent.step ? `, started this task in its step “${parent.step}”` : ""}
              </span>
            </span>
            <ul className="tree">{self}</ul>
          </li>
        ) : (
          self
        )}
      </ul>
    </section>
  );
}

/** A child: a link to its page when the agent follows it (past CHILDREN_FOLLOWED it does not), else its id. */
function ChildItem({ child, go, followed }: { child: ChildLink; go: Go; followed: boolean }) {
  return (
    <li data-testid="tree-child" data-task-id={child.taskId} data-status={child.status}>
      <span className="tree-node">
        {followed ? (
          <Link to={taskPath(child.taskId)} go={go}>
            {child.tool || "child task"}
          </Link>
        ) : (
          <span>
            {child.tool || "child task"} <code className="id">{child.taskId}</code> (not followed by this page)
          </span>
        )}{" "}
        <span className="muted small">step “{child.step}”</span>{" "}
        <span className={`status-badge badge-${child.status}`} data-testid="tree-child-status">
          {child.status}
        </span>
      </span>
    </li>
  );
}
