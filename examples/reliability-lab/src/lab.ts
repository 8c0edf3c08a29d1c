// What the Worker and the tests share: the job's arguments, its step order and the values its steps return, and
// the largest file the lab takes.

/** The largest file the lab takes (`files.maxSize`, and the limit of /bench/raw-put): the suite's 1 GiB and a bit. */
export const LAB_MAX_FILE_BYTES = 1024 * 1024 * 1024 + 64 * 1024 * 1024;

export interface LabJobArgs {
  /** Work steps (`work 0` … `work N-1`); the first half runs before the sleep, the rest after the question. */
  steps: number;
  /** How long each step body works after reporting its effect, in ms. */
  stepMs: number;
  /** A durable sleep (`nap`) after the first half of the work; 0 for none. */
  sleepMs: number;
  /** A step (`flaky`) whose first `failFirst` attempts fail on purpose, retried after `retryMs`. */
  flaky?: { failFirst: number; retryMs: number };
  /** Ask for a code (`approve`, step.elicit) before the second half of the work. */
  ask: boolean;
  /** Mixed into every work step's value. */
  salt: number;
  /**
   * The suite's name for this job, reported with every effect: step idempotency keys no longer carry the task id,
   * so this is how the counter's hits are told apart by job.
   */
  job: string;
}

/**
 * The name of the error a step body throws when its report to the counter did not come back 2xx: the request failed
 * (refused, reset, lost) or the counter answered an error status. The counter records a hit only before it answers
 * 204, so such an attempt's effect is missing from the counter's record (or, when only the answer was lost, there
 * once). The load suite recognises such an attempt in the step's attempt history by this name (load-checks.ts).
 */
export const COUNTER_REPORT_ERROR = "CounterReportError";

/** What a finished job returns as structuredContent. */
export interface LabJobOutcome {
  /** The value of every work step, in order. */
  values: number[];
  /** For every `do` step, the attempt whose result the journal kept. */
  attempts: Record<string, number>;
  /** The code answered, or the action when the answer was not an accept. */
  answer: string | null;
}

/** The value work step `index` returns: deterministic in the input, so the tests can check the final result. */
export const workValue = (salt: number, index: number) => salt * 1000 + index * index;

/** Every step name of a job, in the order the handler reaches them. */
export function stepOrder(args: LabJobArgs): string[] {
  const half = Math.ceil(args.steps / 2);
  const names: string[] = [];
  for (let i = 0; i < half; i++) names.push(`work ${i}`);
  if (args.sleepMs > 0) names.push("nap");
  if (args.flaky) names.push("flaky");
  if (args.ask) names.push("approve");
  for (let i = half; i < args.steps; i++) names.push(`work ${i}`);
  return names;
}

/** The `do` steps of a job (the ones with an external effect), in order. */
export const effectSteps = (args: LabJobArgs) => stepOrder(args).filter((name) => name !== "nap" && name !== "approve");
