import { stepLabel } from "../steps/step-record.js";
import type { StepJournal } from "../steps/journal.js";
import { checkInputAnswer } from "./elicit-answer.js";
import type { TaskRun } from "./task-run.js";
import type { UpdateOutcome } from "./task-runner-rpc.js";
import { FINAL_STATUSES, type TaskRecord } from "./task-store.js";

/**
 * Records a caller's answers for a task's outstanding questions (`tasks/update`, the fallback's respond): every answer
 * is checked against its question first, so one invalid answer records none; answers to keys not asked are ignored.
 * Accepted answers move the task on (its status, then a wake).
 */
export async function answerInputs<Env>(
  journal: StepJournal,
  run: TaskRun<Env>,
  record: TaskRecord,
  responses: Record<string, unknown>,
): Promise<UpdateOutcome> {
  if (FINAL_STATUSES.has(record.status)) return { accepted: [] };
  const asked = new Map(
    journal.pendingInputs().map((step) => [stepLabel(step.name, step.occurrence), JSON.parse(step.request ?? "{}")]),
  );
  for (const [key, value] of Object.entries(responses)) {
    const problem = asked.has(key) ? checkInputAnswer(asked.get(key), value) : null;
    if (problem) return { accepted: [], invalid: { key, ...problem } };
  }
  const now = Date.now();
  const accepted = Object.entries(responses)
    .filter(([key, value]) => value !== undefined && journal.answerInput(key, JSON.stringify(value), now))
    .map(([key]) => key);
  if (accepted.length > 0) {
    run.events(record)("input_answered", { keys: accepted.join(",") });
    run.syncInputStatus(now);
    await run.wake(now);
  }
  return { accepted };
}
