// The run view's waterfall: every step on one time axis, as the server journaled it (`_meta` of tasks/get). A `do`
// step is a bar per attempt, as each attempt was timed (never a duration divided up), with the back-off between
// them; sleeps, waits (questions, events) and child tasks (`invoke`, with a link to the child's page) are bars of
// their own kind; a kind this page does not know is drawn
// generically (the geometry: src/waterfall.ts). Live while the task runs; a click on a step opens its details
// (attempts, errors, result size).
import { useState } from "react";
import { FINAL_STATUSES, timelineOf, type TimelineStep } from "../../shared/mcp.ts";
import { formatDuration } from "../../shared/outcome.ts";
import { childOfStep } from "../../shared/task-tree.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { taskPath, type Go } from "../routes.ts";
import { useNow } from "../use-now.ts";
import { useWatcherState } from "../watcher.ts";
import { axisOf, barsOf, KIND_LABEL, KNOWN_KINDS, pct, spanOf, stepKey, type Axis } from "../waterfall.ts";
import { Link } from "./Link.tsx";
import { StepDetails } from "./StepDetails.tsx";

export function StepTimeline({ view, go }: { view: TaskView; go: Go }) {
  const snapshot = view.snapshot;
  const timeline = snapshot ? timelineOf(snapshot) : undefined;
  const live = snapshot !== undefined && !FINAL_STATUSES.has(snapshot.status);
  const now = useNow(live, 250);
  const [chosen, setChosen] = useState<string | undefined>();
  const { tasks } = useWatcherState().state;
  const followed = (taskId: string) => tasks.some((t) => t.record.taskId === taskId);
  if (!snapshot || !timeline) {
    return (
      <section className="panel" aria-labelledby="waterfall-heading">
        <h2 id="waterfall-heading">Steps</h2>
        <p className="muted">The server sent no step timeline for this task (only durable-mcp-server does).</p>
      </section>
    );
  }
  const axis = axisOf(snapshot, timeline.steps, now);
  const total = axis.end - axis.start;
  const selected = timeline.steps.find((step) => stepKey(step) === chosen);
  return (
    <section className="panel" aria-labelledby="waterfall-heading">
      <h2 id="waterfall-heading">Steps</h2>
      <p className="muted small">
        {timeline.steps.length === 0 ? "No step has run yet." : `${timeline.total} steps`} on one time axis from the
        task's creation ({formatDuration(total)}){live ? ", live" : ""}. Choose a step for its attempts and details.
        {timeline.total > timeline.steps.length && ` The last ${timeline.steps.length} of ${timeline.total} are shown.`}
      </p>
      <div className="waterfall" data-testid="waterfall">
        <div className="wf-row wf-axis" aria-hidden="true">
          <span className="wf-name" />
          <span className="wf-track">
            {[0, 25, 50, 75, 100].map((tick) => (
              <span key={tick} className="wf-tick" style={{ left: `${tick}%` }}>
                {formatDuration((total * tick) / 100)}
              </span>
            ))}
          </span>
          <span className="wf-dur" />
        </div>
        <ol className="wf-steps">
          {timeline.steps.map((step) => (
            <StepRow
              key={stepKey(step)}
              step={step}
              go={go}
              followed={followed}
              axis={axis}
              now={now}
              selected={stepKey(step) === chosen}
              choose={() => setChosen(stepKey(step) === chosen ? undefined : stepKey(step))}
            />
          ))}
        </ol>
        <p className="wf-legend small muted" aria-hidden="true">
          <span className="swatch bar-do" /> attempt <span className="swatch bar-failed" /> failed attempt{" "}
          <span className="swatch bar-backoff" /> back-off <span className="swatch bar-sleep" /> sleep{" "}
          <span className="swatch bar-input" /> waiting for an answer or event <span className="swatch bar-invoke" />{" "}
          waiting for a child task
        </p>
      </div>
      {selected && <StepDetails step={selected} now={now} close={() => setChosen(undefined)} />}
    </section>
  );
}

function StepRow({
  step,
  go,
  followed,
  axis,
  now,
  selected,
  choose,
}: {
  step: TimelineStep;
  go: Go;
  /** Whether the agent follows a task (a child it does not follow has no page to link to). */
  followed: (taskId: string) => boolean;
  axis: Axis;
  now: number;
  selected: boolean;
  choose: () => void;
}) {
  const span = spanOf(step, now);
  const kind = KNOWN_KINDS.has(step.kind) ? step.kind : "other";
  const bars = barsOf(step, now);
  const duration = span ? span[1] - span[0] : undefined;
  const child = childOfStep(step);
  return (
    <li
      className={`wf-row${selected ? " selected" : ""}`}
      data-testid="step-row"
      data-step={stepKey(step)}
      data-kind={step.kind}
      data-state={step.state}
      data-attempts={step.attempts}
    >
      <button type="button" className="wf-name" onClick={choose} aria-expanded={selected}>
        <span className={`kind-tag kind-${kind}`}>{KIND_LABEL[step.kind] ?? step.kind}</span>
        <span className="wf-label">{stepKey(step)}</span>
        {step.kind === "do" && step.attempts > 1 && <span className="wf-attempts">×{step.attempts}</span>}
      </button>
      <span className="wf-track" data-testid="step-bar">
        {bars.map((bar) => (
          <span
            key={bar.key}
            className={`wf-bar ${bar.className}${step.state === "running" || step.state === "waiting" ? " live" : ""}`}
            style={{ left: pct(axis.at(bar.from)), width: pct(axis.at(bar.to) - axis.at(bar.from)) }}
            title={bar.title}
            data-testid={
              bar.n !== undefined ? "attempt-bar" : bar.className === "bar-backoff" ? "backoff-bar" : "span-bar"
            }
            data-n={bar.n}
          />
        ))}
      </span>
      <span className="wf-dur">{duration !== undefined ? formatDuration(duration) : "—"}</span>
      {child && (
        <span className="wf-child muted" data-testid="step-child">
          child task:{" "}
          {followed(child.taskId) ? (
            <Link to={taskPath(child.taskId)} go={go}>
              {child.tool || child.taskId}
            </Link>
          ) : (
            `${child.tool} ${child.taskId}`
          )}{" "}
          ({child.status})
        </span>
      )}
    </li>
  );
}
