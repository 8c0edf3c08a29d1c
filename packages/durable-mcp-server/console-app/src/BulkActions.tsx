// Actions on many tasks. On the selected rows: each action GET /operator lists, sent per task
// (POST /tasks/:id/<action>), to the tasks it applies to. On every live task the filter matches: cancel, through a bulk
// job (POST /cancellations), whose dry run gives the count the confirmation states; its progress is read until done.
import { useState } from "react";
import { actionLabel, api, appliesTo, type TaskRow } from "./api.ts";
import { ConfirmDialog } from "./ConfirmDialog.tsx";

interface Job {
  jobId: string;
  state: string;
  total: number;
  done: number;
  failed: number;
}

type Pending =
  | { kind: "selection"; action: string; tasks: TaskRow[]; skipped: number }
  | { kind: "filter"; count: number }
  | {
      kind: "running";
      title: string;
      done: number;
      failed: number;
      total: number;
      finished: boolean;
      errors: string[];
    };

const CONCURRENCY = 4;

export function BulkActions({
  actions,
  chosen,
  where,
  maxBulk,
  done,
}: {
  actions: string[];
  chosen: TaskRow[];
  where: Record<string, string>;
  maxBulk: number;
  done: () => void;
}) {
  const [pending, setPending] = useState<Pending | undefined>();
  const [error, setError] = useState<string | undefined>();
  const filtered = Object.keys(where).length > 0;

  async function runSelection(action: string, tasks: TaskRow[]) {
    const title = `${actionLabel(action)} ${tasks.length} ${tasks.length === 1 ? "task" : "tasks"}`;
    let state = {
      kind: "running" as const,
      title,
      done: 0,
      failed: 0,
      total: tasks.length,
      finished: false,
      errors: [] as string[],
    };
    setPending(state);
    const queue = [...tasks];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let task = queue.shift(); task; task = queue.shift()) {
          try {
            await api(`/tasks/${encodeURIComponent(task.taskId)}/${action}`, { method: "POST", body: {} });
            state = { ...state, done: state.done + 1 };
          } catch (failure) {
            state = {
              ...state,
              failed: state.failed + 1,
              errors: [...state.errors, `${task.taskId}: ${(failure as Error).message}`],
            };
          }
          setPending(state);
        }
      }),
    );
    setPending({ ...state, finished: true });
  }

  async function runFilter() {
    try {
      const started = await api<{ job: Job }>("/cancellations", { body: { where } });
      let job = started.job;
      const show = (finished: boolean) =>
        setPending({
          kind: "running",
          title: `Cancel ${job.total} matching ${job.total === 1 ? "task" : "tasks"}`,
          done: job.done,
          failed: job.failed,
          total: job.total,
          finished,
          errors: [],
        });
      show(job.state !== "running");
      while (job.state === "running") {
        await new Promise((resolve) => setTimeout(resolve, 500));
        job = (await api<{ job: Job }>(`/cancellations/${job.jobId}`)).job;
        show(job.state !== "running");
      }
    } catch (failure) {
      setPending(undefined);
      setError((failure as Error).message);
    }
  }

  return (
    <div className="bulk" data-testid="bulk-actions">
      <span className="small" aria-live="polite">
        {chosen.length} selected
      </span>
      {actions.map((action) => (
        <button
          type="button"
          key={action}
          className="secondary"
          disabled={chosen.length === 0}
          onClick={() => {
            const tasks = chosen.filter((task) => appliesTo(action, task.status));
            setPending({ kind: "selection", action, tasks, skipped: chosen.length - tasks.length });
          }}
        >
          {actionLabel(action)} selected
        </button>
      ))}
      {actions.includes("cancel") && (
        <button
          type="button"
          className="secondary"
          disabled={!filtered}
          title={filtered ? undefined : "Filter first: a bulk cancel needs a filter"}
          onClick={async () => {
            setError(undefined);
            try {
              const dry = await api<{ count: number }>("/cancellations", { body: { where, dryRun: true } });
              setPending({ kind: "filter", count: dry.count });
            } catch (failure) {
              setError((failure as Error).message);
            }
          }}
        >
          Cancel all matching…
        </button>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {pending?.kind === "selection" && (
        <ConfirmDialog
          title={`${actionLabel(pending.action)} ${pending.tasks.length} ${pending.tasks.length === 1 ? "task" : "tasks"}?`}
          confirmLabel={pending.tasks.length === 0 ? null : `${actionLabel(pending.action)} ${pending.tasks.length}`}
          onClose={() => setPending(undefined)}
          onConfirm={() => void runSelection(pending.action, pending.tasks)}
        >
          <p data-testid="confirm-count">
            This will {pending.action} <strong>{pending.tasks.length}</strong> of the{" "}
            {pending.tasks.length + pending.skipped} selected tasks.
            {pending.skipped > 0 && ` ${pending.skipped} cannot be: their status does not allow it.`}
          </p>
        </ConfirmDialog>
      )}
      {pending?.kind === "filter" && (
        <ConfirmDialog
          title={`Cancel ${pending.count} ${pending.count === 1 ? "task" : "tasks"}?`}
          confirmLabel={pending.count === 0 || pending.count > maxBulk ? null : `Cancel ${pending.count}`}
          onClose={() => setPending(undefined)}
          onConfirm={() => void runFilter()}
        >
          <p data-testid="confirm-count">
            <strong>{pending.count}</strong> live {pending.count === 1 ? "task matches" : "tasks match"} the filter (
            {Object.entries(where)
              .map(([key, value]) => `${key}=${value}`)
              .join(", ")}
            ) now; each will be cancelled.
            {pending.count > maxBulk &&
              ` That is more than ${maxBulk}, the most one bulk cancel takes: narrow the filter.`}
          </p>
        </ConfirmDialog>
      )}
      {pending?.kind === "running" && (
        <ConfirmDialog
          title={pending.title}
          confirmLabel={null}
          onClose={() => {
            setPending(undefined);
            done();
          }}
          onConfirm={() => undefined}
        >
          <p role="status" data-testid="bulk-progress">
            {pending.finished ? "Done: " : "Working: "}
            {pending.done} of {pending.total} done{pending.failed > 0 ? `, ${pending.failed} failed` : ""}.
          </p>
          <progress max={Math.max(1, pending.total)} value={pending.done + pending.failed} aria-label="Progress" />
          {pending.errors.length > 0 && (
            <ul className="small">
              {pending.errors.slice(0, 10).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
