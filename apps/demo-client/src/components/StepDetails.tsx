// One step's details in the run view: kind, state, times to the millisecond, result size, and each attempt with
// its start, end, duration and error (as the server timed them).
import type { TimelineStep } from "../../shared/mcp.ts";
import { formatDuration } from "../../shared/outcome.ts";
import { formatBytes } from "../files/format.ts";

/** A timestamp with milliseconds, in the browser's time zone. */
export function clock(iso: string | null): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return `${date.toLocaleTimeString([], { hour12: false })}.${String(date.getMilliseconds()).padStart(3, "0")}`;
}

export function StepDetails({ step, now, close }: { step: TimelineStep; now: number; close: () => void }) {
  const history = step.attemptHistory ?? [];
  const untimed = step.kind === "do" ? step.attempts - history.length : 0;
  const { resultBytes } = step;
  return (
    <div className="step-details" data-testid="step-details" role="region" aria-label={`Step ${step.name}`}>
      <div className="step-details-head">
        <h3>{step.name}</h3>
        <button type="button" className="link" onClick={close}>
          Close
        </button>
      </div>
      <dl className="facts">
        <dt>kind</dt>
        <dd>{step.kind}</dd>
        <dt>state</dt>
        <dd>{step.state}</dd>
        <dt>started</dt>
        <dd>{clock(step.startedAt)}</dd>
        <dt>last change</dt>
        <dd>{clock(step.updatedAt)}</dd>
        <dt>duration</dt>
        <dd>{step.durationMs === null ? "—" : `${step.durationMs} ms`}</dd>
        {step.kind === "do" && (
          <>
            <dt>attempts</dt>
            <dd>{step.attempts}</dd>
          </>
        )}
        <dt>result size</dt>
        <dd data-testid="step-result-size">
          {resultBytes === undefined || resultBytes === null ? "—" : formatBytes(resultBytes)}
        </dd>
      </dl>
      {history.length > 0 && (
        <table className="attempts" data-testid="step-attempts">
          <caption className="muted small">Attempts as the server timed them</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">started</th>
              <th scope="col">ended</th>
              <th scope="col">took</th>
              <th scope="col">error</th>
            </tr>
          </thead>
          <tbody>
            {history.map((attempt) => {
              const end = attempt.endedAt ? Date.parse(attempt.endedAt) : now;
              return (
                <tr key={attempt.n} className={attempt.error ? "failed" : undefined}>
                  <td>{attempt.n}</td>
                  <td>{clock(attempt.startedAt)}</td>
                  <td>{attempt.endedAt ? clock(attempt.endedAt) : "not ended"}</td>
                  <td>{formatDuration(end - Date.parse(attempt.startedAt))}</td>
                  <td>{attempt.error ? `${attempt.error.name}: ${attempt.error.message}` : "—"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {untimed > 0 && (
        <p className="muted small">
          {untimed} earlier attempt{untimed > 1 ? "s were" : " was"} counted but not timed (journaled before the server
          kept attempt history, or beyond the newest 20).
        </p>
      )}
    </div>
  );
}
