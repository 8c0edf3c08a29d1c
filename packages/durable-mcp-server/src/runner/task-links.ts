// The links between a task and the tasks restarted or retried from it (task-restart.ts), kept in the task row's
// `links` column on both sides and shown under LINKS_META (wire/meta-keys.ts). The original's entries are written
// before the new task is seeded, so a seeding that did not finish is found again by the retried request.

/** A restart or retry of this task, as the original keeps it. */
export interface LinkedRestart {
  taskId: string;
  /** The step label the new task re-ran from; null for a retry (no journal kept). */
  fromStep: string | null;
  /** When it was asked for (ms since epoch). */
  at: number;
  /** What the request was keyed by (the request id, or a counter): the same key finds the same new task. */
  key: string;
  /** False until the new task holds its seed: a retried request finishes that one instead of making another. */
  seeded: boolean;
}

/** The `links` column: where this task came from, and what was made from it. */
export interface TaskLinks {
  /** This task was restarted from `taskId` at step `fromStep` (its journal before that step seeded this one). */
  restartedFrom?: { taskId: string; fromStep: string };
  /** This task is a retry of `taskId`: same input, an empty journal. */
  retriedFrom?: { taskId: string };
  /** Restarts and retries made from this task, oldest first. */
  restarts?: LinkedRestart[];
}

/** The links as the wire shows them (LINKS_META): ids, steps and times, not the request keys. */
export function linksView(links: TaskLinks): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  if (links.restartedFrom) view.restartedFrom = links.restartedFrom;
  if (links.retriedFrom) view.retriedFrom = links.retriedFrom;
  const made = (links.restarts ?? []).filter((entry) => entry.seeded);
  const restarted = made.filter((entry) => entry.fromStep !== null);
  const retried = made.filter((entry) => entry.fromStep === null);
  if (restarted.length > 0) {
    view.restartedAs = restarted.map((entry) => ({ taskId: entry.taskId, fromStep: entry.fromStep, at: at(entry.at) }));
  }
  if (retried.length > 0) view.retriedAs = retried.map((entry) => ({ taskId: entry.taskId, at: at(entry.at) }));
  return view;
}

const at = (ms: number) => new Date(ms).toISOString();
