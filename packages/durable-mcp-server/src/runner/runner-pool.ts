import { newTaskId } from "../ids.js";
import { PREPARED_RUNNER_MAX_AGE_MS, PREPARED_RUNNER_POOL_SIZE } from "../limits.js";
import type { TaskRunnerRpc } from "./task-runner.js";

/**
 * A Worker isolate's pre-created TaskRunners (design/runtime.md, "Pre-created runners"): task ids minted with the one
 * id generator whose objects already exist with their schema, so that a create pays neither the new object nor the
 * migration on the `tools/call` path. Only ids are kept (a stub is bound to the request that made it); each create
 * still reaches its task's own object by `idFromName(taskId)`. An id is handed out once, oldest first, and only
 * while well inside its runner's deadline; an id never handed out is deleted by its runner's alarm.
 */
export class RunnerPool {
  readonly #ready: { taskId: string; preparedAt: number }[] = [];
  #preparing = 0;

  constructor(private readonly size: number = PREPARED_RUNNER_POOL_SIZE) {}

  /** A prepared task id, removed from the pool; undefined when none is young enough (then create as before). */
  take(now: number = Date.now()): string | undefined {
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
   * Tops the pool up to its size: one new id and one `prepare` per missing runner. Run after a reply (waitUntil);
   * a failed prepare is logged and leaves a gap that the next refill fills, while creates use new objects meanwhile.
   */
  async refill(namespace: DurableObjectNamespace): Promise<void> {
    const missing = this.size - this.#ready.length - this.#preparing;
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < missing; i++) jobs.push(this.#prepareOne(namespace));
    await Promise.all(jobs);
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
