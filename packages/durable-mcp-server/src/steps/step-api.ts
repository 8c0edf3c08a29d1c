import { toMilliseconds, type Duration } from "./duration.js";
import { eventStep, webhookStep } from "./event-steps.js";
import type { StepBody } from "./live-attempt.js";
import { patchMarkers } from "./patches.js";
import type { StepConfig } from "./retry-policy.js";
import type { StepCore } from "./step-core.js";
import type {
  ElicitRequest,
  ElicitResult,
  FileRef,
  InvokeOptions,
  Step,
  TaskFiles,
  WaitForEventOptions,
  WebhookUrlOptions,
} from "./types.js";
import { inputStep, sleepStep } from "./waits.js";
import { invokeStep } from "./invoke-step.js";

/** What the handler's `step` object needs from the engine: its core, and `step.do` itself. */
export interface StepRunner extends StepCore {
  doStep(name: string, config: StepConfig | undefined, fn: StepBody): Promise<unknown>;
}

/** The `step` object a handler receives for one run: each method is a step kind of `run`. */
export function stepApi(run: StepRunner): Step {
  return {
    do: ((name: string, configOrFn: StepConfig | StepBody, maybeFn?: StepBody) =>
      typeof configOrFn === "function"
        ? run.doStep(name, undefined, configOrFn)
        : run.doStep(name, configOrFn, maybeFn as StepBody)) as Step["do"],
    sleep: (name, duration: Duration) => sleepStep(run, name, () => run.host.now() + toMilliseconds(duration)),
    sleepUntil: (name, until) => sleepStep(run, name, () => +until),
    elicit: (name, request: ElicitRequest, options) =>
      inputStep(
        run,
        name,
        { method: "elicitation/create", params: { mode: "form", ...request } },
        options,
      ) as Promise<ElicitResult>,
    requestInput: (name, request, options) => inputStep(run, name, request, options),
    files: run.host.files
      ? run.host.files((name, fn) => run.doStep(name, undefined, fn) as Promise<FileRef>)
      : filesDisabled,
    waitForEvent: ((name: string, options: WaitForEventOptions) =>
      eventStep(run, name, options)) as Step["waitForEvent"],
    webhookUrl: (name: string, options: WebhookUrlOptions) => webhookStep(run, name, options),
    invoke: ((name: string, options: InvokeOptions) => invokeStep(run, name, options)) as Step["invoke"],
    patched: patchMarkers(run),
    status: async (message, options) => {
      // Replays stay silent: only a run that has passed every journaled step reports status.
      if (run.settled || run.replaying) return;
      run.host.setStatus(String(message), options?.progress);
    },
  };
}

const filesDisabled: TaskFiles = {
  open: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
  write: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
};
