import { ChildTaskError, InvokeError, type ChildTaskEnding, type InvokeRefusal } from "../errors/invoke-errors.js";
import { MAX_STEP_RESULT_BYTES } from "../limits.js";
import { toMilliseconds } from "./duration.js";
import type { ChildNotice, ChildRefusal } from "./engine-host.js";
import type { StepRecord, StepState } from "./step-record.js";
import { enterStep, type StepCore } from "./step-core.js";
import type { InvokeOptions } from "./types.js";

// `step.invoke` (kind "invoke"): a child task started exactly once, waited for without holding the parent's object
// (as `step.waitForEvent` waits), its outcome journaled once. The runner's side (runner/child-tasks.ts) starts the
// child, records its notice (runner/child-outbox.ts delivers it) and completes the waiting row in the journal.

const POLICIES = new Set(["cancel", "abandon"]);

/** What an invoke row's `request` holds: enough to name the child again without contacting it. */
export interface InvokeRequest {
  task: string;
  childId: string;
  onParentCancel: "cancel" | "abandon";
}

/** The journal's `error` JSON of a failed invoke: a refusal (InvokeError) or the child's ending (ChildTaskError). */
type InvokeFailure =
  | { name: "InvokeError"; message: string; reason: InvokeRefusal; issues?: { path: string; message: string }[] }
  | { name: "ChildTaskError"; message: string; ending: ChildTaskEnding; code: string | number; childTaskId: string };

export async function invokeStep(core: StepCore, name: string, options: InvokeOptions): Promise<unknown> {
  // Checked before anything is journaled or started, on this run and every replay alike.
  const task = (options as Partial<InvokeOptions> | undefined)?.task;
  if (typeof task !== "string" || task.length === 0) {
    throw new TypeError(`step "${name}": step.invoke needs the name of a registered task in options.task`);
  }
  const timeoutMs = options.timeout === undefined ? undefined : toMilliseconds(options.timeout);
  const onParentCancel = options.onParentCancel ?? "cancel";
  if (!POLICIES.has(onParentCancel)) {
    throw new TypeError(`step "${name}": onParentCancel must be "cancel" or "abandon", got ${String(onParentCancel)}`);
  }
  const entered = enterStep(core, name, "invoke");
  const { occurrence, record, label } = entered instanceof Promise ? await entered : entered;
  if (record) return journaledOutcome(core, record, label);
  // Only a new invoke needs the runner (a replay check has none, and reads journaled invokes only).
  const host = core.host.invoke;
  if (!host) throw new Error(`step "${label}": this TaskRunner cannot start child tasks (it has no runnerBinding)`);
  // Counted in flight while the child is created, so that the run cannot suspend under this step.
  core.workStarted();
  let started: { childId: string } | ChildRefusal;
  try {
    started = await host.start({ label, task, input: options.input ?? null, onParentCancel });
  } finally {
    core.workEnded();
  }
  if (core.settled || core.host.isCancelled()) return core.halt({ kind: "cancelled" });
  const base: StepRecord = {
    name,
    occurrence,
    kind: "invoke",
    state: "waiting",
    attempts: 0,
    result: null,
    error: null,
    wakeAt: null,
    request: null,
  };
  if ("refused" in started) {
    const failure: InvokeFailure = { name: "InvokeError", message: started.message, reason: started.refused };
    if (started.issues) failure.issues = started.issues;
    core.write({ ...base, state: "failed", error: JSON.stringify(failure), request: JSON.stringify({ task }) });
    core.host.event("invoke_refused", { step: label, task, reason: started.refused });
    throw toError(failure, label);
  }
  const request: InvokeRequest = { task, childId: started.childId, onParentCancel };
  // Taken and journaled in one synchronous turn: a notice that came while the child was being created is not lost.
  const notice = host.take(started.childId);
  if (notice) {
    const row = { ...base, ...childOutcome(notice, label), request: JSON.stringify(request) };
    core.write(row);
    core.host.event("invoke_finished", { step: label, childTaskId: started.childId, status: notice.status });
    return journaledOutcome(core, row, label);
  }
  const wakeAt = timeoutMs === undefined ? null : core.host.now() + timeoutMs;
  core.write({ ...base, wakeAt, request: JSON.stringify(request) });
  host.waiting(label, task);
  core.host.event("invoke_waiting", { step: label, task, childTaskId: started.childId });
  return core.park();
}

/** A journaled invoke's outcome: its result, its error thrown, a timeout journaled once due, or a wait parked. */
function journaledOutcome(core: StepCore, record: StepRecord, label: string): unknown {
  if (record.state === "done") return JSON.parse(record.result ?? "null");
  if (record.state === "failed") throw toError(JSON.parse(record.error ?? "{}") as InvokeFailure, label);
  if (record.wakeAt !== null && record.wakeAt <= core.host.now()) {
    const { childId } = JSON.parse(record.request ?? "{}") as InvokeRequest;
    const failure: InvokeFailure = {
      name: "ChildTaskError",
      message: `child task ${childId} did not finish before the timeout of step "${label}"`,
      ending: "timed_out",
      code: "timed_out",
      childTaskId: childId,
    };
    // The timeout is journaled first: the child's notice arriving later finds the step no longer waiting.
    core.write({ ...record, state: "failed", error: JSON.stringify(failure) });
    core.host.event("invoke_timed_out", { step: label, childTaskId: childId });
    throw toError(failure, label);
  }
  return core.park();
}

function toError(failure: InvokeFailure, label: string): Error {
  if (failure.name === "InvokeError") return new InvokeError(label, failure.reason, failure.message, failure.issues);
  return new ChildTaskError(label, failure.childTaskId, failure.ending, failure.code, failure.message);
}

/**
 * The journal columns of an invoke whose child sent `notice`: its CallToolResult as the result when it completed
 * without `isError`, else a ChildTaskError with the child's code and message.
 */
export function childOutcome(
  notice: ChildNotice,
  label: string,
): { state: StepState; result: string | null; error: string | null; wakeAt: null } {
  const failed = (ending: ChildTaskEnding, code: string | number, message: string) => {
    const failure: InvokeFailure = { name: "ChildTaskError", message, ending, code, childTaskId: notice.childId };
    return { state: "failed" as const, result: null, error: JSON.stringify(failure), wakeAt: null };
  };
  if (notice.status === "cancelled")
    return failed("cancelled", "cancelled", `child task of step "${label}" was cancelled`);
  if (notice.status === "failed") {
    const error = JSON.parse(notice.error ?? "{}") as { code?: number; message?: string };
    return failed("failed", error.code ?? "failed", error.message ?? "child task failed");
  }
  const result = JSON.parse(notice.result ?? "null") as {
    isError?: boolean;
    structuredContent?: { error?: { code?: string; message?: string } };
  } | null;
  if (result?.isError) {
    const envelope = result.structuredContent?.error;
    return failed("failed", envelope?.code ?? "tool_error", envelope?.message ?? "child task returned an error");
  }
  // The result becomes a journal row of the parent: held to a step result's limit, whatever the child could return.
  if (notice.result !== null && new TextEncoder().encode(notice.result).byteLength > MAX_STEP_RESULT_BYTES) {
    return failed("failed", "result_too_large", `the child's result is larger than ${MAX_STEP_RESULT_BYTES} bytes`);
  }
  return { state: "done", result: notice.result, error: null, wakeAt: null };
}
