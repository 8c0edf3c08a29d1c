import type { RunOutcome, EngineHost } from "./engine-host.js";
import type { StepKind, StepRecord } from "./step-record.js";

// What the step kinds other than `step.do` (waits.ts, event-steps.ts, patches.ts) need from the engine that runs
// them: the engine implements this and calls the kinds; the kinds never import the engine.

/** A step this run has claimed: which use of its name it is, and its journal row unless it is new. */
export interface Entry {
  name: string;
  occurrence: number;
  /** Its key in `records` (keyOf), made only when the journal has rows: a new task's steps need none. */
  key: string | undefined;
  /** How the step is named to people (stepLabel). */
  label: string;
  record: StepRecord | undefined;
}

export interface StepCore {
  readonly host: EngineHost;
  /** The run is over (its outcome is settled): nothing more is journaled. */
  readonly settled: boolean;
  /** Journaled steps remain unvisited: the handler is still replaying. */
  readonly replaying: boolean;
  /**
   * Claims the next use of a step name (its journal record, undefined when new), or "halt" when the run must not go
   * on (cancelled, diverged), or "handoff" before a new step once the alarm's wall-clock budget is spent, or "park"
   * where a replay check stops this branch.
   */
  enter(name: string, kind: StepKind, now?: number): Entry | "halt" | "handoff" | "park";
  /**
   * Whether the run may go on from a new step: true once the replay has caught up or the run is quiescent, false
   * when it must not go on (see ReplayFrontier). Ask only while `replaying`.
   */
  atFrontier(kind: StepKind, entry: Entry): boolean | Promise<boolean>;
  /** Whether the journal holds the step `name`#`occurrence` (read when the run loaded it, or written since). */
  isJournaled(name: string, occurrence: number): boolean;
  /** The journal's row of `name`#`occurrence`, if any. */
  journaled(name: string, occurrence: number): StepRecord | undefined;
  /** Journals `record`. */
  write(record: StepRecord): void;
  /** Parks the caller for good; the run suspends once nothing is in flight. */
  park(): Promise<never>;
  /** Ends the run with `outcome` (if given) and parks the caller: the run does not go on from here. */
  halt(outcome?: RunOutcome): Promise<never>;
  /** Work of a step is under way (until workEnded): the run does not suspend under it. */
  workStarted(): void;
  workEnded(): void;
}

/**
 * The prologue every step kind shares: claims the next use of `name` (StepCore.enter), stops there when the run must
 * not go on (a promise that never settles: halted, or parked for the handoff), and holds a new step until the replay
 * reaches it. The entry itself, not a promise, when nothing has to be waited for, so that a step that does not wait
 * takes no extra turn of the microtask queue (the order in which concurrent steps journal stays the call order).
 * `now`: the caller's clock read, when it has one.
 */
export function enterStep(core: StepCore, name: string, kind: StepKind, now?: number): Entry | Promise<Entry> {
  const entry = core.enter(name, kind, now);
  if (entry === "halt") return core.halt();
  if (entry === "handoff" || entry === "park") return core.park();
  if (entry.record || !core.replaying) return entry;
  return reachFrontier(core, kind, entry);
}

async function reachFrontier(core: StepCore, kind: StepKind, entry: Entry): Promise<Entry> {
  if (!(await core.atFrontier(kind, entry))) return core.halt();
  return entry;
}
