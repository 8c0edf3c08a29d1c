import type { Duration } from "./duration.js";
import type { StepConfig } from "./retry-policy.js";

/**
 * Step results are stored as JSON: return plain data.
 * @example
 * ```ts
 * import type { Serializable } from "durable-mcp-server";
 *
 * const row: Serializable = { region: "emea", totals: [1, 2, 3], final: true };
 * ```
 */
export type Serializable =
  | string
  | number
  | boolean
  | null
  | undefined
  | Serializable[]
  | { [key: string]: Serializable };

/**
 * What a `step.do` body receives.
 * @example
 * ```ts
 * import type { Step, StepAttempt } from "durable-mcp-server";
 *
 * const send = async ({ attempt, idempotencyKey, signal }: StepAttempt) => {
 *   const headers = { "Idempotency-Key": idempotencyKey };
 *   const response = await fetch("https://mail.example.com/send", { method: "POST", headers, signal });
 *   return { status: response.status, attempt };
 * };
 * const run = (step: Step) => step.do("send", send);
 * ```
 */
export interface StepAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborts when the task is cancelled or the attempt times out. Pass it to fetch and friends. */
  signal: AbortSignal;
  /** Stable across attempts and replays of this step: hand it to external APIs to dedupe side effects. */
  idempotencyKey: string;
}

/**
 * An elicitation (form mode), as in the MCP `elicitation/create` request.
 * @example
 * ```ts
 * import type { ElicitRequest } from "durable-mcp-server";
 *
 * const request: ElicitRequest = {
 *   message: "Send the report?",
 *   requestedSchema: { type: "object", properties: { send: { type: "boolean" } }, required: ["send"] },
 * };
 * ```
 */
export interface ElicitRequest {
  message: string;
  requestedSchema: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * The client's answer to an elicitation, as in the MCP `elicitation/create` result.
 * @example
 * ```ts
 * import type { ElicitResult } from "durable-mcp-server";
 *
 * const accepted = (result: ElicitResult) => result.action === "accept" && result.content?.["send"] === true;
 * ```
 */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Any request a task may put to the client while it waits in `input_required`.
 * @example
 * ```ts
 * import type { InputRequest } from "durable-mcp-server";
 *
 * const request: InputRequest = { method: "roots/list", params: {} };
 * ```
 */
export interface InputRequest {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params: Record<string, unknown>;
}

/**
 * Options of an input step (`step.elicit`, `step.requestInput`).
 * @example
 * ```ts
 * import type { InputOptions } from "durable-mcp-server";
 *
 * const options: InputOptions = { timeout: "1 day" };
 * ```
 */
export interface InputOptions {
  /** When no answer came by then, the step throws `InputTimeoutError` (on this run and every replay). */
  timeout?: Duration;
}

/**
 * The durable step API a task handler is written with. A name may be used again: each use is its own step, keyed
 * by (name, occurrence), as in Cloudflare Workflows.
 * @example
 * ```ts
 * import type { Step } from "durable-mcp-server";
 *
 * async function handler(step: Step) {
 *   const order = await step.do("create order", async ({ idempotencyKey }) => ({ id: idempotencyKey }));
 *   await step.sleep("settle", "10 minutes");
 *   const event = await step.waitForEvent("paid", { type: "payment.settled", timeout: "1 day" });
 *   return { order: order.id, paid: event.payload };
 * }
 * ```
 */
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
  /**
   * Waits for an event of `options.type` sent to this task (`mcp.sendEvent`, or a POST to a `step.webhookUrl`);
   * takes the oldest one already buffered, if any. The task stays `working` meanwhile. Throws EventTimeoutError
   * once `timeout` (default 24 hours) passes first — on this run and every replay.
   */
  waitForEvent<T extends Serializable = Serializable>(
    name: string,
    options: WaitForEventOptions,
  ): Promise<TaskEvent<T>>;
  /**
   * A signed URL that accepts one JSON POST as an event of `options.type` for this task, until `expiresIn` (default
   * 24 hours). Journaled: a replay returns the same URL. Needs the webhook signing secret (docs/api.md).
   */
  webhookUrl(name: string, options: WebhookUrlOptions): Promise<string>;
  /**
   * A patch marker, for changing a task's code while tasks are in flight (docs/deploy.md): true where the new code
   * path applies — a task that reaches this point for the first time journals the marker and gets true on every
   * replay — false for a task that already ran past this point on the old code. Asked again with the same id in
   * one run, it answers the same. `id` is not a step name: it uses no occurrence of one.
   */
  patched(id: string): Promise<boolean>;
  /**
   * Starts the registered task `options.task` as a child of this one, under the same principal, exactly once (its id
   * is derived from this task's id and the step's label), and waits for it without holding this task's object.
   * Resolves with the child's result (its CallToolResult) once it completes; throws ChildTaskError when it fails, is
   * cancelled or outlives `timeout`, and InvokeError at the call when it cannot be started (nothing started then).
   * Journaled: a replay returns the same result without contacting the child.
   */
  invoke<T = InvokeResult>(name: string, options: InvokeOptions): Promise<T>;
  /** Sets the task's `statusMessage`. Silent while the handler replays journaled steps. */
  status(message: string, options?: { progress?: number }): Promise<void>;
}

/**
 * `step.waitForEvent`'s options.
 * @example
 * ```ts
 * import type { WaitForEventOptions } from "durable-mcp-server";
 *
 * const options: WaitForEventOptions = { type: "payment.settled", timeout: "2 days" };
 * ```
 */
export interface WaitForEventOptions {
  /** The event type to wait for (1 to 100 characters). */
  type: string;
  /** How long to wait before EventTimeoutError. Default 24 hours. */
  timeout?: Duration;
}

/**
 * An event as `step.waitForEvent` resolves it (the shape of Cloudflare Workflows').
 * @example
 * ```ts
 * import type { TaskEvent } from "durable-mcp-server";
 *
 * const amountOf = (event: TaskEvent<{ amount: number }>) => event.payload.amount;
 * ```
 */
export interface TaskEvent<T = Serializable> {
  type: string;
  payload: T;
  /** When the event was sent (or POSTed to its webhook). */
  timestamp: Date;
}

/**
 * `step.webhookUrl`'s options.
 * @example
 * ```ts
 * import type { Step, WebhookUrlOptions } from "durable-mcp-server";
 *
 * const options: WebhookUrlOptions = { type: "payment.settled", expiresIn: "1 day" };
 * const callbackUrl = (step: Step) => step.webhookUrl("payment hook", options);
 * ```
 */
export interface WebhookUrlOptions {
  /** The type of the event a POST to the URL delivers. */
  type: string;
  /** How long the URL works. Default 24 hours. */
  expiresIn?: Duration;
}

// The types of `step.files`. The engine only hands `step.files` out: the host builds it (files/task-files.ts), given
// a way to journal an artifact write as a step, so steps/ depends on nothing of files/.

/**
 * A file as a task's journal keeps it: plain JSON, so it replays like any step result.
 * @example
 * ```ts
 * import type { FileRef } from "durable-mcp-server";
 *
 * const describe = (file: FileRef) => `${file.name} (${file.size} bytes, sha256 ${file.sha256})`;
 * ```
 */
export type FileRef = {
  handle: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  /** Where the owner (with their credentials) downloads it. */
  uri: string;
};

/**
 * An input file a handler reads. Bytes are streamed from R2, never journaled.
 * @example
 * ```ts
 * import type { Step } from "durable-mcp-server";
 *
 * async function countLines(step: Step, handle: string) {
 *   const file = await step.files.open(handle, { param: "file" });
 *   return (await file.text()).split("\n").length;
 * }
 * ```
 */
export interface InputFile extends FileRef {
  stream(): Promise<ReadableStream<Uint8Array>>;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
}

/**
 * The bytes of a file a task writes: text, bytes, or a stream.
 * @example
 * ```ts
 * import type { ArtifactBody } from "durable-mcp-server";
 *
 * const body: ArtifactBody = new TextEncoder().encode("a,b\n1,2\n");
 * ```
 */
export type ArtifactBody = string | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>;

/**
 * A file a task writes with `step.files.write`: its name, type and body (or a function that makes it, called
 * only when the step runs).
 * @example
 * ```ts
 * import type { ArtifactSpec } from "durable-mcp-server";
 *
 * const spec: ArtifactSpec = { name: "report.csv", mimeType: "text/csv", body: () => "a,b\n1,2\n" };
 * ```
 */
export interface ArtifactSpec {
  name: string;
  mimeType?: string;
  /** The bytes, or a function producing them (it runs only when the step runs, not on replay). */
  body: ArtifactBody | (() => ArtifactBody | Promise<ArtifactBody>);
}

/**
 * `step.files`: files in and out of a task handler.
 * @example
 * ```ts
 * import type { Step } from "durable-mcp-server";
 *
 * async function convert(step: Step, handle: string) {
 *   const input = await step.files.open(handle);
 *   const text = await input.text();
 *   return step.files.write("write upper", { name: "upper.txt", mimeType: "text/plain", body: text.toUpperCase() });
 * }
 * ```
 */
export interface TaskFiles {
  /**
   * Opens a file the task's caller uploaded. Throws a RepairableError (`unknown_file`, `file_not_ready`) the task
   * ends with unless the handler catches it; `param` names the task argument that held the handle (default
   * "handle"), so the envelope points the caller at it.
   */
  open(handle: string, options?: { param?: string }): Promise<InputFile>;
  /**
   * Writes an artifact as the step `step`: its bytes go to R2 and it gets a handle the caller can download. Once
   * the step finished, replays return the same FileRef without writing again; a step that runs again after a
   * crash writes the same handle.
   */
  write(step: string, spec: ArtifactSpec): Promise<FileRef>;
}

/** Journals `fn` as the `step.do` named `name`: how `step.files.write` makes an artifact write a step. */
export type FileStep = (name: string, fn: () => Promise<FileRef>) => Promise<FileRef>;

/**
 * `step.invoke`'s options.
 * @example
 * ```ts
 * import type { InvokeOptions } from "durable-mcp-server";
 *
 * const options: InvokeOptions = { task: "render_chart", input: { id: 7 }, timeout: "1 hour", onParentCancel: "cancel" };
 * ```
 */
export interface InvokeOptions {
  /** The registered task to start (the tool name it was registered under). */
  task: string;
  /** Its input, checked against the task's input schema before anything starts. */
  input?: Serializable;
  /** How long to wait before ChildTaskError (`timed_out`); the child itself runs on. Default: as long as it lives. */
  timeout?: Duration;
  /** What happens to the child if this task ends first: "cancel" it (the default) or "abandon" it to run on. */
  onParentCancel?: "cancel" | "abandon";
}

/**
 * What `step.invoke` resolves with by default: the child's CallToolResult, as `tasks/result` would give it.
 * @example
 * ```ts
 * import type { InvokeResult } from "durable-mcp-server";
 *
 * const firstText = (result: InvokeResult) => (result.content[0] as { text?: string } | undefined)?.text;
 * ```
 */
export interface InvokeResult {
  content: Serializable[];
  structuredContent?: Record<string, Serializable>;
  isError?: boolean;
}
