import { fixtureEnv, startTask, waitForTask, isFinal, type StartedTask } from "../helpers.js";
import { limiterOf, type LimiterStatus } from "../../src/limiter/index.js";
import { STEPS_META } from "../../src/wire/meta-keys.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";

export type Started = StartedTask & { principal: string; createdAt: number };

/** Creates a task of the limited fixture runner (test/fixtures/limited.ts). */
export async function startLimited(
  tool: string,
  input: Record<string, unknown>,
  principal: string,
  namespace: DurableObjectNamespace = fixtureEnv.LIMITED_RUNNER,
  ttlMs?: number,
): Promise<Started> {
  const started = await startTask(tool, input, { namespace, principal, ttlMs });
  return { ...started, principal, createdAt: Date.now() };
}

/** Starts `count` tasks, `parallel` creates at a time (living `ttlMs`, default a minute). */
export async function startMany(
  count: number,
  tool: string,
  input: Record<string, unknown>,
  principal: string,
  parallel = 10,
  ttlMs?: number,
): Promise<Started[]> {
  const all: Started[] = [];
  for (let i = 0; i < count; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - i) }, () =>
      startLimited(tool, input, principal, fixtureEnv.LIMITED_RUNNER, ttlMs),
    );
    all.push(...(await Promise.all(batch)));
  }
  return all;
}

export function finished(tasks: Started[], timeoutMs: number): Promise<DetailedTask[]> {
  return Promise.all(tasks.map((task) => waitForTask(task, isFinal, timeoutMs)));
}

/** One execution of a step body: from its attempt's start to its end, as the task's journal recorded them. */
export interface Interval {
  taskId: string;
  principal: string;
  step: string;
  start: number;
  end: number;
}

interface TimelineStep {
  name: string;
  kind: string;
  attemptHistory?: { startedAt: string; endedAt: string | null }[];
}

/** Whether the task started a step body yet (its journal has an attempt). */
export async function startedStep(task: Started): Promise<boolean> {
  const detailed = await task.stub.get(task.access, { steps: true });
  const timeline = detailed?._meta?.[STEPS_META] as { steps: TimelineStep[] } | undefined;
  return (timeline?.steps ?? []).some((step) => (step.attemptHistory ?? []).length > 0);
}

/**
 * Every step attempt of every task, from each task's own journal (its step timeline). An attempt that never ended
 * ends: in a cancelled task, when the task was cancelled (a cancel ends the run at once and journals nothing more,
 * docs/reliability.md; its slot is given back then); else (its instance was killed) at `killedAt` when given, else it
 * is an error.
 */
export async function intervalsOf(tasks: Started[], killedAt?: number): Promise<Interval[]> {
  const intervals: Interval[] = [];
  for (const task of tasks) {
    const detailed = await task.stub.get(task.access, { steps: true });
    const timeline = detailed?._meta?.[STEPS_META] as { steps: TimelineStep[] } | undefined;
    const cancelledAt = detailed?.status === "cancelled" ? Date.parse(detailed.lastUpdatedAt) : undefined;
    for (const step of timeline?.steps ?? []) {
      for (const attempt of step.attemptHistory ?? []) {
        const unended = cancelledAt ?? killedAt;
        if (attempt.endedAt === null && unended === undefined) {
          throw new Error(`step ${step.name} of ${task.taskId} never ended`);
        }
        intervals.push({
          taskId: task.taskId,
          principal: task.principal,
          step: step.name,
          start: Date.parse(attempt.startedAt),
          end: attempt.endedAt === null ? unended! : Date.parse(attempt.endedAt),
        });
      }
    }
  }
  return intervals;
}

/**
 * The most step bodies executing at one instant. Intervals are half-open [start, end): at equal times an end counts
 * before a start (journal times are whole milliseconds, and a slot is given back only after its step ended).
 */
export function maxConcurrent(intervals: Interval[]): number {
  const points = intervals.flatMap((i) => [
    { at: i.start, delta: 1 },
    { at: i.end, delta: -1 },
  ]);
  points.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const point of points) most = Math.max(most, (now += point.delta));
  return most;
}

export function limiterStatus(key: string): Promise<LimiterStatus> {
  return limiterOf(fixtureEnv.TASK_LIMITER, key).status();
}

export const unique = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}`;
