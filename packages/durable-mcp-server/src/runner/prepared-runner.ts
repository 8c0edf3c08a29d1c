import { FIRST_RUN_FALLBACK_MS, PREPARED_RUNNER_TTL_MS } from "../limits.js";

// A prepared runner: an object whose schema is applied ahead of any create (tasks/runner-pool.ts hands its id out),
// so that the create finds a warm object. Until a create claims it, its alarm is its only way to go away.

/** The key (in the object's KV storage, beside its SQL tables) holding an unclaimed runner's deadline. */
export const PREPARED_DEADLINE_KEY = "preparedDeadline";

/**
 * Arms an unclaimed runner's alarm and keeps its deadline; returns when the alarm is due. The alarm goes
 * FIRST_RUN_FALLBACK_MS ahead, not to the deadline: a create within that window finds its first run's fallback already
 * armed (and earlier) and sets no alarm of its own. The deadline is kept in storage so that the alarm, if no create came
 * first, re-arms at it even in a later instance (discardUnclaimed).
 */
export async function armPrepared(storage: DurableObjectStorage): Promise<number> {
  const now = Date.now();
  storage.kv.put(PREPARED_DEADLINE_KEY, now + PREPARED_RUNNER_TTL_MS);
  await storage.setAlarm(now + FIRST_RUN_FALLBACK_MS);
  return now + FIRST_RUN_FALLBACK_MS;
}

/**
 * A prepared runner's alarm fired with no create. Before its deadline it re-arms at the deadline (returned); at or
 * after it, or with no deadline kept (a runner prepared by an earlier version, whose alarm was the deadline itself),
 * its storage goes (`forget` is called) and undefined is returned. No call is delivered meanwhile, so a create can
 * never land between the check and the write (one that came first is found by `claimed`, and kept).
 */
export async function discardUnclaimed(
  ctx: DurableObjectState,
  claimed: () => boolean,
  forget: () => void,
): Promise<number | undefined> {
  let rearmedAt: number | undefined;
  await ctx.blockConcurrencyWhile(async () => {
    if (claimed()) return;
    const deadline = ctx.storage.kv.get<number>(PREPARED_DEADLINE_KEY);
    if (deadline !== undefined && Date.now() < deadline) {
      await ctx.storage.setAlarm(deadline);
      rearmedAt = deadline;
      return;
    }
    await ctx.storage.deleteAlarm();
    await ctx.storage.deleteAll();
    forget();
  });
  return rearmedAt;
}
