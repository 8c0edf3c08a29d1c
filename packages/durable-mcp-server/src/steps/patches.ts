import { MAX_STEP_NAME_LENGTH } from "../limits.js";
import { PATCH_OCCURRENCE } from "./step-record.js";
import type { StepCore } from "./step-core.js";

/** `step.patched` of one run; asked twice, a patch answers the same (its answer is kept by patch id). */
export function patchMarkers(core: StepCore): (id: string) => Promise<boolean> {
  const answers = new Map<string, Promise<boolean>>();
  return (id) => patched(core, answers, id);
}

/**
 * Temporal-style patch marker. A run that reaches it at the frontier (a new task, or one whose replay has caught
 * up with its journal) journals it and takes the new path (true) — on every later replay too. A task that
 * journaled past this point without the marker (it ran the old code here) gets false, on every replay.
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
  if (core.isJournaled(id, PATCH_OCCURRENCE)) return true;
  if (core.replaying && !(await core.atFrontier("patch", id))) {
    return core.settled ? core.halt() : false;
  }
  if (core.settled) return core.halt();
  core.write({
    name: id,
    occurrence: PATCH_OCCURRENCE,
    kind: "patch",
    state: "done",
    attempts: 0,
    result: null,
    error: null,
    wakeAt: null,
    request: null,
  });
  core.host.event("patch_applied", { step: id });
  return true;
}
