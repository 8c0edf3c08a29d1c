// One task's run: its state and duration at the top with the actions the server answers, then the step waterfall
// (geometry: waterfall.ts) on one time axis, waits apart from work; "Restart from here" on a step's row when the
// server answers restart. Read from the task's runner through GET /operator/tasks/:id, again every 2 s while live.
import { useCallback, useEffect, useState } from "react";
import {
  actionLabel,
  api,
  appliesTo,
  FINAL,
  formatDuration,
  formatTime,
  type OperatorInfo,
  type TaskRow,
} from "./api.ts";
import { ConfirmDialog } from "./ConfirmDialog.tsx";
import { StatusBadge } from "./StatusBadge.tsx";
import {
  axisOf,
  barsOf,
  pct,
  spanOf,
  stepLabel,
  stepsOf,
  WAIT_KINDS,
  type Step,
  type TaskSnapshot,
} from "./waterfall.ts";

interface Detail {
  tool: string;
  principal: string;
  task: TaskSnapshot;
  catalog: TaskRow | null;
}

type Pending = { action: string; fromStep?: string } | { result: string } | undefined;

export function RunView({ taskId, info }: { taskId: string; info: OperatorInfo }) {
  const [detail, setDetail] = useState<Detail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [now, setNow] = useState(Date.now());
  const [pending, setPending] = useState<Pending>();
  const load = useCallback(
    () =>
      api<Detail>(`/tasks/${encodeURIComponent(taskId)}`).then(
        (answer) => {
          setDetail(answer);
          setNow(Date.now());
          setError(undefined);
        },
        (failure: Error) => setError(failure.message),
      ),
    [taskId],
  );
  useEffect(() => void load(), [load]);
  const live = detail !== undefined && !FINAL.has(detail.task.status);
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [live, load]);

  const actions = info.actions ?? ["cancel"];
  if (error && !detail) {
    return (
      <>
        <h1>Task {taskId}</h1>
        <p role="alert" className="error">
          {error}
        </p>
        <a href="#/">Back to the fleet</a>
      </>
    );
  }
  if (!detail) return <p role="status">Loading task {taskId}…</p>;
  const task = detail.task;
  const timeline = stepsOf(task);
  const created = task.createdAt ? Date.parse(task.createdAt) : undefined;
  const ended = FINAL.has(task.status) && task.lastUpdatedAt ? Date.parse(task.lastUpdatedAt) : now;
  // A restart makes a new task from a final one's journal: offered once the task has ended.
  const canRestart = actions.includes("restart") && FINAL.has(task.status);

  async function act(action: string, fromStep?: string) {
    try {
      const answer = await api<{ taskId?: string; newTaskId?: string; status?: string }>(
        `/tasks/${encodeURIComponent(taskId)}/${action}`,
        { method: "POST", body: fromStep === undefined ? {} : { fromStep } },
      );
      const made = answer.newTaskId ?? (answer.taskId !== taskId ? answer.taskId : undefined);
      setPending({ result: made ? `Done: the new task is ${made}.` : `Done: ${answer.status ?? "ok"}.` });
      if (made) location.hash = `#/tasks/${encodeURIComponent(made)}`;
      else void load();
    } catch (failure) {
      setPending({ result: `Refused: ${(failure as Error).message}` });
    }
  }

  return (
    <>
      <p className="small">
        <a href="#/">← Fleet</a>
      </p>
      <section className="panel run-header" aria-labelledby="run-heading" data-testid="run-header">
        <h1 id="run-heading">
          {detail.tool} <span className="id small">{taskId}</span>
        </h1>
        <dl className="facts">
          <div>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={task.status} />
            </dd>
          </div>
          <div>
            <dt>Duration</dt>
            <dd data-testid="run-duration">
              {created === undefined ? "—" : formatDuration(ended - created)}
              {live ? " so far" : ""}
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatTime(task.createdAt)}</dd>
          </div>
          <div>
            <dt>Principal</dt>
            <dd>{detail.principal}</dd>
          </div>
        </dl>
        {task.statusMessage && <p className="message">{task.statusMessage}</p>}
        <div className="buttons">
          {actions
            .filter((action) => appliesTo(action, task.status))
            .map((action) => (
              <button type="button" key={action} className="secondary" onClick={() => setPending({ action })}>
                {actionLabel(action)}
              </button>
            ))}
        </div>
      </section>
      <section className="panel" aria-labelledby="steps-heading">
        <h2 id="steps-heading">Steps</h2>
        {!timeline && <p>The runner sent no step timeline for this task.</p>}
        {timeline && (
          <Waterfall
            task={task}
            steps={timeline.steps}
            total={timeline.total}
            now={now}
            restart={canRestart ? (label) => setPending({ action: "restart", fromStep: label }) : undefined}
          />
        )}
      </section>
      {pending && "action" in pending && (
        <ConfirmDialog
          title={pending.fromStep ? `Restart from ${pending.fromStep}?` : `${actionLabel(pending.action)} 1 task?`}
          confirmLabel={pending.fromStep ? "Restart as a new task" : `${actionLabel(pending.action)} 1 task`}
          onClose={() => setPending(undefined)}
          onConfirm={() => void act(pending.action, pending.fromStep)}
        >
          <p data-testid="confirm-count">
            {pending.fromStep
              ? `This creates 1 new task with this task's input and its journal before step ${pending.fromStep}; this task stays as it is.`
              : `This will ${pending.action} 1 task, ${taskId}.`}
          </p>
        </ConfirmDialog>
      )}
      {pending && "result" in pending && (
        <ConfirmDialog
          title="Result"
          confirmLabel={null}
          onClose={() => setPending(undefined)}
          onConfirm={() => undefined}
        >
          <p role="status">{pending.result}</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function Waterfall({
  task,
  steps,
  total,
  now,
  restart,
}: {
  task: TaskSnapshot;
  steps: Step[];
  total: number;
  now: number;
  restart: ((label: string) => void) | undefined;
}) {
  const axis = axisOf(task, steps, now);
  const length = axis.end - axis.start;
  const [open, setOpen] = useState<string | undefined>();
  const chosen = steps.find((step) => stepLabel(step) === open);
  return (
    <div className="waterfall" data-testid="waterfall">
      <p className="small muted">
        {steps.length === 0 ? "No step has run yet." : `${total} steps`} on one time axis from the task's creation (
        {formatDuration(length)}).{total > steps.length && ` The last ${steps.length} are shown.`}
      </p>
      <div className="wf-row wf-axis" aria-hidden="true">
        <span className="wf-name" />
        <span className="wf-track">
          {[0, 25, 50, 75, 100].map((tick) => (
            <span key={tick} className="wf-tick" style={{ left: `${tick}%` }}>
              {formatDuration((length * tick) / 100)}
            </span>
          ))}
        </span>
        <span className="wf-dur" />
      </div>
      <ol className="wf-steps">
        {steps.map((step) => {
          const label = stepLabel(step);
          const span = spanOf(step, now);
          const wait = WAIT_KINDS.has(step.kind);
          return (
            <li
              key={label}
              className="wf-row"
              data-testid="step-row"
              data-step={label}
              data-kind={step.kind}
              data-state={step.state}
            >
              <button
                type="button"
                className="wf-name link"
                aria-expanded={open === label}
                onClick={() => setOpen(open === label ? undefined : label)}
              >
                <span className={`kind ${wait ? "kind-wait" : "kind-work"}`}>
                  {step.kind === "do" ? "step" : step.kind}
                </span>{" "}
                <span className="wf-label">{label}</span>
                {step.attempts > 1 && <span className="small"> ×{step.attempts}</span>}
              </button>
              <span className="wf-track">
                {barsOf(step, now, formatDuration).map((bar) => (
                  <span
                    key={bar.key}
                    className={`wf-bar bar-${bar.kind}`}
                    style={{ left: pct(axis.at(bar.from)), width: pct(axis.at(bar.to) - axis.at(bar.from)) }}
                    title={bar.title}
                    data-testid={
                      bar.attempt !== undefined ? "attempt-bar" : bar.kind === "backoff" ? "backoff-bar" : "span-bar"
                    }
                  />
                ))}
              </span>
              <span className="wf-dur">
                {span ? formatDuration(span[1] - span[0]) : "—"}
                {restart && (
                  <button
                    type="button"
                    className="link small"
                    onClick={() => restart(label)}
                    aria-label={`Restart from ${label}`}
                  >
                    Restart from here
                  </button>
                )}
              </span>
            </li>
          );
        })}
      </ol>
      {chosen && <StepDetails step={chosen} now={now} />}
      <p className="small muted legend" aria-hidden="true">
        <span className="swatch bar-work" /> work <span className="swatch bar-failed" /> failed attempt{" "}
        <span className="swatch bar-backoff" /> back-off <span className="swatch bar-wait" /> sleep or wait
      </p>
    </div>
  );
}

/** One step's details on demand: its state and timing, and each attempt as the runner timed it, with its error. */
function StepDetails({ step, now }: { step: Step; now: number }) {
  const span = spanOf(step, now);
  return (
    <section className="step-details" aria-label={`Step ${stepLabel(step)}`} data-testid="step-details">
      <h3>{stepLabel(step)}</h3>
      <dl className="facts">
        <div>
          <dt>Kind</dt>
          <dd>{step.kind}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{step.state}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatTime(step.startedAt)}</dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{span ? formatDuration(span[1] - span[0]) : "—"}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{step.attempts}</dd>
        </div>
      </dl>
      {(step.attemptHistory ?? []).length > 0 && (
        <ol className="attempts small">
          {step.attemptHistory!.map((attempt) => (
            <li key={attempt.n}>
              attempt {attempt.n}: {formatTime(attempt.startedAt)},{" "}
              {attempt.endedAt
                ? formatDuration(Date.parse(attempt.endedAt) - Date.parse(attempt.startedAt))
                : "not ended"}
              {attempt.error && <span className="error"> · {attempt.error.message}</span>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
