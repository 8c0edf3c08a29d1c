import type { Task } from "../wire/task-shapes.js";
import type { TaskRun } from "./task-run.js";
import { FINAL_STATUSES, type TaskRecord, type TaskStore } from "./task-store.js";
import { toTask } from "./task-view.js";

// An operator's pause and resume of one task (TaskRunnerRpc.pause / resume). A pause is a flag on the row that the
// engine reads before every new step: the run under way stops at the next step boundary (a body already running
// finishes and its result is journaled), and while paused the alarm waits for nothing but the TTL. The resume clears
// the flag and wakes the task: the run replays the journal and goes on from exactly where it stopped.

/** What a pause or a resume answers: the task as it now stands, or why nothing changed. */
export type LifecycleOutcome = { task: Task; changed: boolean } | { refused: "final"; message: string };

interface LifecycleSite {
  readonly store: TaskStore;
  notify(): void;
}

/** Pauses a live task (again: no change); a final task is refused. */
export async function pauseTask<Env>(
  site: LifecycleSite,
  run: TaskRun<Env>,
  record: TaskRecord,
): Promise<LifecycleOutcome> {
  if (FINAL_STATUSES.has(record.status)) return finalRefusal(record, "paused");
  const now = Date.now();
  const changed = site.store.setPaused(now, now);
  if (changed) {
    site.notify();
    run.events(record)("task_paused");
    // Defer what the alarm was armed for (a due sleep, a requested run); a run under way re-arms at its end.
    if (!run.running) await run.arm(now);
  }
  return { task: toTask(site.store.read() ?? record), changed };
}

/** Resumes a paused task and runs it now (not paused: no change); a final task is refused. */
export async function resumeTask<Env>(
  site: LifecycleSite,
  run: TaskRun<Env>,
  record: TaskRecord,
): Promise<LifecycleOutcome> {
  if (FINAL_STATUSES.has(record.status)) return finalRefusal(record, "resumed");
  const now = Date.now();
  const changed = site.store.setPaused(null, now);
  if (changed) {
    site.notify();
    run.events(record)("task_resumed");
    await run.wake(now);
  }
  return { task: toTask(site.store.read() ?? record), changed };
}

function finalRefusal(record: TaskRecord, verb: string): LifecycleOutcome {
  return {
    refused: "final",
    message: `task ${record.taskId} is ${record.status}: only a live task can be ${verb} (restart or retry it instead)`,
  };
}
