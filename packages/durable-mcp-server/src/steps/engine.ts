import { ReplayDivergenceError } from "../errors/errors.js";
import {
  MAX_SPILLED_RESULT_BYTES,
  MAX_STEP_NAME_LENGTH,
  MAX_STEP_RESULT_BYTES,
  RUN_YIELD_MS,
  RUN_YIELD_SHARED_GAP_MS,
  RUN_YIELD_SHARED_HOLD_MS,
  RUN_YIELD_SHARED_MS,
  RUN_YIELD_STEPS,
} from "../limits.js";
import type { EngineHost, RunOutcome } from "./engine-host.js";
import type { FirstAttempt } from "./held-rows.js";
import { DERIVED_KEY, stepLabel, type StepKind, type StepRecord } from "./step-record.js";
import { LiveAttempt, LiveAttempts, type StepBody } from "./live-attempt.js";
import { injectedRecord, type InjectedOutcome } from "./injected-outcomes.js";
import { ReplayFrontier } from "./replay-frontier.js";
import { resolveStepConfig, type StepConfig } from "./retry-policy.js";
import { stepApi, type StepRunner } from "./step-api.js";
import { enterStep, type Entry } from "./step-core.js";
import { attemptRecord, failInterrupted, failOrRetry } from "./step-do.js";
import { StepKeys } from "./step-keys.js";
import {
  parseJson,
  sameAsJson,
  serializeResult,
  spilledKey,
  spillResult,
  stepFailure,
  utf8Length,
} from "./step-results.js";
import type { Step } from "./types.js";

// The step engine: one run of a task handler against its journal. It claims steps (enter), holds new ones at the
// replay's frontier, runs `step.do` (doStep, the per-step hot path), yields to the event loop, and decides when the
// run ends. The other step kinds live beside it (waits.ts, event-steps.ts, patches.ts) against its StepCore face.

// Imported from here by the runner and files/ (the engine's public face inside the library).

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

class StepEngine implements StepRunner {
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
  settled = false;
  private readonly cancelWatch = new AbortController();
  private readonly stepEvents: boolean;
  /** Derives the steps' idempotency keys (read by LiveAttempt when a body asks for its key). */
  readonly keys: StepKeys;
  /** Where the replay is: the new steps and patch markers waiting for it to catch up with the journal. */
  private readonly frontier: ReplayFrontier;
  /** New steps since the run last yielded to the event loop, and when it did (see yieldDue). */
  private stepsSinceYield = 0;
  private lastYieldAt: number;
  /** Until when the run yields every RUN_YIELD_SHARED_MS rather than RUN_YIELD_MS (others need the thread). */
  private sharedUntil = 0;
  /** Step attempts under way, and the one timer that times them out. */
  private readonly live: LiveAttempts;
  /** The yield under way, shared by steps started together (Promise.all). */
  private yielding: Promise<void> | undefined;
  /** Outcomes the testing seam injected, by step key (absent in a deployed Worker). */
  private readonly injected: ReadonlyMap<string, InjectedOutcome> | undefined;

  constructor(readonly host: EngineHost) {
    // The engine's clock is the host's (tests drive it): the first chunk is timed from it too.
    this.lastYieldAt = host.now();
    this.live = new LiveAttempts(host);
    this.frontier = new ReplayFrontier(this, this.records, this.unvisited, host.replay ?? "fail");
    for (const record of host.journal.load()) {
      const key = keyOf(record.name, record.occurrence);
      this.records.set(key, record);
      // What the replay rule holds the handler to: steps a run reached, not patch markers (they are not steps).
      if (record.kind !== "patch") this.unvisited.add(key);
    }
    this.keys = new StepKeys(host.stepKeySalt);
    this.injected = host.injected;
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
    const step = stepApi(this);
    Promise.resolve()
      .then(() => handler(input, step))
      .then(
        (value) => this.finish(this.frontier.handlerSettled({ kind: "returned", value })),
        (error: unknown) => this.finish(this.frontier.handlerSettled({ kind: "threw", error })),
      );
    return outcome;
  }

  finish(outcome: RunOutcome): void {
    if (this.settled) return;
    this.settled = true;
    // Attempts still live (a cancel, or a handler that returned without awaiting a step) end with the run.
    this.live.stopSweepIfIdle();
    this.host.controllers.delete(this.cancelWatch);
    if (this.host.check) this.frontier.checkEnded(outcome);
    this.settle(this.host.isCancelled() ? { kind: "cancelled" } : outcome);
  }

  /** Parks the caller for good; the run suspends once no step body is in flight. */
  park(): Promise<never> {
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

  halt(outcome?: RunOutcome): Promise<never> {
    if (outcome) this.finish(outcome);
    return new Promise<never>(() => {});
  }

  /**
   * Claims the next use of a step name for this run (occurrences are assigned in call order). Returns the entry
   * (its journal record, undefined when new), or "halt" when the run must not go on (cancelled, diverged), or
   * "handoff" before a new step once the alarm's wall-clock budget is spent.
   */
  enter(name: string, kind: StepKind, now?: number): Entry | "halt" | "handoff" | "park" {
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
    // Paused by an operator: a new step waits for the resume (which wakes the task); replayed steps go on.
    if (!record && this.host.isPaused?.()) return "park";
    if (!record && this.progressed && (now ?? this.host.now()) >= this.host.handoffAt) {
      this.wakeNow = true;
      return "handoff";
    }
    this.uses.set(name, occurrence);
    if (record && record.kind !== kind) {
      this.host.check?.({ found: "kind_mismatch", journaled: record, kind });
      const detail = `the journal holds a "${record.kind}" step where the code now asks for "${kind}"`;
      this.finish({ kind: "diverged", error: new ReplayDivergenceError(stepLabel(name, occurrence), detail) });
      return "halt";
    }
    if (record) this.frontier.visit(key!);
    const stop = this.host.check && this.frontier.checkStop({ name, occurrence, kind }, record);
    if (stop) return stop;
    return { name, occurrence, key, label: stepLabel(name, occurrence), record };
  }

  /** See ReplayFrontier.reach. */
  atFrontier(kind: StepKind, entry: Entry): boolean | Promise<boolean> {
    return this.frontier.reach(kind, entry);
  }

  /** Journals `record`. */
  write(record: StepRecord): void {
    this.progressed = true;
    this.records.set(keyOf(record.name, record.occurrence), record);
    this.host.journal.write(record, this.host.now());
  }

  get replaying(): boolean {
    return this.unvisited.size > 0;
  }

  isJournaled(name: string, occurrence: number): boolean {
    return this.records.has(keyOf(name, occurrence));
  }

  journaled(name: string, occurrence: number): StepRecord | undefined {
    return this.records.get(keyOf(name, occurrence));
  }

  get workInFlight(): number {
    return this.inFlight;
  }

  workStarted(): void {
    this.inFlight++;
  }

  workEnded(count = 1): void {
    this.inFlight -= count;
    if (this.parked > 0) this.checkQuiescent();
  }

  /**
   * `step.do`: the per-step hot path (no await, getter or allocation here that a step does not need; what it calls
   * is the engine's own, monomorphic).
   */
  async doStep(name: string, config: StepConfig | undefined, fn: StepBody): Promise<unknown> {
    const policy = resolveStepConfig(config);
    // One clock read for the step's start (the handoff check, the yield check, startedAt), read again only after an
    // await below: the host's clock is a call into the runtime.
    let at = this.host.now();
    let entry = enterStep(this, name, "do", at);
    if (entry instanceof Promise) {
      entry = await entry;
      at = this.host.now();
    }
    const { record, label } = entry;
    if (!record && this.yieldDue(at)) {
      if (!(await this.yieldToEventLoop())) return this.halt();
      at = this.host.now();
    }
    if (record) {
      if (record.state === "done") return this.readResult(record.result);
      if (record.state === "failed") throw stepFailure(record);
      if (record.state === "waiting" && (record.wakeAt ?? 0) > this.host.now()) return this.park();
    }
    if (this.injected) {
      const injected = this.injected.get(keyOf(name, entry.occurrence));
      if (injected) return this.takeInjected(injected, record);
    }
    // New, due for a retry, or interrupted mid-attempt (state "running" after an eviction or crash).
    const attempt = (record?.attempts ?? 0) + 1;
    const base = attemptRecord(entry, attempt);
    if (attempt > policy.limit + 1) failInterrupted(this, base, label);
    const startedAt = at;
    const first = this.beginAttempt(entry, base, startedAt);
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
      this.journalDone(first, base, label, stored, startedAt);
      return sameAsJson(value) ? value : parseJson(text);
    } catch (error) {
      // Aborted by a cancel (or the run already ended): end the run as cancelled if it is not over yet.
      if (this.settled || this.host.isCancelled()) return this.halt({ kind: "cancelled" });
      return failOrRetry(this, error, base, label, policy, startedAt);
    } finally {
      this.live.end(live);
      this.inFlight--;
      if (this.parked > 0) this.checkQuiescent();
    }
  }

  /** A step whose body would run now takes its injected outcome instead, journaled as its own. */
  private takeInjected(injected: InjectedOutcome, record: StepRecord | undefined): Promise<unknown> {
    const taken = injectedRecord(injected, record, record?.idempotencyKey || DERIVED_KEY);
    this.write(taken);
    if (taken.state === "failed") throw stepFailure(taken);
    return this.readResult(taken.result);
  }

  /**
   * Journals the start of an attempt. A new step's first attempt is held by the journal and written with its result,
   * or before anything could observe it (StepJournal.beginFirstAttempt); a retry or resumed attempt is written at
   * once. A new step's record is not kept in `records`: a key is claimed once per run, so nothing would look it up.
   */
  private beginAttempt(entry: Entry, base: StepRecord, startedAt: number): FirstAttempt | undefined {
    this.progressed = true;
    if (entry.record) {
      this.records.set(entry.key!, base);
      this.host.journal.write(base, startedAt);
      return undefined;
    }
    return this.host.journal.beginFirstAttempt(base, startedAt);
  }

  /** Journals an attempt's result: `stored` is the serialized value or its spill reference. */
  private journalDone(
    first: FirstAttempt | undefined,
    base: StepRecord,
    label: string,
    stored: string | null,
    startedAt: number,
  ): void {
    if (first) {
      // One clock read for the held row's end and the event's duration.
      const endedAt = this.host.now();
      this.host.journal.finishFirstAttempt(first, stored, endedAt);
      if (this.stepEvents) {
        this.host.event("step_finished", { step: label, attempt: base.attempts, durationMs: endedAt - startedAt });
      }
    } else {
      this.write({ ...base, state: "done", result: stored });
      if (this.stepEvents) {
        const durationMs = this.host.now() - startedAt;
        this.host.event("step_finished", { step: label, attempt: base.attempts, durationMs });
      }
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
      // Replay work: the frontier check waits for it.
      this.frontier.replayReads++;
      try {
        return parseJson(await this.host.spill.get(key));
      } finally {
        this.frontier.replayReads--;
      }
    }
    return parseJson(stored);
  }
}
