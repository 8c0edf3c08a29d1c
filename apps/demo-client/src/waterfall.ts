// The run view's waterfall as numbers (the view: components/StepTimeline.tsx): one time axis from the task's
// creation to its end (or now), and each step's bars on it. A `do` step is a bar per attempt as the server timed it
// (never a duration divided up), failed attempts apart, with the back-off between attempts; a step without an
// attempt history, a sleep, a wait or a child task (`invoke`: the parent waiting for it) is one bar of its kind.
import { FINAL_STATUSES, type TaskSnapshot, type TimelineStep } from "../shared/mcp.ts";
import { formatDuration } from "../shared/outcome.ts";

/** The kinds drawn with their own look; any other is drawn as "other". */
export const KNOWN_KINDS = new Set(["do", "sleep", "input", "event", "webhook", "patch", "invoke"]);
export const KIND_LABEL: Record<string, string> = {
  do: "step",
  sleep: "sleep",
  input: "question",
  event: "event",
  webhook: "webhook",
  patch: "patch",
  invoke: "child task",
};

/** A step's label: its name, with `#n` from its second use on (as the server names it). */
export const stepKey = (step: TimelineStep) =>
  (step.occurrence ?? 1) > 1 ? `${step.name}#${step.occurrence}` : step.name;

/** Start and end (ms since epoch) of a step; a live one ends `now`. */
export function spanOf(step: TimelineStep, now: number): [number, number] | undefined {
  if (!step.startedAt) return undefined;
  const start = Date.parse(step.startedAt);
  const live = step.state === "running" || step.state === "waiting";
  return [start, live ? Math.max(now, Date.parse(step.updatedAt)) : Date.parse(step.updatedAt)];
}

export interface Axis {
  start: number;
  end: number;
  /** Where a moment falls on the axis, in percent of its width. */
  at(ms: number): number;
}

export function axisOf(snapshot: TaskSnapshot, steps: TimelineStep[], now: number): Axis {
  const starts = steps.flatMap((s) => (s.startedAt ? [Date.parse(s.startedAt)] : []));
  const created = snapshot.createdAt ? Date.parse(snapshot.createdAt) : Math.min(...starts, now);
  const final = FINAL_STATUSES.has(snapshot.status);
  const ends = steps.flatMap((s) => spanOf(s, now)?.[1] ?? []);
  const last = final && snapshot.lastUpdatedAt ? Date.parse(snapshot.lastUpdatedAt) : now;
  const start = Math.min(created, ...starts);
  const end = Math.max(start + 1, last, ...ends);
  return { start, end, at: (ms) => ((ms - start) / (end - start)) * 100 };
}

/** A CSS percentage, clamped to the track. */
export const pct = (value: number) => `${Math.max(0, Math.min(100, value)).toFixed(3)}%`;

export interface Bar {
  key: string;
  from: number;
  to: number;
  className: "bar-do" | "bar-failed" | "bar-backoff" | `bar-${string}`;
  title: string;
  /** The attempt's number, for an attempt's bar. */
  n?: number;
}

/** The bars of one step at `now`: its attempts and back-offs, or its one span; none before it started. */
export function barsOf(step: TimelineStep, now: number): Bar[] {
  const history = step.kind === "do" ? (step.attemptHistory ?? []) : [];
  const bars: Bar[] = [];
  if (history.length > 0) {
    history.forEach((attempt, i) => {
      const from = Date.parse(attempt.startedAt);
      const to = attempt.endedAt ? Date.parse(attempt.endedAt) : i === history.length - 1 ? now : from;
      const next = history[i + 1];
      const failed = attempt.error !== undefined || (attempt.endedAt === null && next !== undefined);
      bars.push({
        key: `a${attempt.n}`,
        from,
        to,
        n: attempt.n,
        className: failed ? "bar-failed" : "bar-do",
        title: `attempt ${attempt.n}: ${formatDuration(to - from)}${attempt.error ? ` · ${attempt.error.message}` : ""}`,
      });
      const gapEnd = next ? Date.parse(next.startedAt) : step.state === "waiting" ? now : undefined;
      if (attempt.endedAt && gapEnd !== undefined && gapEnd > to) {
        bars.push({
          key: `b${attempt.n}`,
          from: to,
          to: gapEnd,
          className: "bar-backoff",
          title: `back-off ${formatDuration(gapEnd - to)}`,
        });
      }
    });
    return bars;
  }
  const span = spanOf(step, now);
  if (span) {
    const kind = KNOWN_KINDS.has(step.kind) ? step.kind : "other";
    bars.push({
      key: "span",
      from: span[0],
      to: span[1],
      className: step.state === "failed" ? "bar-failed" : `bar-${kind}`,
      title: `${KIND_LABEL[step.kind] ?? step.kind}: ${formatDuration(span[1] - span[0])}`,
    });
  }
  return bars;
}
