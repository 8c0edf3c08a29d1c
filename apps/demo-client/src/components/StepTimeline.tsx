// The run view's waterfall: every step on one time axis, as the server journaled it (`_meta` of tasks/get). A `do`
// step is a bar per attempt, as each attempt was timed (never a duration divided up), with the back-off between
// them; sleeps and waits (questions, events) are bars of their own kind; a kind this page does not know is drawn
// generically. Live while the task runs; a click on a step opens its details (attempts, errors, result size).
import { useState } from "react";
import { FINAL_STATUSES, timelineOf, type TaskSnapshot, type TimelineStep } from "../../shared/mcp.ts";
import { formatDuration } from "../../shared/outcome.ts";
import type { TaskView } from "../../shared/watcher-state.ts";
import { useNow } from "./TaskCard.tsx";
import { StepDetails } from "./StepDetails.tsx";

const KNOWN_KINDS = new Set(["do", "sleep", "input", "event", "webhook", "patch"]);
const KIND_LABEL: Record<string, string> = {
  do: "step",
  sleep: "sleep",
  input: "question",
  event: "event",
  webhook: "webhook",
  patch: "patch",
};

/** A step's label: its name, with `#n` from its second use on (as the server names it). */
export const stepKey = (step: TimelineStep) =>
  (step.occurrence ?? 1) > 1 ? `${step.name}#${step.occurrence}` : step.name;

/** Start and end (ms since epoch) of a step; a live one ends `now`. */
function spanOf(step: TimelineStep, now: number): [number, number] | undefined {
  if (!step.startedAt) return undefined;
  const start = Date.parse(step.startedAt);
  const live = step.state === "running" || step.state === "waiting";
  return [start, live ? Math.max(now, Date.parse(step.updatedAt)) : Date.parse(step.updatedAt)];
}

interface Axis {
  start: number;
  end: number;
  at(ms: number): number;
}

function axisOf(snapshot: TaskSnapshot, steps: TimelineStep[], now: number): Axis {
  const starts = steps.flatMap((s) => (s.startedAt ? [Date.parse(s.startedAt)] : []));
  const created = snapshot.createdAt ? Date.parse(snapshot.createdAt) : Math.min(...starts, now);
  const final = FINAL_STATUSES.has(snapshot.status);
  const ends = steps.flatMap((s) => spanOf(s, now)?.[1] ?? []);
  const last = final && snapshot.lastUpdatedAt ? Date.parse(snapshot.lastUpdatedAt) : now;
  const start = Math.min(created, ...starts);
  const end = Math.max(start + 1, last, ...ends);
  return { start, end, at: (ms) => ((ms - start) / (end - start)) * 100 };
}

const pct = (value: number) => `${Math.max(0, Math.min(100, value)).toFixed(3)}%`;

export function StepTimeline({ view }: { view: TaskView }) {
  const snapshot = view.snapshot;
  const timeline = snapshot ? timelineOf(snapshot) : undefined;
  const live = snapshot !== undefined && !FINAL_STATUSES.has(snapshot.status);
  const now = useNow(live, 250);
  const [chosen, setChosen] = useState<string | undefined>();
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
          <span className="swatch bar-input" /> waiting for an answer or event
        </p>
      </div>
      {selected && <StepDetails step={selected} now={now} close={() => setChosen(undefined)} />}
    </section>
  );
}

function StepRow({
  step,
  axis,
  now,
  selected,
  choose,
}: {
  step: TimelineStep;
  axis: Axis;
  now: number;
  selected: boolean;
  choose: () => void;
}) {
  const span = spanOf(step, now);
  const kind = KNOWN_KINDS.has(step.kind) ? step.kind : "other";
  const history = step.kind === "do" ? (step.attemptHistory ?? []) : [];
  const bars: Array<{ key: string; from: number; to: number; className: string; title: string; n?: number }> = [];
  if (history.length > 0) {
    history.forEach((attempt, i) => {
      const from = Date.parse(attempt.startedAt);
      const to = attempt.endedAt ? Date.parse(attempt.endedAt) : i === history.length - 1 ? now : from;
      const next = history[i + 1];
      const failed = attempt.error !== undefined || (attempt.endedAt === null && next !== undefined);
      bars.push({
        key: `a${attempt.n}`,
        from,
        to,
        n: attempt.n,
        className: failed ? "bar-failed" : "bar-do",
        title: `attempt ${attempt.n}: ${formatDuration(to - from)}${attempt.error ? ` · ${attempt.error.message}` : ""}`,
      });
      const gapEnd = next ? Date.parse(next.startedAt) : step.state === "waiting" ? now : undefined;
      if (attempt.endedAt && gapEnd !== undefined && gapEnd > to) {
        bars.push({
          key: `b${attempt.n}`,
          from: to,
          to: gapEnd,
          className: "bar-backoff",
          title: `back-off ${formatDuration(gapEnd - to)}`,
        });
      }
    });
  } else if (span) {
    bars.push({
      key: "span",
      from: span[0],
      to: span[1],
      className: step.state === "failed" ? "bar-failed" : `bar-${kind}`,
      title: `${KIND_LABEL[step.kind] ?? step.kind}: ${formatDuration(span[1] - span[0])}`,
    });
  }
  const duration = span ? span[1] - span[0] : undefined;
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
    </li>
  );
}
