import { describeError, InputTimeoutError, InputUnavailableError, ReplayDivergenceError } from "../errors/errors.js";
import { EventTimeoutError } from "../errors/event-errors.js";
import {
  MAX_EVENT_TYPE_LENGTH,
  MAX_SPILLED_RESULT_BYTES,
  MAX_STEP_NAME_LENGTH,
  MAX_STEP_RESULT_BYTES,
  REPLAY_QUIET_MS,
  RUN_YIELD_MS,
  RUN_YIELD_SHARED_GAP_MS,
  RUN_YIELD_SHARED_HOLD_MS,
  RUN_YIELD_SHARED_MS,
  RUN_YIELD_STEPS,
} from "../limits.js";
import type { TaskEventSink } from "../task-events.js";
import { toMilliseconds, type Duration } from "./duration.js";
import {
  DERIVED_KEY,
  PATCH_OCCURRENCE,
  parseStepLabel,
  stepLabel,
  type FirstAttempt,
  type StepJournal,
  type StepKind,
  type StepRecord,
} from "./journal.js";
import { resolveStepConfig, retryDelayMs, type StepConfig } from "./retry-policy.js";
import { LiveAttempt, LiveAttempts, type StepBody } from "./live-attempt.js";
import { StepKeys } from "./step-keys.js";
import {
  inputFailure,
  isNonRetryable,
  parseJson,
  sameAsJson,
  serializeResult,
  spilledKey,
  spillResult,
  stepFailure,
  utf8Length,
  type ResultSpill,
} from "./step-results.js";
import type {
  ElicitRequest,
  ElicitResult,
  FileRef,
  FileStep,
  InputOptions,
  InputRequest,
  Step,
  TaskEvent,
  TaskFiles,
  WaitForEventOptions,
  WebhookUrlOptions,
} from "./types.js";

// Imported from here by the runner and files/ (the engine's public face inside the library).
export { serializeResult, type ResultSpill } from "./step-results.js";

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
  /**
   * Whether the sink wants `step_started` / `step_finished` (the "all" level): when false the engine does not build
   * them, one object each per step. Absent: it does.
   */
  stepEvents?: boolean;
  /** Builds `step.files` (given how to journal an artifact write as a step), when the deployment has files. */
  files?: (doStep: FileStep) => TaskFiles;
  /** Spills results over MAX_STEP_RESULT_BYTES to R2, when the deployment has files. */
  spill?: ResultSpill;
  /** The task's event inbox and webhook URLs (`step.waitForEvent`, `step.webhookUrl`). */
  events?: EventHost;
}

/** An event as the journal and the inbox keep it: JSON, its time as ms since epoch. */
export interface StoredEvent {
  type: string;
  /** JSON text of the payload. */
  payload: string;
  sentAt: number;
}

/** What event steps need from the TaskRunner: its inbox of buffered events, and the signer of webhook URLs. */
export interface EventHost {
  /**
   * Removes and returns the oldest buffered event of `type`, or null. Synchronous on purpose: the engine journals
   * the step in the same turn, so the take and the journal write commit together.
   */
  take(type: string): StoredEvent | null;
  /** Step `label` now waits for `type` (the runner names the wait in the status message). */
  waiting(label: string, type: string): void;
  /** Mints the signed URL of webhook `hookId` of this task. */
  webhookUrl(hook: { hookId: string; type: string; expiresAt: number }): Promise<string>;
}

/** Default timeout of `step.waitForEvent` and lifetime of a `step.webhookUrl`, as in Cloudflare Workflows. */
const DEFAULT_EVENT_WAIT_MS = 24 * 60 * 60_000;

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

/** A step's key in the engine's maps: occurrence first, so that no name can make two keys meet. */
function keyOf(name: string, occurrence: number): string {
  return `${occurrence}:${name}`;
}

/** A new step or patch marker waiting for the replay to catch up (see StepEngine.atFrontier). */
interface Gate {
  kind: "step" | "patch";
  label: string;
  resolve: (atFrontier: boolean) => void;
}

/** A step this run has claimed: which use of its name it is, and its journal row unless it is new. */
interface Entry {
  name: string;
  occurrence: number;
  /** Its key in `records` (keyOf), made only when the journal has rows: a new task's steps need none. */
  key: string | undefined;
  /** How the step is named to people (stepLabel). */
  label: string;
  record: StepRecord | undefined;
}

const INPUT_METHODS = new Set(["elicitation/create", "sampling/createMessage", "roots/list"]);

class StepEngine {
  /** The journal by step key (keyOf). */
  private readonly records = new Map<string, StepRecord>();
  /** Journaled steps (keys) this run has not reached yet; while any remain, the handler is replaying. */
  private readonly unvisited = new Set<string>();
  /** Uses of each name so far in this run: the next use of `name` is occurrence `uses.get(name) + 1`. */
  private readonly uses = new Map<string, number>();
  private inFlight = 0;
  private parked = 0;
  private wakeNow = false;
  /** Set once this run journaled new progress; a handoff only ever happens after some. */
  private progressed = false;
  private settle!: (outcome: RunOutcome) => void;
  private settled = false;
  private readonly cancelWatch = new AbortController();
  private readonly stepEvents: boolean;
  /** Derives the steps' idempotency keys (read by LiveAttempt when a body asks for its key). */
  readonly keys: StepKeys;
  /** New steps and patch markers reached while journaled steps remain unvisited (see atFrontier). */
  private readonly gated: Gate[] = [];
  /** Visits of journaled steps so far: the replay's progress, which the frontier check watches. */
  private visits = 0;
  private visitsAtCheck = -1;
  private lastProgressAt = 0;
  /** Journaled results being read back from R2: replay work the frontier check waits for. */
  private replayReads = 0;
  private frontierTimer = false;
  /** `step.patched` answers of this run, by patch id: asked twice, a patch answers the same. */
  private readonly patches = new Map<string, Promise<boolean>>();
  /** New steps since the run last yielded to the event loop, and when it did (see yieldIfDue). */
  private stepsSinceYield = 0;
  private lastYieldAt: number;
  /** Until when the run yields every RUN_YIELD_SHARED_MS rather than RUN_YIELD_MS (others need the thread). */
  private sharedUntil = 0;
  /** Step attempts under way, and the one timer that times them out. */
  private readonly live: LiveAttempts;
  /** The yield under way, shared by steps started together (Promise.all). */
  private yielding: Promise<void> | undefined;

  constructor(readonly host: EngineHost) {
    // The engine's clock is the host's (tests drive it): the first chunk is timed from it too.
    this.lastYieldAt = host.now();
    this.live = new LiveAttempts(host);
    for (const record of host.journal.load()) {
      const key = keyOf(record.name, record.occurrence);
      this.records.set(key, record);
      // What the replay rule holds the handler to: steps a run reached. Not patch markers (they are not steps), and
      // not a `do` row with a null idempotency_key: a run writes a key or DERIVED_KEY with every first attempt, so
      // such a row was written by the testing seam's inject ahead of the handler (docs/testing.md), and the handler
      // may still be on its way.
      if (record.kind !== "patch" && !(record.kind === "do" && record.idempotencyKey == null)) this.unvisited.add(key);
    }
    this.keys = new StepKeys(host.stepKeySalt);
    this.stepEvents = host.stepEvents !== false;
  }

  run<I>(handler: (input: I, step: Step) => Promise<unknown>, input: I): Promise<RunOutcome> {
    const outcome = new Promise<RunOutcome>((resolve) => (this.settle = resolve));
    // A cancel aborts every controller of the run, this one included: it ends the run at once, whatever the
    // handler or a step body is awaiting, so the runner is free for its next alarm (TTL, purge).
    this.cancelWatch.signal.addEventListener("abort", () => {
      if (!this.host.isCancelled()) return;
      // Attempts whose body never asked for a signal have no controller of their own to abort: end them here.
      this.live.abortAll(this.cancelWatch.signal.reason);
      this.finish({ kind: "cancelled" });
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
    // Attempts still live (a cancel, or a handler that returned without awaiting a step) end with the run.
    this.live.stopSweepIfIdle();
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
   * Claims the next use of a step name for this run (occurrences are assigned in call order). Returns the entry
   * (its journal record, undefined when new), or "halt" when the run must not go on (cancelled, diverged), or
   * "handoff" before a new step once the alarm's wall-clock budget is spent.
   */
  private enter(name: string, kind: StepKind, now?: number): Entry | "halt" | "handoff" {
    if (this.settled) return "halt";
    if (this.host.isCancelled()) {
      this.finish({ kind: "cancelled" });
      return "halt";
    }
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_LENGTH) {
      throw new TypeError(`a step name must be a non-empty string of at most ${MAX_STEP_NAME_LENGTH} characters`);
    }
    const occurrence = (this.uses.get(name) ?? 0) + 1;
    // A new task's journal is empty, and a new step's record is not kept (doStep): nothing to look up, no key to make.
    const key = this.records.size === 0 ? undefined : keyOf(name, occurrence);
    const record = key === undefined ? undefined : this.records.get(key);
    if (!record && this.progressed && (now ?? this.host.now()) >= this.host.handoffAt) {
      this.wakeNow = true;
      return "handoff";
    }
    this.uses.set(name, occurrence);
    if (record) this.visit(key!);
    if (record && record.kind !== kind) {
      const detail = `the journal holds a "${record.kind}" step where the code now asks for "${kind}"`;
      this.finish({ kind: "diverged", error: new ReplayDivergenceError(stepLabel(name, occurrence), detail) });
      return "halt";
    }
    return { name, occurrence, key, label: stepLabel(name, occurrence), record };
  }

  private visit(key: string): void {
    if (!this.unvisited.delete(key)) return;
    this.visits++;
    // The replay has caught up: every step waiting at the frontier may go on.
    if (this.unvisited.size === 0) this.releaseGates(true);
  }

  /**
   * Whether this run may go on from a new step (or journal a patch marker) at this point. While journaled steps
   * remain unvisited, the run is still replaying: the new step waits until the replay catches up (true), or until
   * the handler is quiescent with journaled steps still never reached (false): no visit for REPLAY_QUIET_MS and
   * no journaled result being read. A parallel branch replaying its journaled steps thus never counts as a
   * divergence; a renamed, removed or reordered step does. Step bodies in flight do not hold the decision up: a
   * step that is running was reached, and nothing journaled can come after it in its own branch.
   */
  private atFrontier(kind: Gate["kind"], label: string): boolean | Promise<boolean> {
    if (this.unvisited.size === 0) return true;
    return new Promise<boolean>((resolve) => {
      // Counted in flight, so that a sibling's park cannot suspend the run before this is decided.
      this.inFlight++;
      // The quiet window runs from the first step to wait, or from the last progress a check saw.
      if (this.gated.length === 0) this.lastProgressAt = Date.now();
      this.gated.push({ kind, label, resolve });
      this.scheduleFrontierCheck();
    });
  }

  private releaseGates(atFrontier: boolean, kind?: Gate["kind"]): void {
    const released = this.gated.filter((gate) => kind === undefined || gate.kind === kind);
    if (released.length === 0) return;
    this.gated.splice(0, this.gated.length, ...this.gated.filter((gate) => !released.includes(gate)));
    this.inFlight -= released.length;
    for (const gate of released) gate.resolve(atFrontier);
    if (this.parked > 0) this.checkQuiescent();
  }

  private scheduleFrontierCheck(delayMs = 0): void {
    if (this.frontierTimer) return;
    this.frontierTimer = true;
    setTimeout(() => {
      this.frontierTimer = false;
      this.checkFrontier();
    }, delayMs);
  }

  private checkFrontier(): void {
    if (this.gated.length === 0) return;
    if (this.settled) return this.releaseGates(false);
    // Still replaying: look again a macrotask later (the replay itself runs in microtasks).
    if (this.visits !== this.visitsAtCheck || this.replayReads > 0) {
      this.visitsAtCheck = this.visits;
      this.lastProgressAt = Date.now();
      return this.scheduleFrontierCheck();
    }
    const quietFor = Date.now() - this.lastProgressAt;
    if (quietFor < REPLAY_QUIET_MS) return this.scheduleFrontierCheck(REPLAY_QUIET_MS - quietFor);
    // Quiescent, still behind the journal. Patch markers answer first (false: this task journaled past them on
    // the old path), since the old path may lead their branches to the journaled steps still unvisited.
    if (this.gated.some((gate) => gate.kind === "patch")) {
      this.releaseGates(false, "patch");
      return this.scheduleFrontierCheck();
    }
    const step = this.gated[0]!.label;
    const [unreached] = this.unvisited;
    const old = this.records.get(unreached!)!;
    const oldLabel = stepLabel(old.name, old.occurrence);
    const detail =
      `the code goes on to step "${step}", which the journal does not have, while the journal's ` +
      `"${old.kind}" step "${oldLabel}" (${old.state}) was never reached: was it renamed, removed or reordered?`;
    this.finish({ kind: "diverged", error: new ReplayDivergenceError(step, detail, oldLabel) });
    this.releaseGates(false);
  }

  /** Journals `record`. */
  private write(record: StepRecord): void {
    this.progressed = true;
    this.records.set(keyOf(record.name, record.occurrence), record);
    this.host.journal.write(record, this.host.now());
  }

  private async doStep(name: string, config: StepConfig | undefined, fn: StepBody): Promise<unknown> {
    const policy = resolveStepConfig(config);
    // One clock read for the step's start (the handoff check, the yield check, startedAt), read again only after an
    // await below: the host's clock is a call into the runtime.
    let at = this.host.now();
    const entry = this.enter(name, "do", at);
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    const { occurrence, record } = entry;
    const label = entry.label;
    if (!record && this.unvisited.size > 0) {
      if (!(await this.atFrontier("step", label))) return this.halt();
      at = this.host.now();
    }
    if (!record && this.yieldDue(at)) {
      if (!(await this.yieldToEventLoop())) return this.halt();
      at = this.host.now();
    }
    if (record) {
      if (record.state === "done") return this.readResult(record.result);
      if (record.state === "failed") throw stepFailure(record);
      if (record.state === "waiting" && (record.wakeAt ?? 0) > this.host.now()) return this.park();
    }
    // New, due for a retry, or interrupted mid-attempt (state "running" after an eviction or crash).
    const attempt = (record?.attempts ?? 0) + 1;
    const base: StepRecord = {
      name,
      occurrence,
      kind: "do",
      state: "running",
      attempts: attempt,
      result: null,
      error: null,
      wakeAt: null,
      request: null,
      // A key journaled when keys were still stored stays the step's key; otherwise it is derived when read.
      idempotencyKey: record?.idempotencyKey || DERIVED_KEY,
    };
    if (attempt > policy.limit + 1) {
      const error = {
        name: "StepInterruptedError",
        message: `step "${label}" was interrupted on its last attempt`,
        nonRetryable: false,
      };
      const failed: StepRecord = { ...base, attempts: attempt - 1, state: "failed", error: JSON.stringify(error) };
      this.write(failed);
      throw stepFailure(failed);
    }
    const startedAt = at;
    // A new step's first attempt is held by the journal and written with its result, or before anything could
    // observe it (StepJournal.beginFirstAttempt); a retry or resumed attempt is written at once. A new step's
    // record is not kept in `records`: a key is claimed once per run, so nothing would look it up.
    let first: FirstAttempt | undefined;
    this.progressed = true;
    if (record) {
      this.records.set(entry.key!, base);
      this.host.journal.write(base, startedAt);
    } else first = this.host.journal.beginFirstAttempt(base, startedAt);
    this.inFlight++;
    if (this.stepEvents) this.host.event("step_started", { step: label, attempt });
    const live = new LiveAttempt(
      this,
      entry,
      attempt,
      base.idempotencyKey || null,
      startedAt + policy.timeoutMs,
      policy.timeoutMs,
    );
    try {
      const limit = this.host.spill ? MAX_SPILLED_RESULT_BYTES : MAX_STEP_RESULT_BYTES;
      const value = await this.live.start(live, fn);
      const text = serializeResult(label, value, limit);
      const stored =
        text !== null && utf8Length(text) > MAX_STEP_RESULT_BYTES
          ? await spillResult(this.host.spill!, this.host.event, label, text)
          : text;
      // Cancelled while the result was being spilled: the run is over, and a cancelled task journals nothing more.
      if (this.host.isCancelled()) return this.halt({ kind: "cancelled" });
      if (first) {
        // One clock read for the held row's end and the event's duration.
        const endedAt = this.host.now();
        this.host.journal.finishFirstAttempt(first, stored, endedAt);
        if (this.stepEvents)
          this.host.event("step_finished", { step: label, attempt, durationMs: endedAt - startedAt });
      } else {
        this.write({ ...base, state: "done", result: stored });
        if (this.stepEvents) {
          this.host.event("step_finished", { step: label, attempt, durationMs: this.host.now() - startedAt });
        }
      }
      return sameAsJson(value) ? value : parseJson(text);
    } catch (error) {
      // Aborted by a cancel (or the run already ended): end the run as cancelled if it is not over yet.
      if (this.settled || this.host.isCancelled()) return this.halt({ kind: "cancelled" });
      const failed = describeError(error);
      const durationMs = this.host.now() - startedAt;
      const permanent = isNonRetryable(error);
      if (permanent || attempt > policy.limit) {
        // Journaled with the failure: what makes it permanent is the class, not the name it carries.
        const final: StepRecord = {
          ...base,
          state: "failed",
          error: JSON.stringify({ ...failed, nonRetryable: permanent }),
        };
        this.write(final);
        this.host.event("step_failed", { step: label, attempt, durationMs, error: failed.message, cause: failed.name });
        throw stepFailure(final);
      }
      const delayMs = retryDelayMs(policy, attempt);
      this.write({ ...base, state: "waiting", error: JSON.stringify(failed), wakeAt: this.host.now() + delayMs });
      this.host.event("step_retry_scheduled", { step: label, attempt, durationMs, delayMs, error: failed.message });
      return this.park();
    } finally {
      this.live.end(live);
      this.inFlight--;
      if (this.parked > 0) this.checkQuiescent();
    }
  }

  /** Whether the run has gone RUN_YIELD_STEPS new steps or its chunk's time without yielding (counts this step). */
  private yieldDue(now: number): boolean {
    const chunkMs = now < this.sharedUntil ? RUN_YIELD_SHARED_MS : RUN_YIELD_MS;
    return ++this.stepsSinceYield >= RUN_YIELD_STEPS || now - this.lastYieldAt >= chunkMs;
  }

  /**
   * Lets the object's event loop run before the next new step: the writes so far commit, and requests queued
   * meanwhile (tasks/get, cancel) are answered. Without it a handler whose steps never do I/O holds the object for
   * its whole run. False when the run must not go on (cancelled meanwhile).
   */
  private async yieldToEventLoop(): Promise<boolean> {
    if (!this.yielding) {
      // Counted in flight, so that a sibling's park cannot suspend the run during the yield.
      this.inFlight++;
      const gaveWayAt = this.host.now();
      this.yielding = new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
        this.inFlight--;
        this.yielding = undefined;
        this.stepsSinceYield = 0;
        this.lastYieldAt = this.host.now();
        // A yield that took longer than a bare timer turn and the commit means other work ran on this thread (a
        // request on its way in or out): for a while the run goes in short chunks, so that each hop of the next
        // requests waits less behind it.
        if (this.lastYieldAt - gaveWayAt >= RUN_YIELD_SHARED_GAP_MS) {
          this.sharedUntil = this.lastYieldAt + RUN_YIELD_SHARED_HOLD_MS;
        }
        if (this.parked > 0) this.checkQuiescent();
      });
    }
    await this.yielding;
    if (this.settled) return false;
    if (this.host.isCancelled()) {
      this.finish({ kind: "cancelled" });
      return false;
    }
    return true;
  }

  private async readResult(stored: string | null): Promise<unknown> {
    const key = spilledKey(stored);
    if (key !== null && this.host.spill) {
      // Replay work: the frontier check waits for it (atFrontier).
      this.replayReads++;
      try {
        return parseJson(await this.host.spill.get(key));
      } finally {
        this.replayReads--;
      }
    }
    return parseJson(stored);
  }

  private async sleepStep(name: string, wakeAt: () => number): Promise<void> {
    const entry = this.enter(name, "sleep");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    const { occurrence, record: journaled } = entry;
    const label = stepLabel(name, occurrence);
    if (!journaled && this.unvisited.size > 0 && !(await this.atFrontier("step", label))) return this.halt();
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
    if (due <= this.host.now()) {
      this.write({ ...record, state: "done" });
      if (journaled) this.host.event("sleep_finished", { step: label });
      return;
    }
    if (!journaled) {
      this.write(record);
      this.host.event("sleep_started", { step: label, wakeAt: new Date(due).toISOString() });
    }
    return this.park();
  }

  private async inputStep(name: string, request: InputRequest, options: InputOptions | undefined): Promise<unknown> {
    if (!INPUT_METHODS.has(request?.method)) {
      throw new TypeError(`step "${name}": input method must be one of ${[...INPUT_METHODS].join(", ")}`);
    }
    if (typeof name === "string" && parseStepLabel(name).name !== name) {
      // `confirm#2` is the key of the second use of `confirm`: an input step of that name would share its key.
      throw new TypeError(`step "${name}": an input step's name may not end in "#" and a number`);
    }
    const timeoutMs = options?.timeout === undefined ? undefined : toMilliseconds(options.timeout);
    const entry = this.enter(name, "input");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    const { occurrence, record } = entry;
    // The request's key on the wire: `confirm`, then `confirm#2`, … (unique per task, as the spec requires).
    const label = stepLabel(name, occurrence);
    if (!record && this.unvisited.size > 0 && !(await this.atFrontier("step", label))) return this.halt();
    if (!record) {
      const missing = this.host.inputUnavailable?.(request) ?? null;
      if (missing !== null) {
        // Journaled as failed, never as waiting: the task is not `input_required` for a question nobody can answer.
        const unavailable = new InputUnavailableError(label, request.method, missing);
        this.write({
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
        this.host.event("input_unavailable", { step: label, method: request.method, capability: missing });
        throw unavailable;
      }
      const wakeAt = timeoutMs === undefined ? null : this.host.now() + timeoutMs;
      this.write({
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
      this.host.event("input_requested", { step: label, method: request.method });
      this.host.inputRequested();
      return this.park();
    }
    if (record.state === "done") return parseJson(record.result);
    if (record.state === "failed") throw inputFailure(record, label);
    if (record.wakeAt !== null && record.wakeAt <= this.host.now()) {
      // The timeout is journaled first; an answer arriving later finds the key no longer outstanding.
      const timedOut = new InputTimeoutError(label);
      this.write({ ...record, state: "failed", error: JSON.stringify(describeError(timedOut)) });
      this.host.event("input_timed_out", { step: label });
      throw timedOut;
    }
    return this.park();
  }

  /**
   * `step.waitForEvent`: journaled as kind "event". New: takes the oldest buffered event of its type at once, else
   * journals a wait (state "waiting", `request` = its type, `wakeAt` = its deadline) that a delivery completes in the
   * journal (StepJournal.deliverEvent). Replays return the journaled event, or rethrow the timeout.
   */
  private async eventStep(name: string, options: WaitForEventOptions): Promise<TaskEvent> {
    const type = eventType(name, options?.type);
    const timeoutMs = options.timeout === undefined ? DEFAULT_EVENT_WAIT_MS : toMilliseconds(options.timeout);
    const events = this.eventHost(name);
    const entry = this.enter(name, "event");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    const { occurrence, record } = entry;
    const label = stepLabel(name, occurrence);
    if (!record && this.unvisited.size > 0 && !(await this.atFrontier("step", label))) return this.halt();
    if (!record) {
      const base: StepRecord = {
        name,
        occurrence,
        kind: "event",
        state: "waiting",
        attempts: 0,
        result: null,
        error: null,
        wakeAt: this.host.now() + timeoutMs,
        request: JSON.stringify({ type }),
      };
      // Taken and journaled in one synchronous turn: they commit together, so an event is never lost or taken twice.
      const buffered = events.take(type);
      if (buffered) {
        this.write({ ...base, state: "done", wakeAt: null, result: JSON.stringify(buffered) });
        this.host.event("event_received", { step: label, type, buffered: true });
        return toTaskEvent(buffered);
      }
      this.write(base);
      events.waiting(label, type);
      this.host.event("event_waiting", { step: label, type, timeoutMs });
      return this.park();
    }
    if (record.state === "done") return toTaskEvent(JSON.parse(record.result ?? "null") as StoredEvent);
    const timedOut = new EventTimeoutError(label, type);
    if (record.state === "failed") throw timedOut;
    if (record.wakeAt !== null && record.wakeAt <= this.host.now()) {
      // The timeout is journaled first: an event sent later is buffered (docs/how-it-works.md), never given to this wait.
      this.write({ ...record, state: "failed", error: JSON.stringify(describeError(timedOut)) });
      this.host.event("event_timed_out", { step: label, type });
      throw timedOut;
    }
    return this.park();
  }

  /**
   * `step.webhookUrl`: journaled as kind "webhook" with the URL as its result, so a replay returns the same URL. The
   * hook id is random; a run interrupted before the journal write mints another, but handed out none.
   */
  private async webhookStep(name: string, options: WebhookUrlOptions): Promise<string> {
    const type = eventType(name, options?.type);
    const lifetimeMs = options.expiresIn === undefined ? DEFAULT_EVENT_WAIT_MS : toMilliseconds(options.expiresIn);
    const events = this.eventHost(name);
    const entry = this.enter(name, "webhook");
    if (entry === "halt") return this.halt();
    if (entry === "handoff") return this.park();
    const { occurrence, record } = entry;
    if (record?.state === "done") return (JSON.parse(record.result ?? "{}") as { url: string }).url;
    if (!record && this.unvisited.size > 0 && !(await this.atFrontier("step", stepLabel(name, occurrence)))) {
      return this.halt();
    }
    const expiresAt = this.host.now() + lifetimeMs;
    const hookId = crypto.randomUUID().replaceAll("-", "");
    let url: string;
    // Counted in flight while signing, so that the run cannot suspend under this step.
    this.inFlight++;
    try {
      url = await events.webhookUrl({ hookId, type, expiresAt });
    } finally {
      this.inFlight--;
      if (this.parked > 0) this.checkQuiescent();
    }
    if (this.settled || this.host.isCancelled()) return this.halt({ kind: "cancelled" });
    this.write({
      name,
      occurrence,
      kind: "webhook",
      state: "done",
      attempts: 1,
      result: JSON.stringify({ url, hookId, type, expiresAt }),
      error: null,
      wakeAt: null,
      request: null,
    });
    this.host.event("webhook_created", { step: stepLabel(name, occurrence), type });
    return url;
  }

  private eventHost(name: string): EventHost {
    if (!this.host.events) throw new Error(`step "${name}": this runner has no event inbox`);
    return this.host.events;
  }

  /**
   * Temporal-style patch marker. A run that reaches it at the frontier (a new task, or one whose replay has caught
   * up with its journal) journals it and takes the new path (true) — on every later replay too. A task that
   * journaled past this point without the marker (it ran the old code here) gets false, on every replay.
   */
  private patched(id: string): Promise<boolean> {
    if (typeof id !== "string" || id.length === 0 || id.length > MAX_STEP_NAME_LENGTH) {
      return Promise.reject(
        new TypeError(`a patch id must be a non-empty string of at most ${MAX_STEP_NAME_LENGTH} characters`),
      );
    }
    let answer = this.patches.get(id);
    if (!answer) {
      answer = this.decidePatch(id);
      this.patches.set(id, answer);
    }
    return answer;
  }

  private async decidePatch(id: string): Promise<boolean> {
    if (this.settled) return this.halt();
    if (this.host.isCancelled()) return this.halt({ kind: "cancelled" });
    if (this.records.has(keyOf(id, PATCH_OCCURRENCE))) return true;
    if (this.unvisited.size > 0 && !(await this.atFrontier("patch", id))) {
      return this.settled ? this.halt() : false;
    }
    if (this.settled) return this.halt();
    this.write({
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
    this.host.event("patch_applied", { step: id });
    return true;
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
      waitForEvent: ((name: string, options: WaitForEventOptions) =>
        this.eventStep(name, options)) as Step["waitForEvent"],
      webhookUrl: (name: string, options: WebhookUrlOptions) => this.webhookStep(name, options),
      patched: (id) => this.patched(id),
      status: async (message, options) => {
        // Replays stay silent: only a run that has passed every journaled step reports status.
        if (this.settled || this.unvisited.size > 0) return;
        this.host.setStatus(String(message), options?.progress);
      },
    };
  }
}

/** The event type of a wait or webhook step, checked before anything is journaled. */
function eventType(step: string, type: unknown): string {
  if (typeof type !== "string" || type.length === 0 || type.length > MAX_EVENT_TYPE_LENGTH) {
    throw new TypeError(`step "${step}": an event type must be a string of 1 to ${MAX_EVENT_TYPE_LENGTH} characters`);
  }
  return type;
}

function toTaskEvent(stored: StoredEvent): TaskEvent {
  return { type: stored.type, payload: JSON.parse(stored.payload), timestamp: new Date(stored.sentAt) };
}

const filesDisabled: TaskFiles = {
  open: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
  write: () => Promise.reject(new Error("step.files needs durableMcp(…, { files: … })")),
};
