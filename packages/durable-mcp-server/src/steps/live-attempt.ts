import { StepTimeoutError } from "../errors/errors.js";
import type { StepKeys } from "./step-keys.js";
import type { StepAttempt } from "./types.js";

// The attempts of `step.do` bodies under way in one run: each attempt, the list they are threaded on, and the one
// timer that times them out. The engine starts and ends attempts here; nothing here reaches back into the engine
// beyond the narrow AttemptRun.

export type StepBody = (attempt: StepAttempt) => unknown;

/** What an attempt needs from its run: the deriver of its idempotency key, and the controllers cancel aborts. */
export interface AttemptRun {
  readonly keys: StepKeys;
  readonly host: { readonly controllers: Set<AbortController> };
}

/**
 * A step attempt under way, and the `StepAttempt` its body receives (see LiveAttempts.start). One object per
 * attempt and no closures of its own, so a body that returns at once costs no AbortController, timer or key. Its
 * state is in private fields (a body that logs or spreads its argument sees only `attempt`); the engine reaches
 * it through the static functions below.
 */
export class LiveAttempt implements StepAttempt {
  readonly attempt: number;
  #engine: AttemptRun;
  #name: string;
  #occurrence: number;
  #label: string;
  #deadline: number;
  #timeoutMs: number;
  #key: string | null;
  #controller: AbortController | undefined = undefined;
  #reject: ((reason: unknown) => void) | undefined = undefined;
  #resolve: ((value: unknown) => void) | undefined = undefined;
  #body: StepBody | undefined = undefined;
  /** Neighbours in the run's LiveList while listed (see LiveList). */
  #prev: LiveAttempt | undefined = undefined;
  #next: LiveAttempt | undefined = undefined;
  #listed = false;

  constructor(
    engine: AttemptRun,
    entry: { name: string; occurrence: number; label: string },
    attempt: number,
    /** The key a row journaled when keys were still stored (null: derive it). */
    journaledKey: string | null,
    deadline: number,
    timeoutMs: number,
  ) {
    this.attempt = attempt;
    this.#engine = engine;
    this.#name = entry.name;
    this.#occurrence = entry.occurrence;
    this.#label = entry.label;
    this.#key = journaledKey;
    this.#deadline = deadline;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Derived when the body first reads it, not at every attempt: HMAC(salt, `${occurrence}:${name}`) is
   * deterministic, so every attempt, replay and run after an eviction derives the same key (step-keys.ts).
   */
  get idempotencyKey(): string {
    return (this.#key ??= this.#engine.keys.derive(this.#name, this.#occurrence));
  }

  /** The body asked for its signal: a controller that cancel can abort, and whose abort ends the attempt. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      this.#engine.host.controllers.add(controller);
      controller.signal.addEventListener("abort", () => this.#reject?.(controller.signal.reason));
    }
    return this.#controller.signal;
  }

  static settleWith(
    live: LiveAttempt,
    body: StepBody,
    resolve: (value: unknown) => void,
    reject: (reason: unknown) => void,
  ): void {
    live.#body = body;
    live.#resolve = resolve;
    live.#reject = reject;
  }

  /**
   * Runs the body (a promise reaction, so never inside the step's own synchronous turn) and settles the attempt with
   * it: a promise it returns is followed directly rather than adopted by a derived promise, two microtask hops fewer
   * per step. A body that throws, or is not a function, rejects the attempt (retried like any failure).
   */
  static run(live: LiveAttempt): void {
    try {
      const value = (live.#body as StepBody)(live);
      if (value instanceof Promise) value.then(live.#resolve, live.#reject);
      else live.#resolve!(value);
    } catch (error) {
      live.#reject!(error);
    }
  }

  static deadline(live: LiveAttempt): number {
    return live.#deadline;
  }

  static timeoutError(live: LiveAttempt): StepTimeoutError {
    return new StepTimeoutError(live.#label, live.#timeoutMs);
  }

  /** The attempt is over (settled, or ended by abort): its controller is no longer cancel's to abort. */
  static end(live: LiveAttempt): void {
    if (live.#controller) live.#engine.host.controllers.delete(live.#controller);
  }

  /** Appends `live` to `list` (after every attempt listed before it, as a Set would iterate). */
  static link(list: LiveList, live: LiveAttempt): void {
    if (live.#listed) return;
    live.#listed = true;
    live.#prev = list.tail;
    if (list.tail) list.tail.#next = live;
    else list.head = live;
    list.tail = live;
    list.size++;
  }

  /** Takes `live` out of `list`; nothing when it is not in it (an attempt is unlinked by abort and again at its end). */
  static unlink(list: LiveList, live: LiveAttempt): void {
    if (!live.#listed) return;
    live.#listed = false;
    const prev = live.#prev;
    const next = live.#next;
    if (prev) prev.#next = next;
    else list.head = next;
    if (next) next.#prev = prev;
    else list.tail = prev;
    live.#prev = live.#next = undefined;
    list.size--;
  }

  /** The listed attempts, oldest first, as a copy: the caller may unlink them as it goes. */
  static all(list: LiveList): LiveAttempt[] {
    const all: LiveAttempt[] = [];
    for (let live = list.head; live; live = live.#next) all.push(live);
    return all;
  }

  /** Ends `live` with `reason`, aborting its signal if the body has one. */
  static abort(live: LiveAttempt, reason: unknown): void {
    const controller = live.#controller;
    if (controller) {
      live.#engine.host.controllers.delete(controller);
      controller.abort(reason);
    }
    live.#reject?.(reason);
  }
}

/**
 * The attempts of a run under way, in the order they started: a list threaded through the attempts themselves
 * (LiveAttempt.link / unlink), so that the attempt every step adds and removes costs no hashing, as a Set's did.
 */
interface LiveList {
  head: LiveAttempt | undefined;
  tail: LiveAttempt | undefined;
  size: number;
}

/**
 * A run's live attempts and their one timeout timer: the timer is armed at the earliest deadline and sweeps every
 * attempt past its own, so a body that returns at once costs no timer of its own.
 */
export class LiveAttempts implements LiveList {
  head: LiveAttempt | undefined = undefined;
  tail: LiveAttempt | undefined = undefined;
  size = 0;
  #sweep: { at: number; timer: ReturnType<typeof setTimeout> } | undefined = undefined;

  /** `clock` is the host's (tests drive it): deadlines are on it. */
  constructor(private readonly clock: { now(): number }) {}

  /**
   * Runs one attempt of a step body: settles with the body, or rejects when its timeout passes or the task is
   * cancelled. The body's AbortController is made only if the body reads `signal`, and one run-level timer
   * watches every live attempt's deadline (armSweep), so a body that returns at once costs no controller and no
   * timer of its own. The body runs a microtask later (never inside the caller's synchronous turn), with the
   * attempt as its argument.
   */
  start(live: LiveAttempt, fn: StepBody): Promise<unknown> {
    LiveAttempt.link(this, live);
    this.armSweep(LiveAttempt.deadline(live));
    return new Promise<unknown>((resolve, reject) => {
      LiveAttempt.settleWith(live, fn, resolve, reject);
      // LiveAttempt.run as the reaction itself (called with the attempt): no closure per attempt.
      void Promise.resolve(live).then(LiveAttempt.run);
    });
  }

  /** `live` settled (or was aborted): off the list, its controller no longer cancel's to abort. */
  end(live: LiveAttempt): void {
    LiveAttempt.unlink(this, live);
    LiveAttempt.end(live);
  }

  /** Ends every live attempt with `reason` (a cancel: bodies without a signal have no controller to abort). */
  abortAll(reason: unknown): void {
    for (const live of LiveAttempt.all(this)) this.abort(live, reason);
  }

  /** The run is over: with no attempt left, the timer has nothing to time out. */
  stopSweepIfIdle(): void {
    if (this.size === 0 && this.#sweep) {
      clearTimeout(this.#sweep.timer);
      this.#sweep = undefined;
    }
  }

  /** Ends `live` with `reason`, aborting its signal if the body has one. */
  private abort(live: LiveAttempt, reason: unknown): void {
    LiveAttempt.unlink(this, live);
    LiveAttempt.abort(live, reason);
  }

  /** Keeps the run's one timeout timer at or before `deadline`. */
  private armSweep(deadline: number): void {
    if (this.#sweep && this.#sweep.at <= deadline) return;
    if (this.#sweep) clearTimeout(this.#sweep.timer);
    const at = deadline;
    this.#sweep = { at, timer: setTimeout(() => this.sweepDeadlines(), Math.max(0, at - this.clock.now())) };
  }

  /** Times out every live attempt past its deadline, then re-arms for the next one (none: the timer is done). */
  private sweepDeadlines(): void {
    this.#sweep = undefined;
    const now = this.clock.now();
    let next = Infinity;
    for (const live of LiveAttempt.all(this)) {
      const deadline = LiveAttempt.deadline(live);
      if (deadline <= now) this.abort(live, LiveAttempt.timeoutError(live));
      else next = Math.min(next, deadline);
    }
    if (next !== Infinity) this.armSweep(next);
  }
}
