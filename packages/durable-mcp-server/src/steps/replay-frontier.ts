import { ReplayDivergenceError } from "../errors/errors.js";
import { REPLAY_QUIET_MS } from "../limits.js";
import type { RunOutcome } from "./engine-host.js";
import { stepLabel, type StepRecord } from "./step-record.js";
import type { FrontierKind } from "./step-core.js";

/** A new step or patch marker waiting for the replay to catch up (see ReplayFrontier.reach). */
interface Gate {
  kind: FrontierKind;
  label: string;
  resolve: (atFrontier: boolean) => void;
}

/** What the frontier needs from its run. */
export interface FrontierRun {
  readonly settled: boolean;
  finish(outcome: RunOutcome): void;
  /** A wait began (ended: `count` of them): counted in flight, so that the run does not suspend meanwhile. */
  workStarted(): void;
  workEnded(count: number): void;
}

/**
 * The replay's frontier: which journaled steps this run has not reached yet, and the new steps and patch markers
 * held until it does. A run replays its journal from the top; a new step may only run once every journaled step
 * was visited again, so that a renamed, removed or reordered step is a divergence rather than silently new work.
 */
export class ReplayFrontier {
  /** New steps and patch markers reached while journaled steps remain unvisited (see reach). */
  private readonly gated: Gate[] = [];
  /** Visits of journaled steps so far: the replay's progress, which the frontier check watches. */
  private visits = 0;
  private visitsAtCheck = -1;
  private lastProgressAt = 0;
  private timer = false;
  /** Journaled results being read back from R2: replay work the frontier check waits for. */
  replayReads = 0;

  constructor(
    private readonly run: FrontierRun,
    /** The journal by step key, as the engine loaded it. */
    private readonly records: Map<string, StepRecord>,
    /** Journaled steps (keys) not reached yet; the engine fills it and reads its size. */
    private readonly unvisited: Set<string>,
  ) {}

  /** A journaled step was reached again (entered by the handler on this run). */
  visit(key: string): void {
    if (!this.unvisited.delete(key)) return;
    this.visits++;
    // The replay has caught up: every step waiting at the frontier may go on.
    if (this.unvisited.size === 0) this.releaseGates(true);
  }

  /**
   * Whether this run may go on from a new step (or journal a patch marker) at this point. While journaled steps
   * remain unvisited, the run is still replaying: the new step waits until the replay catches up (true), or until
   * the handler is quiescent with journaled steps still never reached (false): no visit for REPLAY_QUIET_MS and
   * no journaled result being read. A parallel branch replaying its journaled steps thus never counts as a
   * divergence; a renamed, removed or reordered step does. Step bodies in flight do not hold the decision up: a
   * step that is running was reached, and nothing journaled can come after it in its own branch.
   */
  reach(kind: FrontierKind, label: string): boolean | Promise<boolean> {
    if (this.unvisited.size === 0) return true;
    return new Promise<boolean>((resolve) => {
      // Counted in flight, so that a sibling's park cannot suspend the run before this is decided.
      this.run.workStarted();
      // The quiet window runs from the first step to wait, or from the last progress a check saw.
      if (this.gated.length === 0) this.lastProgressAt = Date.now();
      this.gated.push({ kind, label, resolve });
      this.scheduleFrontierCheck();
    });
  }

  private releaseGates(atFrontier: boolean, kind?: FrontierKind): void {
    const released = this.gated.filter((gate) => kind === undefined || gate.kind === kind);
    if (released.length === 0) return;
    this.gated.splice(0, this.gated.length, ...this.gated.filter((gate) => !released.includes(gate)));
    this.run.workEnded(released.length);
    for (const gate of released) gate.resolve(atFrontier);
  }

  private scheduleFrontierCheck(delayMs = 0): void {
    if (this.timer) return;
    this.timer = true;
    setTimeout(() => {
      this.timer = false;
      this.checkFrontier();
    }, delayMs);
  }

  private checkFrontier(): void {
    if (this.gated.length === 0) return;
    if (this.run.settled) return this.releaseGates(false);
    // Still replaying: look again a macrotask later (the replay itself runs in microtasks).
    if (this.visits !== this.visitsAtCheck || this.replayReads > 0) {
      this.visitsAtCheck = this.visits;
      this.lastProgressAt = Date.now();
      return this.scheduleFrontierCheck();
    }
    const quietFor = Date.now() - this.lastProgressAt;
    if (quietFor < REPLAY_QUIET_MS) return this.scheduleFrontierCheck(REPLAY_QUIET_MS - quietFor);
    // Quiescent, still behind the journal. Patch markers answer first (false: this task journaled past them on
    // the old path), since the old path may lead their branches to the journaled steps still unvisited.
    if (this.gated.some((gate) => gate.kind === "patch")) {
      this.releaseGates(false, "patch");
      return this.scheduleFrontierCheck();
    }
    const step = this.gated[0]!.label;
    const [unreached] = this.unvisited;
    const old = this.records.get(unreached!)!;
    const oldLabel = stepLabel(old.name, old.occurrence);
    const detail =
      `the code goes on to step "${step}", which the journal does not have, while the journal's ` +
      `"${old.kind}" step "${oldLabel}" (${old.state}) was never reached: was it renamed, removed or reordered?`;
    this.run.finish({ kind: "diverged", error: new ReplayDivergenceError(step, detail, oldLabel) });
    this.releaseGates(false);
  }
}
