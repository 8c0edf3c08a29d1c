import { newTaskId } from "../ids.js";
import {
  PREPARED_RUNNER_LEAD_MS,
  PREPARED_RUNNER_MAX_AGE_MS,
  PREPARED_RUNNER_POOL_MAX,
  PREPARED_RUNNER_RATE_WINDOW_MS,
  PREPARED_RUNNER_REFILL_DELAY_MS,
} from "../limits.js";
import type { TaskRunnerRpc } from "../runner/index.js";

export interface RunnerPoolOptions {
  /** Runners kept ready at most, however many creates come. */
  max?: number;
  /** How long after a create its refill starts. */
  refillDelayMs?: number;
  /** The clock the pool reads (its tests run one of their own); `Date.now` by default. */
  now?: () => number;
}

/**
 * A Worker isolate's pre-created TaskRunners (design/runtime.md, "Pre-created runners"): task ids minted with the one
 * id generator whose objects already exist with their schema, so that a create pays neither the new object nor the
 * migration on the `tools/call` path. Only ids are kept (a stub is bound to the request that made it); each create
 * still reaches its task's own object by `idFromName(taskId)`. An id is handed out once, oldest first, while its
 * runner's deadline allows (PREPARED_RUNNER_MAX_AGE_MS); an id never handed out is deleted by its runner's alarm.
 *
 * The pool holds only what the isolate's own create rate says will be claimed soon: as many runners as creates are
 * expected within PREPARED_RUNNER_LEAD_MS, from the creates of the last PREPARED_RUNNER_RATE_WINDOW_MS, up to `max`.
 * Below about one create every 400 ms that is none, and every create makes its object on the call: a runner prepared
 * for a create that comes later than its alarm's first second costs an alarm delivery and a second `setAlarm`, and one
 * that never comes costs a whole object. Above it, a runner is claimed well inside that second, so its alarm is the
 * task's own first-run fallback and nothing is prepared that is not used. Nothing is prepared without a create.
 */
export class RunnerPool {
  readonly #ready: { taskId: string; preparedAt: number }[] = [];
  /** When each create of the rate window asked for an id, oldest first. */
  readonly #creates: number[] = [];
  #preparing = 0;
  #refillScheduled = false;
  readonly #max: number;
  readonly #refillDelayMs: number;
  readonly #now: () => number;

  constructor(options: RunnerPoolOptions = {}) {
    this.#max = Math.max(0, options.max ?? PREPARED_RUNNER_POOL_MAX);
    this.#refillDelayMs = options.refillDelayMs ?? PREPARED_RUNNER_REFILL_DELAY_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * A prepared task id, removed from the pool; undefined when none is young enough (then create as before). Every
   * call counts as a create for the rate.
   */
  take(now: number = this.#now()): string | undefined {
    this.#creates.push(now);
    // Enough to reach `max` (a longer history changes no target).
    const kept = Math.ceil(((this.#max + 1) * PREPARED_RUNNER_RATE_WINDOW_MS) / PREPARED_RUNNER_LEAD_MS);
    if (this.#creates.length > kept) this.#creates.splice(0, this.#creates.length - kept);
    for (let next = this.#ready.shift(); next; next = this.#ready.shift()) {
      if (now - next.preparedAt < PREPARED_RUNNER_MAX_AGE_MS) return next.taskId;
    }
    return undefined;
  }

  /** Ids ready to hand out (for tests and the docs' figures). */
  get available(): number {
    return this.#ready.length;
  }

  /**
   * How many runners the pool holds ready now: the creates expected within PREPARED_RUNNER_LEAD_MS at the rate of the
   * last PREPARED_RUNNER_RATE_WINDOW_MS (rounded), at most `max`.
   */
  target(now: number = this.#now()): number {
    while (this.#creates.length > 0 && now - this.#creates[0]! >= PREPARED_RUNNER_RATE_WINDOW_MS) this.#creates.shift();
    const expected = Math.round((this.#creates.length * PREPARED_RUNNER_LEAD_MS) / PREPARED_RUNNER_RATE_WINDOW_MS);
    return Math.min(this.#max, expected);
  }

  /**
   * Tops the pool up to its target: one new id and one `prepare` per missing runner. A failed prepare is logged and
   * leaves a gap that the next refill fills, while creates use new objects meanwhile.
   */
  async refill(namespace: DurableObjectNamespace, now: number = this.#now()): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (let i = this.#missing(now); i > 0; i--) jobs.push(this.#prepareOne(namespace));
    await Promise.all(jobs);
  }

  /**
   * The refill a create asks for, after its reply (waitUntil): undefined when the pool is at its target (nothing to
   * wait for), or when a refill is scheduled or under way (that one tops up for this create too); else started
   * `refillDelayMs` later. The delay matters where one thread runs the Worker and its objects (local workerd,
   * `wrangler dev`): new objects created as the reply leaves hold the reply back; deployed, it only makes the refill
   * a little later, which the pool's lead covers.
   */
  scheduleRefill(namespace: DurableObjectNamespace): Promise<void> | undefined {
    if (this.#refillScheduled || this.#missing(this.#now()) <= 0) return undefined;
    this.#refillScheduled = true;
    return new Promise<void>((resolve) => setTimeout(resolve, this.#refillDelayMs))
      .then(() => this.refill(namespace))
      .finally(() => {
        this.#refillScheduled = false;
      });
  }

  #missing(now: number): number {
    return this.target(now) - this.#ready.length - this.#preparing;
  }

  async #prepareOne(namespace: DurableObjectNamespace): Promise<void> {
    this.#preparing++;
    const taskId = newTaskId();
    // Counted from before the call: the runner's own deadline starts later, so the age check errs on the safe side.
    const preparedAt = this.#now();
    try {
      const runner = namespace.get(namespace.idFromName(taskId)) as unknown as TaskRunnerRpc;
      if (await runner.prepare()) this.#ready.push({ taskId, preparedAt });
    } catch (error) {
      console.warn("durableMcp: preparing a TaskRunner failed; creates use new objects meanwhile", {
        error: String(error),
      });
    } finally {
      this.#preparing--;
    }
  }
}
