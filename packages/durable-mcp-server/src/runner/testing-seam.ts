// The TaskRunner's one test-only seam, used by `durable-mcp-server/testing` (docs/testing.md, "Testing your tasks").
// It does what a test cannot do from outside without waiting or without changing the task's code: make a sleep or a
// retry back-off due now, and journal a `step.do` outcome by name (a mocked step). Both go through the step journal's
// own writes, so the next run replays them like any other journaled step. It is a single RPC method under an odd
// name, outside the typed TaskRunnerRpc, and refuses unless the Worker's env has the binding a test config sets.
import { MAX_STEP_NAME_LENGTH, MAX_STEP_RESULT_BYTES } from "../limits.js";
import { serializeResult } from "../steps/step-results.js";
import type { StepJournal } from "../steps/journal.js";
import { parseStepLabel, stepLabel, type StepRecord } from "../steps/step-record.js";
import { FINAL_STATUSES, type TaskRecord } from "./task-store.js";

/** The seam's method name on the TaskRunner: not a name anyone writes by accident. */
export const TESTING_SEAM = "__durableMcpTestingSeam";
/** The env binding that turns the seam on; only a test config sets it (`miniflare.bindings`). */
export const TESTING_BINDING = "DURABLE_MCP_TESTING";

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

export function testingEnabled(env: unknown): boolean {
  const flag = (env as Record<string, unknown> | null | undefined)?.[TESTING_BINDING];
  return flag === true || flag === 1 || flag === "1" || flag === "true";
}

export function assertTestingEnabled(env: unknown): void {
  if (!testingEnabled(env)) {
    throw new TestingSeamError(
      `the durable-mcp-server testing seam is off: it works only in tests whose config sets the ${TESTING_BINDING} ` +
        `binding (cloudflareTest({ miniflare: { bindings: { ${TESTING_BINDING}: true } } }), see docs/testing.md)`,
    );
  }
}

/**
 * Applies one operation to a task's journal. `record` is the task (null before it exists). Throws
 * TestingSeamError for anything a test should not do; writes nothing then.
 */
export function applyTestingOp(
  op: TestingOp,
  record: TaskRecord | null,
  journal: StepJournal,
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
  return op.op === "wake" ? wake(op.taskId, op.step, steps, journal, now) : inject(op, steps, journal, now);
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
  const base: StepRecord = {
    ...parseStepLabel(name),
    kind: "do",
    state: "done",
    attempts: Math.max(existing?.attempts ?? 0, 1),
    result: null,
    error: null,
    wakeAt: null,
    request: null,
    idempotencyKey: existing?.idempotencyKey ?? null,
  };
  let record: StepRecord;
  if (hasResult) {
    // The same check and serialization a real result gets: not JSON or over the journal's cap is refused.
    let text: string | null;
    try {
      text = serializeResult(name, (outcome as { result: unknown }).result, MAX_STEP_RESULT_BYTES);
    } catch (error) {
      throw new TestingSeamError(error instanceof Error ? error.message : String(error));
    }
    record = { ...base, result: text };
  } else {
    const error = (outcome as { error: { name?: unknown; message?: unknown } }).error;
    if (typeof error !== "object" || error === null || typeof error.message !== "string") {
      throw new TestingSeamError(`step "${name}": an injected error needs a message`);
    }
    const errorName = typeof error.name === "string" && error.name.length > 0 ? error.name : "Error";
    record = { ...base, state: "failed", error: JSON.stringify({ name: errorName, message: error.message }) };
  }
  journal.write(record, now);
  // A step waiting for a retry (or left running by an eviction) is what the handler is parked on: run it again.
  return { steps: [name], wake: existing !== undefined };
}

/** Waiting on a clock: a sleep, a retry back-off, or an input with a timeout. */
function waiting(step: StepRecord): boolean {
  return step.state === "waiting" && step.wakeAt !== null;
}

function list(steps: Map<string, StepRecord>): string {
  return steps.size === 0 ? "none" : [...steps.keys()].map((name) => `"${name}"`).join(", ");
}
