// The TaskRunner's test-only seam, used by `durable-mcp-server/testing` (docs/testing.md, "Testing your tasks"). It
// does what a test cannot do from outside without waiting or without changing the task's code: make a sleep or a
// retry back-off due now, and mock a `step.do` outcome by name. Only the TaskRunner subclass a test config exports
// (withTestingSeam) imports this module, so a deployed Worker's bundle has none of it. A made-due step goes through
// the journal's own write; an injected outcome goes to a table of its own (steps/injected-outcomes.ts), which the
// engine consults where the step would run its body, then journals as the step's result.
import { MAX_STEP_NAME_LENGTH, MAX_STEP_RESULT_BYTES, SEAM_RUN_WAIT_MS } from "../limits.js";
import { serializeResult } from "../steps/step-results.js";
import type { StepJournal } from "../steps/journal.js";
import { parseStepLabel, stepLabel, type StepRecord } from "../steps/step-record.js";
import type { SeamHost } from "./seam-host.js";
import { FINAL_STATUSES, type TaskRecord } from "./task-store.js";

export { TESTING_SEAM } from "./seam-host.js";

/**
 * A mocked `step.do` outcome: the value it returns, or the failure it ends with (retries exhausted).
 * @example
 * ```ts
 * import { testTasks, type InjectedOutcome } from "durable-mcp-server/testing";
 *
 * const upstreamDown: InjectedOutcome = { error: { message: "upstream timeout" } };
 * const inject = { "fetch figures": upstreamDown };
 * const task = await testTasks().start("build_report", { region: "emea" }, { inject });
 * ```
 */
export type InjectedOutcome = { result: unknown } | { error: { name?: string; message: string } };

export type TestingOp =
  /** Makes waiting steps due now: the named one, or every sleep and retry back-off (input timeouts only by name). */
  | { op: "wake"; taskId: string; step?: string }
  /**
   * Journals a `do` step's outcome; allowed before the task exists (its TaskRunner is the task id's). `step` is a
   * label: `name` for the first use of a name, `name#n` for use n (also for `wake`).
   */
  | { op: "inject"; taskId: string; step: string; outcome: InjectedOutcome };

export interface TestingReply {
  /** The steps the operation changed. */
  steps: string[];
  /** Whether the task should run again now (a waiting step changed). */
  wake: boolean;
}

/**
 * What the seam answers: a reply, or why the operation was refused (returned rather than thrown, so that a test's
 * expected misuse is not logged by the runtime as an uncaught exception in the object).
 */
export type TestingAnswer = { ok: true; reply: TestingReply } | { ok: false; refused: string };

/** Thrown for every refused operation; the message says what to do instead. */
export class TestingSeamError extends Error {
  override name = "TestingSeamError";
}

/**
 * The seam's RPC method body: waits for a run under way to end (so that it never writes under one), applies `op`, and
 * asks for a run when a waiting step changed. A misuse is answered as a refusal.
 */
export async function runTestingOp(host: SeamHost, op: TestingOp): Promise<TestingAnswer> {
  for (let waitedMs = 0; host.running(); waitedMs += 10) {
    if (waitedMs >= SEAM_RUN_WAIT_MS) {
      throw new Error(`a run of this task is still under way after ${SEAM_RUN_WAIT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // A step outcome may be injected before the task exists: its object then keeps it for the first run.
  if (op?.op === "inject") host.applySchema();
  const record = host.record();
  const now = Date.now();
  let reply;
  try {
    reply = applyTestingOp(op, record, host.journal, host.sql, now);
  } catch (error) {
    if (error instanceof TestingSeamError) return { ok: false, refused: error.message };
    throw error;
  }
  // The alarm already set stays as it is, so that the kit's runDurableObjectAlarm runs it (and the run) now, rather
  // than racing one that fires by itself; only a task with no alarm gets one.
  if (reply.wake && record && (await host.getAlarm()) === null) await host.wake(now);
  return { ok: true, reply };
}

/**
 * Applies one operation to a task's journal. `record` is the task (null before it exists). Throws
 * TestingSeamError for anything a test should not do; writes nothing then.
 */
export function applyTestingOp(
  op: TestingOp,
  record: TaskRecord | null,
  journal: StepJournal,
  sql: SqlStorage,
  now: number,
): TestingReply {
  if (typeof op !== "object" || op === null || (op.op !== "wake" && op.op !== "inject")) {
    throw new TestingSeamError(`unknown testing operation ${JSON.stringify((op as { op?: unknown } | null)?.op)}`);
  }
  if (record && record.taskId !== op.taskId) {
    throw new TestingSeamError(`this TaskRunner holds task ${record.taskId}, not ${op.taskId}`);
  }
  if (!record && op.op === "wake") throw new TestingSeamError(`there is no task ${op.taskId}: start it first`);
  if (record && FINAL_STATUSES.has(record.status)) {
    throw new TestingSeamError(`task ${record.taskId} is ${record.status}: a finished task runs no more steps`);
  }
  // Steps by label: `name` for the first use of a name, `name#n` for use n (how inputs are keyed on the wire).
  const steps = new Map(
    journal
      .load()
      .filter((step) => step.kind !== "patch")
      .map((step) => [stepLabel(step.name, step.occurrence), step]),
  );
  return op.op === "wake" ? wake(op.taskId, op.step, steps, journal, now) : inject(op, steps, journal, sql, now);
}

function wake(
  taskId: string,
  name: string | undefined,
  steps: Map<string, StepRecord>,
  journal: StepJournal,
  now: number,
): TestingReply {
  let due: StepRecord[];
  if (name !== undefined) {
    const step = steps.get(name);
    if (!step) throw new TestingSeamError(`task ${taskId} has no step "${name}" yet (its steps: ${list(steps)})`);
    if (!waiting(step)) {
      throw new TestingSeamError(
        `step "${name}" is ${step.state}${step.kind === "input" ? " without a timeout" : ""}: only a waiting sleep, ` +
          "retry back-off or input timeout can be made due",
      );
    }
    due = [step];
  } else {
    // An input's or event wait's timeout is a deadline, not a delay: it is made due only when named.
    due = [...steps.values()].filter((step) => waiting(step) && step.kind !== "input" && step.kind !== "event");
    if (due.length === 0) {
      throw new TestingSeamError(`task ${taskId} waits on no sleep or retry back-off (its steps: ${list(steps)})`);
    }
  }
  for (const step of due) journal.write({ ...step, wakeAt: now }, now);
  return { steps: due.map((step) => stepLabel(step.name, step.occurrence)), wake: true };
}

function inject(
  op: Extract<TestingOp, { op: "inject" }>,
  steps: Map<string, StepRecord>,
  journal: StepJournal,
  sql: SqlStorage,
  now: number,
): TestingReply {
  const { step: name, outcome } = op;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_LENGTH) {
    throw new TestingSeamError(`a step name must be a non-empty string of at most ${MAX_STEP_NAME_LENGTH} characters`);
  }
  const hasResult = typeof outcome === "object" && outcome !== null && "result" in outcome;
  const hasError = typeof outcome === "object" && outcome !== null && "error" in outcome;
  if (hasResult === hasError) {
    throw new TestingSeamError(`step "${name}": inject either { result } or { error: { name?, message } }`);
  }
  const existing = steps.get(name);
  if (existing && existing.kind !== "do") {
    throw new TestingSeamError(`step "${name}" is a ${existing.kind} step: only step.do outcomes can be injected`);
  }
  if (existing && (existing.state === "done" || existing.state === "failed")) {
    throw new TestingSeamError(
      `step "${name}" already ${existing.state === "done" ? "returned" : "failed"}: inject before it finishes ` +
        "(at start, or while it waits for a retry)",
    );
  }
  let result: string | null = null;
  let failure: string | null = null;
  if (hasResult) {
    // The same check and serialization a real result gets: not JSON or over the journal's cap is refused.
    try {
      result = serializeResult(name, (outcome as { result: unknown }).result, MAX_STEP_RESULT_BYTES);
    } catch (error) {
      throw new TestingSeamError(error instanceof Error ? error.message : String(error));
    }
  } else {
    const error = (outcome as { error: { name?: unknown; message?: unknown } }).error;
    if (typeof error !== "object" || error === null || typeof error.message !== "string") {
      throw new TestingSeamError(`step "${name}": an injected error needs a message`);
    }
    const errorName = typeof error.name === "string" && error.name.length > 0 ? error.name : "Error";
    failure = JSON.stringify({ name: errorName, message: error.message });
  }
  const { name: stepName, occurrence } = parseStepLabel(name);
  sql.exec(
    `INSERT OR REPLACE INTO injected_steps (name, occurrence, state, result, error) VALUES (?, ?, ?, ?, ?)`,
    stepName,
    occurrence,
    failure === null ? "done" : "failed",
    result,
    failure,
  );
  // A step waiting for a retry is what the handler is parked on: due now, its next attempt takes the outcome (one
  // left running by an eviction takes it when the task runs again).
  if (existing?.state === "waiting") journal.write({ ...existing, wakeAt: now }, now);
  return { steps: [name], wake: existing !== undefined };
}

/** Waiting on a clock: a sleep, a retry back-off, or an input with a timeout. */
function waiting(step: StepRecord): boolean {
  return step.state === "waiting" && step.wakeAt !== null;
}

function list(steps: Map<string, StepRecord>): string {
  return steps.size === 0 ? "none" : [...steps.keys()].map((name) => `"${name}"`).join(", ");
}
