import { newTaskId } from "../ids.js";
import {
  PREPARED_RUNNER_DEMAND_WINDOW_MS,
  PREPARED_RUNNER_MAX_AGE_MS,
  PREPARED_RUNNER_POOL_MAX,
  PREPARED_RUNNER_POOL_SIZE,
  PREPARED_RUNNER_REFILL_DELAY_MS,
} from "../limits.js";
import type { TaskRunnerRpc } from "../runner/index.js";

export interface RunnerPoolOptions {
  /** Runners kept ready when creates are rare. */
  min?: number;
  /** Runners kept ready at most, however many creates come. */
  max?: number;
  /** How long after a create its refill starts. */
  refillDelayMs?: number;
}

/**
 * A Worker isolate's pre-created TaskRunners (design/runtime.md, "Pre-created runners"): task ids minted with the one
 * id generator whose objects already exist with their schema, so that a create pays neither the new object nor the
 * migration on the `tools/call` path. Only ids are kept (a stub is bound to the request that made it); each create
 * still reaches its task's own object by `idFromName(taskId)`. An id is handed out once, oldest first, and only
 * while well inside its runner's deadline; an id never handed out is deleted by its runner's alarm.
 *
 * The pool's size follows demand: `min`, plus one for every create that found it empty within the last
 * PREPARED_RUNNER_DEMAND_WINDOW_MS, up to `max`. A burst of creates teaches it to hold a burst; a client that creates
 * one task at a time, which the refills keep up with, leaves it at `min`.
 */
export class RunnerPool {
  readonly #ready: { taskId: string; preparedAt: number }[] = [];
  /** When each create of the demand window found no runner ready, oldest first. */
  readonly #misses: number[] = [];
  #preparing = 0;
  #refillScheduled = false;
  readonly #min: number;
  readonly #max: number;
  readonly #refillDelayMs: number;

  constructor(options: RunnerPoolOptions = {}) {
    this.#min = options.min ?? PREPARED_RUNNER_POOL_SIZE;
    this.#max = Math.max(this.#min, options.max ?? PREPARED_RUNNER_POOL_MAX);
    this.#refillDelayMs = options.refillDelayMs ?? PREPARED_RUNNER_REFILL_DELAY_MS;
  }

  /** A prepared task id, removed from the pool; undefined when none is young enough (then create as before). */
  take(now: number = Date.now()): string | undefined {
    for (let next = this.#ready.shift(); next; next = this.#ready.shift()) {
      if (now - next.preparedAt < PREPARED_RUNNER_MAX_AGE_MS) return next.taskId;
    }
    this.#misses.push(now);
    return undefined;
  }

  /** Ids ready to hand out (for tests and the docs' figures). */
  get available(): number {
    return this.#ready.length;
  }

  /** How many runners the pool holds ready now: `min` plus the misses of the demand window, at most `max`. */
  target(now: number = Date.now()): number {
    while (this.#misses.length > 0 && now - this.#misses[0]! >= PREPARED_RUNNER_DEMAND_WINDOW_MS) this.#misses.shift();
    return Math.min(this.#max, this.#min + this.#misses.length);
  }

  /**
   * Tops the pool up to its target: one new id and one `prepare` per missing runner. A failed prepare is logged and
   * leaves a gap that the next refill fills, while creates use new objects meanwhile.
   */
  async refill(namespace: DurableObjectNamespace): Promise<void> {
    const missing = this.target() - this.#ready.length - this.#preparing;
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < missing; i++) jobs.push(this.#prepareOne(namespace));
    await Promise.all(jobs);
  }

  /**
   * The refill a create asks for, after its reply (waitUntil): started `refillDelayMs` later, and only one at a time
   * per isolate (a create that finds one scheduled or under way gets undefined: that one tops up for it too). The
   * delay matters where one thread runs the Worker and its objects (local workerd, `wrangler dev`): new objects
   * created as the reply leaves hold the reply back; deployed, it only makes the refill a little later, which the
   * demand-sized pool covers.
   */
  scheduleRefill(namespace: DurableObjectNamespace): Promise<void> | undefined {
    if (this.#refillScheduled) return undefined;
    this.#refillScheduled = true;
    return new Promise<void>((resolve) => setTimeout(resolve, this.#refillDelayMs))
      .then(() => this.refill(namespace))
      .finally(() => {
        this.#refillScheduled = false;
      });
  }

  async #prepareOne(namespace: DurableObjectNamespace): Promise<void> {
    this.#preparing++;
    const taskId = newTaskId();
    // Counted from before the call: the runner's own deadline starts later, so the age check errs on the safe side.
    const preparedAt = Date.now();
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
