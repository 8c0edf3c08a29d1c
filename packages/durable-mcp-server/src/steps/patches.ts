import { MAX_STEP_NAME_LENGTH } from "../limits.js";
import { PATCH_OCCURRENCE } from "./step-record.js";
import type { StepCore } from "./step-core.js";

/** `step.patched` of one run; asked twice, a patch answers the same (its answer is kept by patch id). */
export function patchMarkers(core: StepCore): (id: string) => Promise<boolean> {
  const answers = new Map<string, Promise<boolean>>();
  return (id) => patched(core, answers, id);
}

/**
 * Temporal-style patch marker, decided without a clock: its first answer is journaled and every later replay gives
 * the same. That first answer is true only when no journaled step is unclaimed at that moment — a new task, or one
 * whose replay has caught up with its journal — and false while the replay is still behind the journal (the task
 * ran this point on the old code, or a parallel branch has not caught up yet: the old path is safe either way).
 * Markers journaled before false answers were (result null) answer true.
 */
function patched(core: StepCore, answers: Map<string, Promise<boolean>>, id: string): Promise<boolean> {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_STEP_NAME_LENGTH) {
    return Promise.reject(
      new TypeError(`a patch id must be a non-empty string of at most ${MAX_STEP_NAME_LENGTH} characters`),
    );
  }
  let answer = answers.get(id);
  if (!answer) {
    answer = decidePatch(core, id);
    answers.set(id, answer);
  }
  return answer;
}

async function decidePatch(core: StepCore, id: string): Promise<boolean> {
  if (core.settled) return core.halt();
  if (core.host.isCancelled()) return core.halt({ kind: "cancelled" });
  const journaled = core.journaled(id, PATCH_OCCURRENCE);
  if (journaled) return journaled.result !== PATCH_OLD_PATH;
  const applied = !core.replaying;
  core.write({
    name: id,
    occurrence: PATCH_OCCURRENCE,
    kind: "patch",
    state: "done",
    attempts: 0,
    result: applied ? null : PATCH_OLD_PATH,
    error: null,
    wakeAt: null,
    request: null,
  });
  if (applied) core.host.event("patch_applied", { step: id });
  return applied;
}

/** The journaled result of a patch marker that answered false (the old path); true is journaled as null. */
const PATCH_OLD_PATH = "false";
