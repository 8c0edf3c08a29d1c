// Live tasks that look stuck (GET /operator/stuck), each with why; the thresholds are the server's defaults unless
// the operator gives others here.
import { useEffect, useState } from "react";
import { api, formatDuration, formatTime, type TaskRow } from "./api.ts";
import { StatusBadge } from "./StatusBadge.tsx";

const REASON: Record<string, string> = {
  no_progress: "no step progress",
  alarm_overdue: "timed wake overdue",
  input_unanswered: "question unanswered",
};

interface Thresholds {
  workingFor: string;
  inputFor: string;
}

export function Stuck() {
  const [draft, setDraft] = useState<Thresholds>({ workingFor: "", inputFor: "" });
  const [asked, setAsked] = useState<Thresholds>(draft);
  const [answer, setAnswer] = useState<
    { thresholds: { workingMs: number; inputMs: number; alarmGraceMs: number }; tasks: TaskRow[] } | undefined
  >();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const query = new URLSearchParams();
    if (asked.workingFor.trim()) query.set("workingFor", asked.workingFor.trim());
    if (asked.inputFor.trim()) query.set("inputFor", asked.inputFor.trim());
    api<NonNullable<typeof answer>>(`/stuck?${query}`).then(
      (found) => (setAnswer(found), setError(undefined)),
      (failure: Error) => setError(failure.message),
    );
  }, [asked]);
  return (
    <>
      <h1>Stuck tasks</h1>
      <form
        className="filters panel"
        aria-label="Stuck thresholds"
        onSubmit={(event) => {
          event.preventDefault();
          setAsked(draft);
        }}
      >
        <div className="field">
          <label htmlFor="s-working">Working with no progress for</label>
          <input
            id="s-working"
            value={draft.workingFor}
            onChange={(e) => setDraft({ ...draft, workingFor: e.target.value })}
            placeholder="15m"
          />
        </div>
        <div className="field">
          <label htmlFor="s-input">Question unanswered for</label>
          <input
            id="s-input"
            value={draft.inputFor}
            onChange={(e) => setDraft({ ...draft, inputFor: e.target.value })}
            placeholder="24h"
          />
        </div>
        <div className="buttons">
          <button type="submit">Find</button>
        </div>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {answer && (
        <section className="panel" aria-labelledby="stuck-heading">
          <h2 id="stuck-heading">
            {answer.tasks.length === 0 ? "No task looks stuck" : `${answer.tasks.length} tasks look stuck`}
          </h2>
          <p className="small muted">
            Working with no step progress for {formatDuration(answer.thresholds.workingMs)}, a question unanswered for{" "}
            {formatDuration(answer.thresholds.inputMs)}, or a timed wake{" "}
            {formatDuration(answer.thresholds.alarmGraceMs)} overdue.
          </p>
          <div className="scroll" role="region" aria-label="Stuck tasks table" tabIndex={0}>
            <table data-testid="stuck-table">
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Status</th>
                  <th scope="col">Why</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Step</th>
                </tr>
              </thead>
              <tbody>
                {answer.tasks.map((task) => (
                  <tr key={task.taskId} data-task={task.taskId}>
                    <td className="id">
                      <a href={`#/tasks/${encodeURIComponent(task.taskId)}`}>{task.taskId}</a>
                    </td>
                    <td>{task.tool}</td>
                    <td>
                      <StatusBadge status={task.status} />
                    </td>
                    <td>{(task.reasons ?? []).map((reason) => REASON[reason] ?? reason).join(", ")}</td>
                    <td>{formatTime(task.updatedAt)}</td>
                    <td>{task.currentStep ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}
