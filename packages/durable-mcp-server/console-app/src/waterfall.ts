// The run view's waterfall as numbers: one time axis from the task's creation to its end (or now) and each step's
// bars on it — a `do` step's attempts as the runner timed them (failed ones apart) with the back-off between them,
// and a sleep or a wait as one bar of its kind, so waits read apart from work. The same rules as the demo's task
// page (apps/demo-client/src/waterfall.ts), written against the operator API's detail answer.

export const STEPS_META = "durable-mcp-server/steps";

export interface StepAttempt {
  n: number;
  startedAt: string;
  endedAt: string | null;
  error?: { message: string };
}

export interface Step {
  name: string;
  occurrence?: number;
  kind: string;
  state: "running" | "waiting" | "done" | "failed";
  attempts: number;
  startedAt: string | null;
  updatedAt: string;
  durationMs: number | null;
  attemptHistory?: StepAttempt[];
}

export interface TaskSnapshot {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  _meta?: Record<string, unknown>;
}

const FINAL = new Set(["completed", "failed", "cancelled"]);
export const WAIT_KINDS = new Set(["sleep", "input", "event", "webhook"]);

/** The label the runner gives a step: its name, `name#n` from its second use on (what restart's fromStep takes). */
export const stepLabel = (step: Step) => ((step.occurrence ?? 1) > 1 ? `${step.name}#${step.occurrence}` : step.name);

export function stepsOf(task: TaskSnapshot): { total: number; steps: Step[] } | undefined {
  const value = task._meta?.[STEPS_META] as { total?: unknown; steps?: unknown } | undefined;
  if (!value || typeof value.total !== "number" || !Array.isArray(value.steps)) return undefined;
  return { total: value.total, steps: value.steps as Step[] };
}

const live = (step: Step) => step.state === "running" || step.state === "waiting";

export function spanOf(step: Step, now: number): [number, number] | undefined {
  if (!step.startedAt) return undefined;
  const end = Date.parse(step.updatedAt);
  return [Date.parse(step.startedAt), live(step) ? Math.max(now, end) : end];
}

export interface Axis {
  start: number;
  end: number;
  /** Where a moment falls, in percent of the track. */
  at(ms: number): number;
}

export function axisOf(task: TaskSnapshot, steps: readonly Step[], now: number): Axis {
  const starts = steps.flatMap((step) => (step.startedAt ? [Date.parse(step.startedAt)] : []));
  const start = Math.min(task.createdAt ? Date.parse(task.createdAt) : now, ...starts);
  const last = FINAL.has(task.status) && task.lastUpdatedAt ? Date.parse(task.lastUpdatedAt) : now;
  const end = Math.max(start + 1, last, ...steps.flatMap((step) => spanOf(step, now)?.[1] ?? []));
  return { start, end, at: (ms) => ((ms - start) / (end - start)) * 100 };
}

export type BarKind = "work" | "failed" | "backoff" | "wait" | "other";

export interface Bar {
  key: string;
  from: number;
  to: number;
  kind: BarKind;
  title: string;
  attempt?: number;
}

export function barsOf(step: Step, now: number, format: (ms: number) => string): Bar[] {
  const history = step.kind === "do" ? (step.attemptHistory ?? []) : [];
  if (history.length === 0) {
    const span = spanOf(step, now);
    if (!span) return [];
    const kind: BarKind =
      step.state === "failed" ? "failed" : step.kind === "do" ? "work" : WAIT_KINDS.has(step.kind) ? "wait" : "other";
    return [{ key: "span", from: span[0], to: span[1], kind, title: `${step.kind}: ${format(span[1] - span[0])}` }];
  }
  const bars: Bar[] = [];
  history.forEach((attempt, i) => {
    const next = history[i + 1];
    const from = Date.parse(attempt.startedAt);
    const to = attempt.endedAt ? Date.parse(attempt.endedAt) : next ? from : now;
    const failed = attempt.error !== undefined || (attempt.endedAt === null && next !== undefined);
    bars.push({
      key: `a${attempt.n}`,
      from,
      to,
      kind: failed ? "failed" : "work",
      attempt: attempt.n,
      title: `attempt ${attempt.n}: ${format(to - from)}${attempt.error ? ` · ${attempt.error.message}` : ""}`,
    });
    const gapEnd = next ? Date.parse(next.startedAt) : step.state === "waiting" ? now : undefined;
    if (attempt.endedAt && gapEnd !== undefined && gapEnd > to) {
      bars.push({
        key: `b${attempt.n}`,
        from: to,
        to: gapEnd,
        kind: "backoff",
        title: `back-off ${format(gapEnd - to)}`,
      });
    }
  });
  return bars;
}

/** A CSS percentage, clamped to the track. */
export const pct = (value: number) => `${Math.max(0, Math.min(100, value)).toFixed(3)}%`;
