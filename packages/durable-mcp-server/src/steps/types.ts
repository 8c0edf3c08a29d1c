import type { Duration } from "./duration.js";
import type { StepConfig } from "./retry-policy.js";
import type { TaskFiles } from "../files/task-files.js";

/** Step results are stored as JSON: return plain data. */
export type Serializable =
  | string
  | number
  | boolean
  | null
  | undefined
  | Serializable[]
  | { [key: string]: Serializable };

/** What a `step.do` body receives. */
export interface StepAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborts when the task is cancelled or the attempt times out. Pass it to fetch and friends. */
  signal: AbortSignal;
  /** Stable across attempts and replays of this step: hand it to external APIs to dedupe side effects. */
  idempotencyKey: string;
}

/** An elicitation (form mode), as in the MCP `elicitation/create` request. */
export interface ElicitRequest {
  message: string;
  requestedSchema: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Any request a task may put to the client while it waits in `input_required`. */
export interface InputRequest {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params: Record<string, unknown>;
}

export interface InputOptions {
  /** When no answer came by then, the step throws `InputTimeoutError` (on this run and every replay). */
  timeout?: Duration;
}

/** The durable step API a task handler is written with. Names must be unique within a task. */
export interface Step {
  do<T extends Serializable>(name: string, fn: (attempt: StepAttempt) => Promise<T> | T): Promise<T>;
  do<T extends Serializable>(
    name: string,
    config: StepConfig,
    fn: (attempt: StepAttempt) => Promise<T> | T,
  ): Promise<T>;
  sleep(name: string, duration: Duration): Promise<void>;
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /** Asks the client for input through an elicitation; the task waits in `input_required`. */
  elicit(name: string, request: ElicitRequest, options?: InputOptions): Promise<ElicitResult>;
  /** Asks the client any supported input request; resolves with the client's bare result. */
  requestInput(name: string, request: InputRequest, options?: InputOptions): Promise<unknown>;
  /** Files in and out of the task: open an uploaded file by handle, write an artifact (needs `files`). */
  files: TaskFiles;
  /** Sets the task's `statusMessage`. Silent while the handler replays journaled steps. */
  status(message: string, options?: { progress?: number }): Promise<void>;
}
