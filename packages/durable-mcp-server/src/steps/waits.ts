import { describeError, InputTimeoutError, InputUnavailableError } from "../errors/errors.js";
import { toMilliseconds } from "./duration.js";
import { parseStepLabel, type StepRecord } from "./step-record.js";
import { enterStep, type StepCore } from "./step-core.js";
import { inputFailure, parseJson } from "./step-results.js";
import type { InputOptions, InputRequest } from "./types.js";

// The steps that wait on the alarm: `step.sleep` / `step.sleepUntil` (kind "sleep") and `step.requestInput` /
// `step.elicit` (kind "input"), whose answer arrives through the runner.

const INPUT_METHODS = new Set(["elicitation/create", "sampling/createMessage", "roots/list"]);

/**
 * `step.sleep` / `step.sleepUntil`: journaled as kind "sleep", waiting until `wakeAt` (read once, when new); the
 * alarm wakes the run, whose replay finds it due and journals it done.
 */
export async function sleepStep(core: StepCore, name: string, wakeAt: () => number): Promise<void> {
  const entered = enterStep(core, name, "sleep");
  const { occurrence, record: journaled, label } = entered instanceof Promise ? await entered : entered;
  if (journaled?.state === "done") return;
  const due = journaled ? (journaled.wakeAt ?? 0) : wakeAt();
  if (!Number.isFinite(due)) throw new RangeError(`step "${label}": cannot sleep until ${due}`);
  const record: StepRecord = {
    name,
    occurrence,
    kind: "sleep",
    state: "waiting",
    attempts: 0,
    result: null,
    error: null,
    wakeAt: due,
    request: null,
  };
  if (due <= core.host.now()) {
    core.write({ ...record, state: "done" });
    if (journaled) core.host.event("sleep_finished", { step: label });
    return;
  }
  if (!journaled) {
    core.write(record);
    core.host.event("sleep_started", { step: label, wakeAt: new Date(due).toISOString() });
  }
  return core.park();
}

/**
 * `step.requestInput` / `step.elicit`: journaled as kind "input" with its request, waiting (the task is
 * `input_required`) until the runner journals the answer, or failed at once when the client cannot answer it.
 */
export async function inputStep(
  core: StepCore,
  name: string,
  request: InputRequest,
  options: InputOptions | undefined,
): Promise<unknown> {
  if (!INPUT_METHODS.has(request?.method)) {
    throw new TypeError(`step "${name}": input method must be one of ${[...INPUT_METHODS].join(", ")}`);
  }
  if (typeof name === "string" && parseStepLabel(name).name !== name) {
    // `confirm#2` is the key of the second use of `confirm`: an input step of that name would share its key.
    throw new TypeError(`step "${name}": an input step's name may not end in "#" and a number`);
  }
  const timeoutMs = options?.timeout === undefined ? undefined : toMilliseconds(options.timeout);
  const entered = enterStep(core, name, "input");
  // The label is the request's key on the wire: `confirm`, then `confirm#2`, … (unique per task, as the spec requires).
  const { occurrence, record, label } = entered instanceof Promise ? await entered : entered;
  if (!record) {
    const missing = core.host.inputUnavailable?.(request) ?? null;
    if (missing !== null) {
      // Journaled as failed, never as waiting: the task is not `input_required` for a question nobody can answer.
      const unavailable = new InputUnavailableError(label, request.method, missing);
      core.write({
        name,
        occurrence,
        kind: "input",
        state: "failed",
        attempts: 0,
        result: null,
        error: JSON.stringify({ ...describeError(unavailable), capability: missing }),
        wakeAt: null,
        request: JSON.stringify(request),
      });
      core.host.event("input_unavailable", { step: label, method: request.method, capability: missing });
      throw unavailable;
    }
    const wakeAt = timeoutMs === undefined ? null : core.host.now() + timeoutMs;
    core.write({
      name,
      occurrence,
      kind: "input",
      state: "waiting",
      attempts: 0,
      result: null,
      error: null,
      wakeAt,
      request: JSON.stringify(request),
    });
    core.host.event("input_requested", { step: label, method: request.method });
    core.host.inputRequested();
    return core.park();
  }
  if (record.state === "done") return parseJson(record.result);
  if (record.state === "failed") throw inputFailure(record, label);
  if (record.wakeAt !== null && record.wakeAt <= core.host.now()) {
    // The timeout is journaled first; an answer arriving later finds the key no longer outstanding.
    const timedOut = new InputTimeoutError(label);
    core.write({ ...record, state: "failed", error: JSON.stringify(describeError(timedOut)) });
    core.host.event("input_timed_out", { step: label });
    throw timedOut;
  }
  return core.park();
}
