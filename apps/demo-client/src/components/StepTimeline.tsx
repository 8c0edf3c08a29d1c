// A task's step timeline, from the `_meta` its server sends on tasks/get (durable-mcp-server only).
import { timelineOf } from "../../shared/mcp.ts";
import type { TaskView } from "../../shared/watcher-state.ts";

/** The task's steps as its server journaled them: name, kind, state, attempts and how long each took. */
export function StepTimeline({ view }: { view: TaskView }) {
  const timeline = view.snapshot ? timelineOf(view.snapshot) : undefined;
  return (
    <section className="panel">
      <h2>Step timeline</h2>
      {!timeline ? (
        <p className="muted">The server sent no step timeline for this task (only durable-mcp-server does).</p>
      ) : (
        <>
          {timeline.total > timeline.steps.length && (
            <p className="muted small">
              The last {timeline.steps.length} of {timeline.total} steps.
            </p>
          )}
          <table className="timeline" data-testid="step-timeline">
            <thead>
              <tr>
                <th>step</th>
                <th>kind</th>
                <th>state</th>
                <th>attempts</th>
                <th>started</th>
                <th>duration</th>
              </tr>
            </thead>
            <tbody>
              {timeline.steps.map((step) => (
                <tr key={step.name} data-step={step.name} data-state={step.state} data-attempts={step.attempts}>
                  <td>{step.name}</td>
                  <td>{step.kind}</td>
                  <td>{step.state}</td>
                  <td>{step.kind === "do" ? step.attempts : "—"}</td>
                  <td>{step.startedAt ? new Date(step.startedAt).toLocaleTimeString() : "—"}</td>
                  <td>{step.durationMs === null ? "—" : formatDuration(step.durationMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
