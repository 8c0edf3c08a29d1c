import type { LimitSettings } from "../runner/index.js";
import { positiveInteger } from "../server/task-limits.js";
import type { CreateLimits } from "../tasks/create-limits.js";
import type { LimitsOptions } from "./durable-mcp-options.js";

/** `durableMcp`'s `limits` resolved: what its TaskRunners apply to runs, and what creates are counted against. */
export interface ResolvedLimits {
  runner: LimitSettings;
  createsPerMinute: number | null;
}

/** Checks `limits` (a TypeError for a count that is not a positive integer) and resolves its defaults. */
export function resolveLimits(options: LimitsOptions | undefined, runnerBinding: string): ResolvedLimits {
  const named: Record<string, number> = {};
  for (const [name, limit] of Object.entries(options?.named ?? {})) {
    named[name] = positiveInteger("durableMcp", `limits.named["${name}"].concurrent`, limit?.concurrent);
  }
  const per = options?.perPrincipal;
  const concurrent = per?.concurrent;
  const creates = per?.createsPerMinute;
  const appliesTo = per?.appliesTo ?? "unlimited-tasks";
  if (appliesTo !== "unlimited-tasks" && appliesTo !== "every-task") {
    throw new TypeError(
      `durableMcp: limits.perPrincipal.appliesTo must be "unlimited-tasks" or "every-task", got ${JSON.stringify(appliesTo)}`,
    );
  }
  return {
    runner: {
      // Always set: a task declaring a limit finds the binding, or fails with "limits_unbound" (docs/limits.md).
      binding: options?.binding ?? "TASK_LIMITER",
      runnerBinding,
      named,
      perPrincipal:
        concurrent === undefined ? null : positiveInteger("durableMcp", "limits.perPrincipal.concurrent", concurrent),
      perPrincipalEveryTask: appliesTo === "every-task",
    },
    createsPerMinute:
      creates === undefined ? null : positiveInteger("durableMcp", "limits.perPrincipal.createsPerMinute", creates),
  };
}

/** What a request's creates are counted against, from the env's TaskLimiter binding (when bound). */
export function createLimitsOf(limits: ResolvedLimits, env: unknown): CreateLimits {
  const namespace = (env as Record<string, unknown>)[limits.runner.binding] as DurableObjectNamespace | undefined;
  const bound = typeof namespace?.idFromName === "function";
  return { namespace: bound ? namespace : undefined, createsPerMinute: limits.createsPerMinute };
}
