import type { DurableObject } from "cloudflare:workers";
import type { FilesSettings } from "../files/file-service.js";
import type { TaskEventLevel } from "../task-events.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";
import type { EventOutcome, WebhookAnswer } from "./event-inbox.js";
import type { TaskRegistry } from "./task-definition.js";
import type { HistoryExport } from "./task-history.js";
import type { LifecycleOutcome } from "./task-lifecycle.js";
import type { RestartPlan, RestartRequest, RestartSeed } from "./task-restart.js";
import type { TaskText } from "./task-view.js";
import type { NewTask } from "./task-store.js";
import type { WebhookSettings } from "./webhook-urls.js";
import type { ChildEntry, NoticeBody } from "./child-shapes.js";
import type { LimitSettings } from "./run-slot.js";

// The TaskRunner's contract, apart from the class that implements it (task-runner.ts): most of its users (the router,
// RunnerClient, the facade, the tests) need only these types.

export interface TaskRunnerOptions<Env> {
  /** Builds the author's server; the runner looks task handlers up in it by tool name. */
  registry: (env: Env) => TaskRegistry;
  /** A run hands off to a fresh alarm after this long, well before the alarm's 15-minute wall limit. */
  alarmBudgetMs?: number;
  /** How long a finished or expired task stays readable after its TTL, before it is purged. */
  purgeGraceMs?: number;
  /** Which task events are logged as JSON lines (default "problems": docs/observability.md). */
  events?: TaskEventLevel;
  /** The deployment's file settings: `step.files`, and step results too large for the journal spill to R2. */
  files?: FilesSettings;
  /** The per-principal TaskIndex binding, when there is one: a purged task leaves its principal's index. */
  indexBinding?: string;
  /** The task catalog's D1 binding, when there is one: the runner writes its task's row after every change. */
  catalogBinding?: string;
  /**
   * The binding this TaskRunner class is bound under in the Worker (durableMcp passes its `binding`): how a task
   * creates its children (`step.invoke`) and a child tells its parent. Without it `step.invoke` throws.
   */
  runnerBinding?: string;
  /** Where webhook URLs point and which secret signs them (default `/webhooks`, `WEBHOOK_URL_SECRET`). */
  webhooks?: WebhookSettings;
  /** Concurrency limits (a TaskLimiter binding, named and per-principal limits): runs take a slot first. */
  limits?: LimitSettings;
}

/** The `principal` binding every call carries: a foreign principal sees exactly what an unknown id sees. */
export interface TaskAccess {
  taskId: string;
  principal: string;
}

export type TaskListener = (task: DetailedTask) => void;

export interface UpdateOutcome {
  accepted: string[];
  invalid?: { key: string; path: string; message: string };
}

/**
 * The RPC surface of a TaskRunner. Every method is idempotent, which is what makes retrying it safe.
 * @example
 * ```ts
 * import type { TaskRunnerRpc } from "durable-mcp-server";
 *
 * type Methods = keyof TaskRunnerRpc;
 * const read: Methods = "get";
 * ```
 */
export interface TaskRunnerRpc {
  /**
   * Pre-creates this object for a task id not handed out yet (the router's pool, tasks/runner-pool.ts): applies the
   * schema and arms an alarm FIRST_RUN_FALLBACK_MS ahead (a create within it keeps that alarm as its first run's
   * fallback; otherwise it re-arms at the deadline), deleting its storage unless a create claims it within
   * PREPARED_RUNNER_TTL_MS. Binds no principal and creates no task: until `create`, every call answers exactly as for
   * an unknown id. False (and nothing changed) when the object already holds a task.
   */
  prepare(): Promise<boolean>;
  /**
   * Creates the task. The same id, principal, tool and input again returns the existing task (a retried or
   * deduplicated call joins it); the same id for anything else returns null and changes nothing.
   */
  create(task: NewTask): Promise<Task | null>;
  /** With `steps`, the task's `_meta` carries the step timeline (STEPS_META). */
  get(access: TaskAccess, options?: { steps?: boolean }): Promise<DetailedTask | null>;
  /** `get` without the timeline, as JSON text (the `tasks/get` fast path passes it through unparsed). */
  getText(access: TaskAccess): Promise<TaskText | null>;
  /**
   * Answers are keyed: a repeated answer finds its key no longer outstanding and is ignored. An answer to an
   * outstanding key that does not fit its question is reported in `invalid`, and then nothing is recorded.
   */
  update(access: TaskAccess, responses: Record<string, unknown>): Promise<UpdateOutcome | null>;
  /** The first ending wins; cancelling again is a no-op. */
  cancel(access: TaskAccess): Promise<boolean>;
  /**
   * An operator's pause: a live task stops at its next step boundary (a running step body finishes) and its due
   * alarms wait; it reads `working` with a status message that says paused (`input_required` stays so). Pausing
   * again changes nothing; a final task is refused. Null when the task is unknown.
   */
  pause(access: TaskAccess): Promise<LifecycleOutcome | null>;
  /** Resumes a paused task where it stopped (not paused: no change); a final task is refused. Null: unknown. */
  resume(access: TaskAccess): Promise<LifecycleOutcome | null>;
  /**
   * A restart from a step (`fromStep`, a label `name#n`) or a retry (null) of this final task, as a new task: its id
   * (derived from this task, the step and `requestKey`, so a retried request gets the same one), this task's link to
   * it, and the seed the new task's runner takes (`seedRestart`); or why not (still running, no such step, a kept
   * step that never settled). Null when the task is unknown or purged. See runner/task-restart.ts for what is kept.
   */
  planRestart(access: TaskAccess, request: RestartRequest): Promise<RestartPlan | null>;
  /** Called on the new task's runner: creates it from `seed` in one transaction; again: the same task (or null). */
  seedRestart(seed: RestartSeed): Promise<Task | null>;
  /** On the original once the new task is seeded: the link shows from now on. False: no such link. */
  confirmRestart(access: TaskAccess, newTaskId: string): Promise<boolean>;
  /** The task plus the tool that created it, for views that name the tool. */
  inspect(access: TaskAccess): Promise<{ tool: string; task: DetailedTask } | null>;
  /** Resolves once the task is final or waits for input, or as it stands after `timeoutMs`. */
  awaitSettled(access: TaskAccess, timeoutMs: number): Promise<DetailedTask | null>;
  /**
   * The task as newline-delimited JSON, now and after every change, until it is final; "too_many_streams" when the
   * task already serves MAX_STREAMS_PER_TASK.
   */
  watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null | TooManyStreams>;
  /**
   * Trusted code's event for task `taskId` (`mcp.sendEvent`): given to the oldest wait of its type, else buffered.
   * With `principal`, another principal's task is refused as unknown. `payload` is JSON text.
   */
  sendEvent(taskId: string, event: { type: string; payload: string }, principal?: string): Promise<EventOutcome>;
  /**
   * The task's history (steps/history-format.ts) as JSON text, for an operator's replay check (`mcp.exportHistory`):
   * spilled results included, never the step-key salt. With `principal`, another principal's task is refused as
   * unknown; a history over MAX_HISTORY_BYTES is refused as too large.
   */
  exportHistory(taskId: string, principal?: string): Promise<HistoryExport>;
  /**
   * A POST to webhook `hookId` of task `taskId`, its signature already checked by the route: delivered once; an
   * identical repeat gets the first answer, a different body 409.
   */
  deliverWebhook(taskId: string, hook: { hookId: string; type: string; payload: string }): Promise<WebhookAnswer>;
  /**
   * Writes the task's catalog row again as it stands, as a new version (the operator's reconcile): "gone" when this
   * object holds no task `taskId`, "off" when the deployment has no catalog.
   */
  refreshCatalog(taskId: string): Promise<"refreshed" | "gone" | "off">;
  /**
   * A child task's final state, from the child's outbox (runner/child-outbox.ts): recorded once (a repeat changes
   * nothing), its invoke step completed and this task woken. "gone" when this object holds no task of that id.
   */
  childFinished(notice: NoticeBody): Promise<"recorded" | "gone">;
  /**
   * The children task `taskId` started with `step.invoke`, oldest first; null when unknown (with `principal`, another
   * principal's task is unknown too).
   */
  children(taskId: string, principal?: string): Promise<ChildEntry[] | null>;
  /**
   * A TaskLimiter granted this waiting task a slot: run as soon as possible. False when the task no longer wants one
   * (unknown, or final), so the limiter gives the slot to the next.
   */
  limiterWake(taskId: string): Promise<boolean>;
}

/**
 * The Durable Object class `defineTaskRunner` builds; export it from the Worker under its binding's class name.
 * @example
 * ```ts
 * import { durableMcp, McpServer, type TaskRunnerClass } from "durable-mcp-server";
 *
 * const mcp = durableMcp(() => new McpServer({ name: "reports", version: "1.0.0" }));
 * export const TaskRunner: TaskRunnerClass<unknown> = mcp.TaskRunner;
 * ```
 */
export type TaskRunnerClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & TaskRunnerRpc;

/** `watch`'s answer when the task already serves MAX_STREAMS_PER_TASK streams. */
export type TooManyStreams = "too_many_streams";
