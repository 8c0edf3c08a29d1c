import type { ReplayDivergenceError } from "../errors/errors.js";
import type { TaskEventSink } from "../task-events.js";
import type { InjectedOutcome } from "./injected-outcomes.js";
import type { StepJournal } from "./journal.js";
import type { StepKind, StepRecord } from "./step-record.js";
import type { ResultSpill } from "./step-results.js";
import type { FileStep, InputRequest, TaskFiles } from "./types.js";

// The engine's contract with the TaskRunner that hosts it: what the runner hands in, and how a run ends.

/**
 * What a task does when its replay departs from its journal (`registerTask`'s `replay` option, docs/how-it-works.md):
 * - "fail" (the default): a definite divergence — a step of another kind under a journaled key, or the handler
 *   returning while journaled steps were never claimed — fails the task (`replay_divergence`); a new step reached
 *   while journaled steps are still unclaimed waits for the run to be quiescent, then runs with a
 *   `replay_out_of_order` warning;
 * - "warn": as "fail", except that a handler returning while journaled steps were never claimed completes the task
 *   with what it returned (a `replay_divergence_ignored` warning names the unclaimed steps, which stay in the
 *   journal unread);
 * - "strict": a new step still waiting when the run is quiescent fails the task before its body runs. Sound only
 *   for handlers whose every await is a step: a branch awaiting anything else (a fetch, a timer) is invisible to the
 *   engine and looks exactly like a renamed step.
 *
 * @example
 * ```ts
 * import { McpServer, type ReplayMode } from "durable-mcp-server";
 * import * as z from "zod";
 *
 * const replay: ReplayMode = "strict"; // every await of this handler is a step
 * const server = new McpServer({ name: "reports", version: "1.0.0" });
 * server.registerTask("sum", { inputSchema: z.object({ n: z.number() }), replay }, async ({ n }, step) => {
 *   const doubled = await step.do("double", async () => n * 2);
 *   return { content: [{ type: "text", text: String(doubled) }] };
 * });
 * ```
 */
export type ReplayMode = "fail" | "warn" | "strict";

/** What the engine needs from the TaskRunner that hosts it. */
export interface EngineHost {
  taskId: string;
  /** The task's secret the steps' idempotency keys are derived from (see step-keys.ts). */
  stepKeySalt: string;
  journal: EngineJournal;
  now(): number;
  isCancelled(): boolean;
  /**
   * An operator paused the task: a new step is not started (the run suspends at this step boundary; a body already
   * running finishes). Absent: never paused.
   */
  isPaused?(): boolean;
  setStatus(message: string, progress: number | undefined): void;
  /** A new input request was journaled: the task is now `input_required`. */
  inputRequested(): void;
  /**
   * The capability the task's client lacks to answer `request` (e.g. "elicitation.form"), or null when it can.
   * Fixed for the task's life, so a replay decides as the first run did. Absent: every question can be asked.
   */
  inputUnavailable?(request: InputRequest): string | null;
  /** Wall-clock time after which the run hands off to a fresh alarm at the next step boundary. */
  handoffAt: number;
  /** Every live AbortController of this run, so that cancel can abort them. */
  controllers: Set<AbortController>;
  /** Receives one structured event per step transition. */
  event: TaskEventSink;
  /**
   * Whether the sink wants `step_started` / `step_finished` (the "all" level): when false the engine does not build
   * them, one object each per step. Absent: it does.
   */
  stepEvents?: boolean;
  /** Builds `step.files` (given how to journal an artifact write as a step), when the deployment has files. */
  files?: (doStep: FileStep) => TaskFiles;
  /** Spills results over MAX_STEP_RESULT_BYTES to R2, when the deployment has files. */
  spill?: ResultSpill;
  /** The task's event inbox and webhook URLs (`step.waitForEvent`, `step.webhookUrl`). */
  events?: EventHost;
  /** Outcomes the testing seam injected, by `${occurrence}:${name}` (injected-outcomes.ts); absent when none. */
  injected?: ReadonlyMap<string, InjectedOutcome>;
  /** What a replay that departs from the journal does (ReplayMode). Absent: "fail". */
  replay?: ReplayMode;
  /**
   * Set by a replay check (steps/replay-check.ts): no step body runs. The run ends at the first step the journal
   * does not have, and a branch stops at a journaled step that had not finished; each finding is told here.
   */
  check?: (finding: CheckFinding) => void;
}

/** What the engine reads and writes of a journal: a task's StepJournal, or a replay check's rows in memory. */
export type EngineJournal = Pick<StepJournal, "load" | "write" | "beginFirstAttempt" | "finishFirstAttempt">;

/** A step as a replay check names it. */
export interface CheckedStep {
  name: string;
  occurrence: number;
  kind: StepKind;
}

/**
 * What a replay check learns (EngineHost.check), in order: a new step reached (after every journaled step was
 * claimed, or with `behind`, the first journaled step still unclaimed once the run was quiescent); a journaled key
 * asked for as another kind; a branch stopped at a journaled step that had not finished; and how the run ended,
 * with the journaled steps it never claimed.
 */
export type CheckFinding =
  | { found: "new_step"; step: CheckedStep; behind: StepRecord | undefined }
  | { found: "kind_mismatch"; journaled: StepRecord; kind: StepKind }
  | { found: "unfinished"; journaled: StepRecord }
  | { found: "end"; outcome: RunOutcome; unclaimed: StepRecord[] };

/** An event as the journal and the inbox keep it: JSON, its time as ms since epoch. */
export interface StoredEvent {
  type: string;
  /** JSON text of the payload. */
  payload: string;
  sentAt: number;
}

/** What event steps need from the TaskRunner: its inbox of buffered events, and the signer of webhook URLs. */
export interface EventHost {
  /**
   * Removes and returns the oldest buffered event of `type`, or null. Synchronous on purpose: the engine journals
   * the step in the same turn, so the take and the journal write commit together.
   */
  take(type: string): StoredEvent | null;
  /** Step `label` now waits for `type` (the runner names the wait in the status message). */
  waiting(label: string, type: string): void;
  /** Mints the signed URL of webhook `hookId` of this task. */
  webhookUrl(hook: { hookId: string; type: string; expiresAt: number }): Promise<string>;
}

export type RunOutcome =
  | { kind: "returned"; value: unknown }
  | { kind: "threw"; error: unknown }
  /** Waiting on a clock or on input; the runner arms the alarm from the journal. */
  | { kind: "suspended"; immediate: boolean }
  | { kind: "diverged"; error: ReplayDivergenceError }
  | { kind: "cancelled" };
