import { describeError } from "../errors/errors.js";
import type { CheckFinding, CheckedStep, EngineHost, EngineJournal } from "./engine-host.js";
import { runWithJournal } from "./engine.js";
import { historyRecord, type TaskHistory } from "./history-format.js";
import type { StepRecord } from "./step-record.js";
import type { Step } from "./types.js";

// The replay check behind `replayHistory` (durable-mcp-server/testing): a task handler run by the engine against a
// history's steps held in memory, with no step body run and nothing written anywhere. The engine tells what it finds
// (EngineHost.check); the first finding that decides is the verdict.

/**
 * What the replay check found for one history: compatible, or the first divergence with both keys, each written
 * `name#occurrence kind` (`expected`: what the history holds; `found`: what the code reached instead).
 * @example
 * ```ts
 * import type { ReplayVerdict } from "durable-mcp-server/testing";
 *
 * const describe = (verdict: ReplayVerdict) =>
 *   verdict.compatible ? "compatible" : `expected ${verdict.divergence.expected}, found ${verdict.divergence.found}`;
 * ```
 */
export type ReplayVerdict =
  | { compatible: true }
  | { compatible: false; divergence: { expected: string; found: string; message: string } };

const NO_BODY = "a replay check runs no step body";

/** Runs `handler` against `history` (already checked: history-format.ts parseHistory) without running any step body. */
export async function checkReplay(
  handler: (input: unknown, step: Step) => Promise<unknown>,
  history: TaskHistory,
): Promise<ReplayVerdict> {
  // A sleep ends with nothing whatever the clock: one still waiting in the history replays as over.
  const records = history.steps.map((step): StepRecord => {
    const record = historyRecord(step);
    return record.kind === "sleep" && record.state === "waiting" ? { ...record, state: "done" } : record;
  });
  const journal: EngineJournal = {
    load: () => records,
    // Only a new `step.patched` marker is written: the check keeps nothing.
    write: () => {},
    beginFirstAttempt: () => {
      throw new Error(NO_BODY);
    },
    finishFirstAttempt: () => {
      throw new Error(NO_BODY);
    },
  };
  const findings: CheckFinding[] = [];
  const host: EngineHost = {
    taskId: "replay-check",
    // Idempotency keys are derived only for a body that runs: none does.
    stepKeySalt: "",
    journal,
    now: () => Date.now(),
    isCancelled: () => false,
    setStatus: () => {},
    inputRequested: () => {},
    handoffAt: Number.POSITIVE_INFINITY,
    controllers: new Set(),
    event: () => {},
    stepEvents: false,
    files: (doStep) => ({
      write: (name) => doStep(name, () => Promise.reject(new Error(NO_BODY))),
      open: () => Promise.reject(new Error("step.files.open reads an uploaded file, which a replay check has not")),
    }),
    events: {
      take: () => null,
      waiting: () => {},
      webhookUrl: () => Promise.reject(new Error(NO_BODY)),
    },
    // A new step reached while the history is still unclaimed is decided when the run is quiescent.
    replay: "strict",
    check: (finding) => findings.push(finding),
  };
  await runWithJournal(handler, history.input, host);
  return verdictOf(findings);
}

function verdictOf(findings: CheckFinding[]): ReplayVerdict {
  let stoppedAt: StepRecord | undefined;
  for (const finding of findings) {
    switch (finding.found) {
      case "kind_mismatch": {
        const { journaled, kind } = finding;
        const found = keyOf({ ...journaled, kind });
        return diverged(
          keyOf(journaled),
          found,
          `the code asks for ${found} where the history holds a ${journaled.kind} step`,
        );
      }
      case "new_step":
        if (!finding.behind) return { compatible: true };
        return diverged(
          keyOf(finding.behind),
          keyOf(finding.step),
          `the code reached ${keyOf(finding.step)}, which the history does not hold, and never ${keyOf(finding.behind)}`,
        );
      case "unfinished":
        stoppedAt ??= finding.journaled;
        break;
      case "end": {
        const [first] = finding.unclaimed;
        if (!first) return { compatible: true };
        const { outcome } = finding;
        const found = stoppedAt
          ? `${keyOf(stoppedAt)} (${stoppedAt.state} in the history)`
          : outcome.kind === "threw"
            ? `the handler threw (${describeError(outcome.error).message})`
            : "the handler returned";
        return diverged(
          keyOf(first),
          found,
          `${found} while the history's ${keyOf(first)} (and ${finding.unclaimed.length - 1} more) was never reached`,
        );
      }
    }
  }
  // The engine always tells how a run ended.
  throw new Error("the replay check ended without a verdict");
}

function keyOf(step: CheckedStep): string {
  return `${step.name}#${step.occurrence} ${step.kind}`;
}

function diverged(expected: string, found: string, message: string): ReplayVerdict {
  return { compatible: false, divergence: { expected, found, message } };
}
