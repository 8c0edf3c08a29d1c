import { ReplayDivergenceError } from "../errors/errors.js";
import type { CheckedStep, EngineHost, ReplayMode, RunOutcome } from "./engine-host.js";
import { stepLabel, type StepKind, type StepRecord } from "./step-record.js";
import type { Entry } from "./step-core.js";

/** A new step waiting for the replay to catch up (see ReplayFrontier.reach). */
interface Gate {
  label: string;
  step: CheckedStep;
  resolve: (atFrontier: boolean) => void;
}

/** What the frontier needs from its run. */
export interface FrontierRun {
  readonly host: EngineHost;
  readonly settled: boolean;
  finish(outcome: RunOutcome): void;
  /** A wait began (ended: `count` of them): counted in flight, so that the run does not suspend meanwhile. */
  workStarted(): void;
  workEnded(count: number): void;
  /** Work in flight: step bodies, yields, event waits being set up, and the gates held here. */
  readonly workInFlight: number;
}

/**
 * The replay's frontier: which journaled steps this run has not claimed yet, and the new steps held until it does
 * or until the run is quiescent. Steps match the journal by (name, occurrence); no rule here reads a clock.
 *
 * A new step reached while journaled steps are unclaimed waits. If the replay claims them all first (a parallel
 * branch catching up), it goes on silently. If instead the run becomes quiescent — every step call parked or held
 * here, no body, yield or spilled-result read in flight — it goes on anyway with a `replay_out_of_order` warning
 * naming both keys (in "strict" mode: the task fails there). A branch awaiting something that is not a step is
 * invisible to the engine, so "behind" and "renamed" cannot be told apart at that point; the definite divergence is
 * decided when the handler returns (handlerSettled).
 */
export class ReplayFrontier {
  /** New steps reached while journaled steps remain unclaimed (see reach). */
  private readonly gated: Gate[] = [];
  /** Claims of journaled steps so far: the replay's progress, which the frontier check watches. */
  private visits = 0;
  private visitsAtCheck = -1;
  /** Consecutive checks that found work in flight: spaces the next look out (see scheduleFrontierCheck). */
  private busyChecks = 0;
  private timer = false;
  /** The first new step let through out of order: what a divergence found when the handler returns names. */
  private outOfOrder: string | undefined;
  /** Journaled results being read back from R2: replay work the frontier check waits for. */
  replayReads = 0;

  constructor(
    private readonly run: FrontierRun,
    /** The journal by step key, as the engine loaded it. */
    private readonly records: Map<string, StepRecord>,
    /** Journaled steps (keys) not claimed yet; the engine fills it and reads its size. */
    private readonly unvisited: Set<string>,
    private readonly mode: ReplayMode,
  ) {}

  /** A journaled step was claimed again (entered by the handler on this run). */
  visit(key: string): void {
    if (!this.unvisited.delete(key)) return;
    this.visits++;
    // The replay has caught up: every step waiting at the frontier may go on.
    if (this.unvisited.size === 0) this.caughtUp();
  }

  /** Every journaled step is claimed: the held steps go on, or a replay check (which runs none) ends compatible. */
  private caughtUp(): void {
    const check = this.run.host.check;
    if (!check || this.gated.length === 0) return this.releaseGates(true);
    check({ found: "new_step", step: this.gated[0]!.step, behind: undefined });
    this.run.finish({ kind: "suspended", immediate: false });
    this.releaseGates(false);
  }

  /**
   * Whether this run may go on from a new step at this point (see the class): true at once when no journaled step
   * is unclaimed, else once the replay catches up or the run is quiescent; false when the run must not go on.
   */
  reach(kind: StepKind, entry: Entry): boolean | Promise<boolean> {
    if (this.unvisited.size === 0) return true;
    const { name, occurrence, label } = entry;
    return new Promise<boolean>((resolve) => {
      // Counted in flight, so that a sibling's park cannot suspend the run before this is decided.
      this.run.workStarted();
      this.gated.push({ label, step: { name, occurrence, kind }, resolve });
      this.busyChecks = 0;
      this.scheduleFrontierCheck();
    });
  }

  /**
   * What the run ends with once the handler settled: a return while journaled steps were never claimed is a
   * definite divergence (failed, or in "warn" mode the return stands with a warning). A throw stands whatever is
   * unclaimed: a rejected `Promise.all` settles the handler while sibling branches, still on their way to journaled
   * steps, are cut off — as they were on the run that journaled the failure — so unclaimed rows prove nothing then.
   */
  handlerSettled(outcome: RunOutcome): RunOutcome {
    if (this.unvisited.size === 0 || this.run.settled) return outcome;
    const unclaimed = [...this.unvisited].map((key) => this.records.get(key)!);
    const labels = unclaimed.map((record) => stepLabel(record.name, record.occurrence));
    if (outcome.kind === "threw") {
      this.run.host.event("replay_unclaimed", { unclaimed: labels.join(", "), outcome: "threw" });
      return outcome;
    }
    if (outcome.kind !== "returned") return outcome;
    if (this.mode === "warn") {
      this.run.host.event("replay_divergence_ignored", {
        unclaimed: labels.join(", "),
        continuesWith: "the handler's result; the unclaimed steps stay in the journal, never read again",
      });
      return outcome;
    }
    const first = unclaimed[0]!;
    const step = this.outOfOrder ?? "(the handler returned)";
    const detail =
      `the handler returned while the journal's "${first.kind}" step "${labels[0]}" (${first.state}) was never ` +
      `reached${labels.length > 1 ? ` (nor ${labels.length - 1} more)` : ""}: was it renamed or removed?`;
    return { kind: "diverged", error: new ReplayDivergenceError(step, detail, labels[0]) };
  }

  /**
   * A replay check runs no step body: a branch stops ("park") at a journaled step that had not finished, and the run
   * ends ("halt") at a new step once every journaled one was claimed (one reached before is held here: see caughtUp
   * and checkFrontier). Undefined: the step goes on as usual.
   */
  checkStop(step: CheckedStep, record: StepRecord | undefined): "halt" | "park" | undefined {
    const check = this.run.host.check!;
    if (record) {
      if (record.state === "done" || record.state === "failed") return undefined;
      check({ found: "unfinished", journaled: record });
      return "park";
    }
    if (this.unvisited.size > 0) return undefined;
    check({ found: "new_step", step, behind: undefined });
    this.run.finish({ kind: "suspended", immediate: false });
    return "halt";
  }

  /** A replay check's run ended with `outcome`: it is told which journaled steps were never claimed. */
  checkEnded(outcome: RunOutcome): void {
    const unclaimed = [...this.unvisited].map((key) => this.records.get(key)!);
    this.run.host.check!({ found: "end", outcome, unclaimed });
  }

  private releaseGates(atFrontier: boolean): void {
    const released = this.gated.splice(0, this.gated.length);
    if (released.length === 0) return;
    this.run.workEnded(released.length);
    for (const gate of released) gate.resolve(atFrontier);
  }

  /**
   * Looks again a macrotask later while the replay makes progress (it runs in microtasks), and further apart while
   * work is in flight (a step body may run for minutes): the spacing only delays the look, it decides nothing.
   */
  private scheduleFrontierCheck(): void {
    if (this.timer) return;
    this.timer = true;
    setTimeout(
      () => {
        this.timer = false;
        this.checkFrontier();
      },
      Math.min(this.busyChecks, 16),
    );
  }

  private checkFrontier(): void {
    if (this.gated.length === 0) return;
    if (this.run.settled) return this.releaseGates(false);
    const progressed = this.visits !== this.visitsAtCheck;
    this.visitsAtCheck = this.visits;
    if (progressed || this.replayReads > 0 || this.run.workInFlight > this.gated.length) {
      this.busyChecks = progressed ? 0 : this.busyChecks + 1;
      return this.scheduleFrontierCheck();
    }
    // Quiescent, still behind the journal.
    const [unreached] = this.unvisited;
    const old = this.records.get(unreached!)!;
    const oldLabel = stepLabel(old.name, old.occurrence);
    if (this.mode === "strict") {
      this.run.host.check?.({ found: "new_step", step: this.gated[0]!.step, behind: old });
      const step = this.gated[0]!.label;
      const detail =
        `the code goes on to step "${step}", which the journal does not have, while the journal's ` +
        `"${old.kind}" step "${oldLabel}" (${old.state}) was never reached: was it renamed, removed or reordered?`;
      this.run.finish({ kind: "diverged", error: new ReplayDivergenceError(step, detail, oldLabel) });
      return this.releaseGates(false);
    }
    for (const gate of this.gated)
      this.run.host.event("replay_out_of_order", { step: gate.label, journaled: oldLabel });
    this.outOfOrder ??= this.gated[0]!.label;
    this.releaseGates(true);
  }
}
