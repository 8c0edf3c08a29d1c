import {
  describeError,
  InputTimeoutError,
  InputUnavailableError,
  NonRetryableError,
  ReplayDivergenceError,
  StepFailedError,
  StepResultError,
  StepTimeoutError,
} from "../errors/errors.js";
import { MAX_SPILLED_RESULT_BYTES, MAX_STEP_NAME_LENGTH, MAX_STEP_RESULT_BYTES } from "../limits.js";
import type { TaskEventSink } from "../task-events.js";
import { toMilliseconds, type Duration } from "./duration.js";
import type { StepJournal, StepKind, StepRecord } from "./journal.js";
import { resolveStepConfig, retryDelayMs, type StepConfig } from "./retry-policy.js";
import { StepKeys } from "./step-keys.js";
import type {
  ElicitRequest,
  ElicitResult,
  FileRef,
  FileStep,
  InputOptions,
  InputRequest,
  Serializable,
  Step,
  StepAttempt,
  TaskFiles,
} from "./types.js";

/** A journaled result that starts with this is a reference to R2; JSON text never starts with "@". */
const SPILLED = "@r2:";

/** Where results too large for the journal go. */
export interface ResultSpill {
  /** Stores the JSON text of step `name`'s result; returns the key to journal. */
  put(name: string, text: string): Promise<string>;
  get(key: string): Promise<string>;
}

/** What the engine needs from the TaskRunner that hosts it. */
export interface EngineHost {
  taskId: string;
  /** The task's secret the steps' idempotency keys are derived from (see step-keys.ts). */
  stepKeySalt: string;
  journal: StepJournal;
  now(): number;
  isCancelled(): boolean;
  setStatus(message: string, progress: number | undefined): void;
  /** A new input request was journaled: the task is now `input_required`. */
  inputRequested(): void;
  /**
   * The capability the task's client lacks to answer `request` (e.g. "elicitation.form"), or null when it can.
   * Fixed for the task's life, so a replay decides as the first run did. Absent: every question can be asked.
   */
  inputUnavailable?(request: InputRequest): string | null;
  /** Wall-clock time after which the run hands off to a fresh alarm at the next step boundary. */
  handoffAt: number;
  /** Every live AbortController of this run, so that cancel can abort them. */
  controllers: Set<AbortController>;
  /** Receives one structured event per step transition. */
  event: TaskEventSink;
  /** Builds `step.files` (given how to journal an artifact write as a step), when the deployment has files. */
  files?: (doStep: FileStep) => TaskFiles;
  /** Spills results over MAX_STEP_RESULT_BYTES to R2, when the deployment has files. */
  spill?: ResultSpill;
}

export type RunOutcome =
  | { kind: "returned"; value: unknown }
  | { kind: "threw"; error: unknown }
  /** Waiting on a clock or on input; the runner arms the alarm from the journal. */
  | { kind: "suspended"; immediate: boolean }
  | { kind: "diverged"; error: ReplayDivergenceError }
  | { kind: "cancelled" };

/**
 * Runs a task handler once against its journal. Journaled steps return their stored outcome without running;
 * a step that must wait parks the handler on a promise that never settles, and once no step body is still in
 * flight the run ends `suspended`. The abandoned handler is garbage; the next alarm replays it from the top.
 */
export function runWithJournal<I>(
  handler: (input: I, step: Step) => Promise<unknown>,
  input: I,
  host: EngineHost,
): Promise<RunOutcome> {
  return new StepEngine(host).run(handler, input);
}

type StepBody = (attempt: StepAttempt) => unknown;

/**
 * Which use of its name a step is, counted from 1. Always 1 today: a name used twice in one run is a replay
 * divergence (see enter()). The key format carries it so that counting occurrences later changes no existing key.
 */
const STEP_OCCURRENCE = 1;

const INPUT_METHODS = new Set(["elicitation/create", "sampling/createMessage", "roots/list"]);

class StepEngine {
  private readonly records: Map<string, StepRecord>;
  /** Journaled names this run has not reached yet; while any remain, the handler is replaying. */
  private readonly unvisited: Set<string>;
  private readonly visited = new Set<string>();
  private inFlight = 0;
  private parked = 0;
  private wakeNow = false;
  /** Set once this run journaled new progress; a handoff only ever happens after some. */
  private progressed = false;
  private settle!: (outcome: RunOutcome) => void;
  private settled = false;
  private readonly cancelWatch = new AbortController();
  private readonly keys: StepKeys;

  constructor(private readonly host: EngineHost) {
    this.records = host.journal.load();
    this.keys = new StepKeys(host.stepKeySalt);
    this.unvisited = new Set(this.records.keys());
  }

  run<I>(handler: (input: I, step: Step) => Promise<unknown>, input: I): Promise<RunOutcome> {
    const outcome = new Promise<RunOutcome>((resolve) => (this.settle = resolve));
    // A cancel aborts every controller of the run, this one included: it ends the run at once, whatever the
    // handler or a step body is awaiting, so the runner is free for its next alarm (TTL, purge).
    this.cancelWatch.signal.addEventListener("abort", () => {
      if (this.host.isCancelled()) this.finish({ kind: "cancelled" });
    });
    this.host.controllers.add(this.cancelWatch);
    const step = this.stepApi();
    Promise.resolve()
      .then(() => handler(input, step))
      .then(
        (value) => this.finish({ kind: "returned", value }),
        (error: unknown) => this.finish({ kind: "threw", error }),
      );
    return outcome;
  }

  private finish(outcome: RunOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.host.controllers.delete(this.cancelWatch);
    this.settle(this.host.isCancelled() ? { kind: "cancelled" } : outcome);
  }

  /** Parks the caller for good; the run suspends once no step body is in flight. */
  private park(): Promise<never> {
    this.parked++;
    this.checkQuiescent();
    return new Promise<never>(() => {});
  }

  private checkQuiescent(): void {
    // A macrotask later, so sibling steps started in the same tick (Promise.all) register first.
    setTimeout(() => {
      if (this.parked > 0 && this.inFlight === 0) this.finish({ kind: "suspended", immediate: this.wakeNow });
    }, 0);
  }

  private halt(outcome?: RunOutcome): Promise<never> {
    if (outcome) this.finish(outcome);
    return new Promise<never>(() => {});
  }

  /**
   * Claims a step name for this run. Returns its journal record ("new" when there is none), or "halt" when the
   * run must not go on (cancelled, diverged, or handing off before the alarm's wall-clock limit).
   */
  private enter(name: string, kind: StepKind): StepRecord | "new" | "halt" | "handoff" {
    if (this.settled) return "halt";
    if (this.host.isCancelled()) {
      this.finish({ kind: "cancelled" });
      return "halt";
    }
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_LENGTH) {
      throw new TypeError(`a step name must be a non-empty string of at most ${MAX_STEP_NAME_LENGTH} characters`);
    }
    if (this.visited.has(name)) {
      this.finish({ kind: "diverged", error: new ReplayDivergenceError(name, "the name is used twice") });
      return "halt";
    }
    const record = this.records.get(name);
    if (!record && this.progressed && this.host.now() >= this.host.handoffAt) {
      this.wakeNow = true;
      return "handoff";
    }
    this.visited.add(name);
    this.unvisited.delete(name);
    if (record && record.kind !== kind) {
      const detail = `the journal holds a "${record.kind}" step where the code now asks for "${kind}"`;
      this.finish({ kind: "diverged", error: new ReplayDivergenceError(name, detail) });
      return "halt";
    }
    return record ?? "new";
  }

  private write(record: StepRecord): void {
    this.progressed = true;
    this.records.set(record.name, record);
    this.host.journal.write(record, this.host.now());
  }

  private async doStep(name: string, config: StepConfig | undefined, fn: StepBody): Promise<unknown> {
    const policy = resolveStepConfig(config);
    const entry = this.enter(name, "do");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    if (entry !== "new") {
      if (entry.state === "done") return this.readResult(entry.result);
      if (entry.state === "failed") throw stepFailure(entry);
      if (entry.state === "waiting" && (entry.wakeAt ?? 0) > this.host.now()) return this.park();
    }
    // New, due for a retry, or interrupted mid-attempt (state "running" after an eviction or crash).
    const attempt = (entry === "new" ? 0 : entry.attempts) + 1;
    // The key journaled at the first attempt is the key for good: a later format change never re-keys a step.
    let idempotencyKey = entry === "new" ? null : (entry.idempotencyKey ?? null);
    if (idempotencyKey === null) {
      // Counted in flight while the key is derived, so that the run cannot suspend under this step.
      this.inFlight++;
      try {
        idempotencyKey = await this.keys.derive(name, STEP_OCCURRENCE);
      } finally {
        this.inFlight--;
      }
      if (this.settled || this.host.isCancelled()) return this.halt({ kind: "cancelled" });
    }
    const base: StepRecord = {
      name,
      kind: "do",
      state: "running",
      attempts: attempt,
      result: null,
      error: null,
      wakeAt: null,
      request: null,
      idempotencyKey,
    };
    if (attempt > policy.limit + 1) {
      const error = { name: "StepInterruptedError", message: `step "${name}" was interrupted on its last attempt` };
      this.write({ ...base, attempts: attempt - 1, state: "failed", error: JSON.stringify(error) });
      throw stepFailure(this.records.get(name)!);
    }
    this.write(base);
    this.inFlight++;
    const startedAt = this.host.now();
    this.host.event("step_started", { step: name, attempt });
    try {
      const limit = this.host.spill ? MAX_SPILLED_RESULT_BYTES : MAX_STEP_RESULT_BYTES;
      const text = serializeResult(
        name,
        await this.attempt(name, fn, attempt, idempotencyKey, policy.timeoutMs),
        limit,
      );
      const stored = text !== null && utf8Length(text) > MAX_STEP_RESULT_BYTES ? await this.spill(name, text) : text;
      // Cancelled while the result was being spilled: the run is over, and a cancelled task journals nothing more.
      if (this.host.isCancelled()) return this.halt({ kind: "cancelled" });
      this.write({ ...base, state: "done", result: stored });
      this.host.event("step_finished", { step: name, attempt, durationMs: this.host.now() - startedAt });
      return parseJson(text);
    } catch (error) {
      // Aborted by a cancel (or the run already ended): end the run as cancelled if it is not over yet.
      if (this.settled || this.host.isCancelled()) return this.halt({ kind: "cancelled" });
      const failed = describeError(error);
      const durationMs = this.host.now() - startedAt;
      if (error instanceof NonRetryableError || attempt > policy.limit) {
        this.write({ ...base, state: "failed", error: JSON.stringify(failed) });
        this.host.event("step_failed", { step: name, attempt, durationMs, error: failed.message, cause: failed.name });
        throw stepFailure(this.records.get(name)!);
      }
      const delayMs = retryDelayMs(policy, attempt);
      this.write({ ...base, state: "waiting", error: JSON.stringify(failed), wakeAt: this.host.now() + delayMs });
      this.host.event("step_retry_scheduled", { step: name, attempt, durationMs, delayMs, error: failed.message });
      return this.park();
    } finally {
      this.inFlight--;
      if (this.parked > 0) this.checkQuiescent();
    }
  }

  private async spill(name: string, text: string): Promise<string> {
    const key = await this.host.spill!.put(name, text);
    this.host.event("step_result_spilled", { step: name, bytes: utf8Length(text) });
    return `${SPILLED}${key}`;
  }

  private async readResult(stored: string | null): Promise<unknown> {
    if (stored?.startsWith(SPILLED) && this.host.spill) {
      return parseJson(await this.host.spill.get(stored.slice(SPILLED.length)));
    }
    return parseJson(stored);
  }

  private async attempt(
    name: string,
    fn: StepBody,
    attempt: number,
    idempotencyKey: string,
    timeoutMs: number,
  ): Promise<unknown> {
    const controller = new AbortController();
    this.host.controllers.add(controller);
    const timer = setTimeout(() => controller.abort(new StepTimeoutError(name, timeoutMs)), timeoutMs);
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason));
    });
    try {
      const body = Promise.resolve().then(() => fn({ attempt, signal: controller.signal, idempotencyKey }));
      return await Promise.race([body, aborted]);
    } finally {
      clearTimeout(timer);
      this.host.controllers.delete(controller);
    }
  }

  private async sleepStep(name: string, wakeAt: () => number): Promise<void> {
    const entry = this.enter(name, "sleep");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    if (entry !== "new" && entry.state === "done") return;
    const due = entry === "new" ? wakeAt() : (entry.wakeAt ?? 0);
    if (!Number.isFinite(due)) throw new RangeError(`step "${name}": cannot sleep until ${due}`);
    const record: StepRecord = {
      name,
      kind: "sleep",
      state: "waiting",
      attempts: 0,
      result: null,
      error: null,
      wakeAt: due,
      request: null,
    };
    if (due <= this.host.now()) {
      this.write({ ...record, state: "done" });
      if (entry !== "new") this.host.event("sleep_finished", { step: name });
      return;
    }
    if (entry === "new") {
      this.write(record);
      this.host.event("sleep_started", { step: name, wakeAt: new Date(due).toISOString() });
    }
    return this.park();
  }

  private async inputStep(name: string, request: InputRequest, options: InputOptions | undefined): Promise<unknown> {
    if (!INPUT_METHODS.has(request?.method)) {
      throw new TypeError(`step "${name}": input method must be one of ${[...INPUT_METHODS].join(", ")}`);
    }
    const timeoutMs = options?.timeout === undefined ? undefined : toMilliseconds(options.timeout);
    const entry = this.enter(name, "input");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    if (entry === "new") {
      const missing = this.host.inputUnavailable?.(request) ?? null;
      if (missing !== null) {
        // Journaled as failed, never as waiting: the task is not `input_required` for a question nobody can answer.
        const unavailable = new InputUnavailableError(name, request.method, missing);
        this.write({
          name,
          kind: "input",
          state: "failed",
          attempts: 0,
          result: null,
          error: JSON.stringify({ ...describeError(unavailable), capability: missing }),
          wakeAt: null,
          request: JSON.stringify(request),
        });
        this.host.event("input_unavailable", { step: name, method: request.method, capability: missing });
        throw unavailable;
      }
      const wakeAt = timeoutMs === undefined ? null : this.host.now() + timeoutMs;
      this.write({
        name,
        kind: "input",
        state: "waiting",
        attempts: 0,
        result: null,
        error: null,
        wakeAt,
        request: JSON.stringify(request),
      });
      this.host.event("input_requested", { step: name, method: request.method });
      this.host.inputRequested();
      return this.park();
    }
    if (entry.state === "done") return parseJson(entry.result);
    if (entry.state === "failed") throw inputFailure(entry);
    if (entry.wakeAt !== null && entry.wakeAt <= this.host.now()) {
      // The timeout is journaled first; an answer arriving later finds the key no longer outstanding.
      const timedOut = new InputTimeoutError(name);
      this.write({ ...entry, state: "failed", error: JSON.stringify(describeError(timedOut)) });
      this.host.event("input_timed_out", { step: name });
      throw timedOut;
    }
    return this.park();
  }

  private stepApi(): Step {
    return {
      do: ((name: string, configOrFn: StepConfig | StepBody, maybeFn?: StepBody) =>
        typeof configOrFn === "function"
          ? this.doStep(name, undefined, configOrFn)
          : this.doStep(name, configOrFn, maybeFn as StepBody)) as Step["do"],
      sleep: (name, duration: Duration) => this.sleepStep(name, () => this.host.now() + toMilliseconds(duration)),
      sleepUntil: (name, until) => this.sleepStep(name, () => +until),
      elicit: (name, request: ElicitRequest, options) =>
        this.inputStep(
          name,
          { method: "elicitation/create", params: { mode: "form", ...request } },
          options,
        ) as Promise<ElicitResult>,
      requestInput: (name, request, options) => this.inputStep(name, request, options),
      files: this.host.files
        ? this.host.files((name, fn) => this.doStep(name, undefined, fn) as Promise<FileRef>)
        : filesDisabled,
      status: async (message, options) => {
        // Replays stay silent: only a run that has passed every journaled step reports status.
        if (this.settled || this.unvisited.size > 0) return;
        this.host.setStatus(String(message), options?.progress);
      },
    };
  }
}

function parseJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}

const filesDisabled: TaskFiles = {
  open: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
  write: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
};

/** UTF-8 size of `text`: exact above a third of the journal cap; below it, a count that is also under the cap. */
function utf8Length(text: string): number {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: only long texts need the exact count.
  return text.length * 3 <= MAX_STEP_RESULT_BYTES ? text.length : new TextEncoder().encode(text).byteLength;
}

/** The JSON text a step result is journaled as; StepResultError when it is not JSON or over `limit` bytes. */
export function serializeResult(step: string, value: unknown, limit: number): string | null {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value as Serializable);
  } catch (error) {
    throw new StepResultError(`step "${step}" returned a value that is not JSON: ${describeError(error).message}`);
  }
  if (text === undefined) throw new StepResultError(`step "${step}" returned a value that is not JSON`);
  const bytes = utf8Length(text);
  if (bytes > limit) {
    throw new StepResultError(
      `step "${step}" returned ${bytes} bytes of JSON; a step result may be at most ${limit} bytes`,
    );
  }
  return text;
}

/** What a failed input step throws again on replay: the timeout, or the question its client could not answer. */
function inputFailure(record: StepRecord): Error {
  const error = record.error ? (JSON.parse(record.error) as { name?: string; capability?: string }) : {};
  if (error.name === "InputUnavailableError") {
    const method = record.request ? (JSON.parse(record.request) as InputRequest).method : "unknown";
    return new InputUnavailableError(record.name, method, error.capability ?? "unknown");
  }
  return new InputTimeoutError(record.name);
}

function stepFailure(record: StepRecord): StepFailedError {
  const cause = record.error
    ? (JSON.parse(record.error) as { name: string; message: string })
    : { name: "Error", message: "step failed" };
  return new StepFailedError(record.name, record.attempts, cause.name, cause.message);
}
