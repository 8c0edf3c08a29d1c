import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";
import { TaskProtocolError } from "../errors/errors.js";
import { toJsonRpcError } from "../errors/jsonrpc.js";
import { envelopeFor, toolErrorResult, toToolResult } from "../errors/envelope.js";
import { runWithJournal, type EngineHost, type RunOutcome } from "../steps/engine.js";
import { FileService, type FilesSettings } from "../files/file-service.js";
import { deleteSpilledResults, resultSpill } from "../files/result-spill.js";
import { createTaskFiles } from "../files/task-files.js";
import { StepJournal, stepLabel } from "../steps/journal.js";
import { expiryOf } from "../util/expiry.js";
import { STEPS_META } from "../wire/meta-keys.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";
import { missingInputCapability } from "../wire/input-capabilities.js";
import {
  FIRST_RUN_FALLBACK_MS,
  MAX_KEPT_RESULT_CHARS,
  MAX_RUN_FAILURES,
  PREPARED_RUNNER_TTL_MS,
  SEAM_RUN_WAIT_MS,
  TIMELINE_LIMIT,
} from "../limits.js";
import { checkInputAnswer } from "./elicit-answer.js";
import { taskIndexOf } from "./task-index.js";
import { EventInbox, sha256Hex, waitingMessage, type EventOutcome, type WebhookAnswer } from "./event-inbox.js";
import { DEFAULT_WEBHOOK_SETTINGS, webhookSigner, type WebhookSettings } from "./webhook-urls.js";
import { toDetailedTask, toTask, toTaskText, type TaskText } from "./task-view.js";
import { migrate, schemaVersion } from "./schema.js";
import { taskEventLog, type TaskEventFields, type TaskEventLevel, type TaskEventSink } from "../task-events.js";
import { taskDefinitionOf, type TaskRegistry } from "./task-definition.js";
import {
  applyTestingOp,
  assertTestingEnabled,
  TESTING_SEAM,
  TestingSeamError,
  type TestingAnswer,
  type TestingOp,
} from "./testing-seam.js";
import {
  FINAL_STATUSES,
  TaskStore,
  type Ending,
  type NewTask,
  type TaskRecord,
  type TaskStatus,
} from "./task-store.js";

export interface TaskRunnerOptions<Env> {
  /** Builds the author's server; the runner looks task handlers up in it by tool name. */
  registry: (env: Env) => TaskRegistry;
  /** A run hands off to a fresh alarm after this long, well before the alarm's 15-minute wall limit. */
  alarmBudgetMs?: number;
  /** How long a finished or expired task stays readable after its TTL, before it is purged. */
  purgeGraceMs?: number;
  /** Which task events are logged as JSON lines (default "task"). */
  events?: TaskEventLevel;
  /** The deployment's file settings: `step.files`, and step results too large for the journal spill to R2. */
  files?: FilesSettings;
  /** The per-principal TaskIndex binding, when there is one: a purged task leaves its principal's index. */
  indexBinding?: string;
  /** Where webhook URLs point and which secret signs them (default `/webhooks`, `WEBHOOK_URL_SECRET`). */
  webhooks?: WebhookSettings;
}

const DEFAULT_ALARM_BUDGET_MS = 10 * 60_000;
const DEFAULT_PURGE_GRACE_MS = 60_000;

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

/** The RPC surface of a TaskRunner. Every method is idempotent, which is what makes retrying it safe. */
export interface TaskRunnerRpc {
  /**
   * Pre-creates this object for a task id not handed out yet (the router's pool, routing/runner-pool.ts): applies the
   * schema and arms an alarm that deletes its storage unless a create claims it within PREPARED_RUNNER_TTL_MS. Binds
   * no principal and creates no task: until `create`, every call answers exactly as for an unknown id. False (and
   * nothing changed) when the object already holds a task.
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
  /** The task plus the tool that created it, for views that name the tool. */
  inspect(access: TaskAccess): Promise<{ tool: string; task: DetailedTask } | null>;
  /** Resolves once the task is final or waits for input, or as it stands after `timeoutMs`. */
  awaitSettled(access: TaskAccess, timeoutMs: number): Promise<DetailedTask | null>;
  /** The task as newline-delimited JSON, now and after every change, until it is final. */
  watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * Trusted code's event for task `taskId` (`mcp.sendEvent`): given to the oldest wait of its type, else buffered.
   * With `principal`, another principal's task is refused as unknown. `payload` is JSON text.
   */
  sendEvent(taskId: string, event: { type: string; payload: string }, principal?: string): Promise<EventOutcome>;
  /**
   * A POST to webhook `hookId` of task `taskId`, its signature already checked by the route: delivered once; an
   * identical repeat gets the first answer, a different body 409.
   */
  deliverWebhook(taskId: string, hook: { hookId: string; type: string; payload: string }): Promise<WebhookAnswer>;
}

/** The Durable Object class `defineTaskRunner` builds; export it from the Worker under its binding's class name. */
export type TaskRunnerClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & TaskRunnerRpc;

/**
 * Builds the TaskRunner Durable Object class for an author's server: one object per task, holding the task
 * record and its step journal in SQLite, and driving the handler from its single alarm.
 */
export function defineTaskRunner<Env = unknown>(options: TaskRunnerOptions<Env>): TaskRunnerClass<Env> {
  const alarmBudgetMs = options.alarmBudgetMs ?? DEFAULT_ALARM_BUDGET_MS;
  const purgeGraceMs = options.purgeGraceMs ?? DEFAULT_PURGE_GRACE_MS;
  const eventLevel = options.events ?? "task";
  // The author's server, built once per isolate and env rather than once per object: every task is a new object, and
  // a run only looks its handler up (building a whole McpServer with its schemas is the bulk of a run's start).
  const registries = new WeakMap<object, TaskRegistry>();
  const registryFor = (env: Env): TaskRegistry => {
    const key = env as object;
    let registry = registries.get(key);
    if (!registry) registries.set(key, (registry = options.registry(env)));
    return registry;
  };

  return class TaskRunner extends DurableObject<Env> implements TaskRunnerRpc {
    private store = new TaskStore(this.ctx.storage.sql);
    private journal = new StepJournal(this.ctx.storage.sql);
    private inbox = new EventInbox(this.ctx.storage.sql);
    private ready = false;
    /** Aborted on cancel: the signals of this instance's in-flight step attempts. */
    private controllers = new Set<AbortController>();
    private listeners = new Set<TaskListener>();
    /** A run should start as soon as possible (an answer arrived, or a run handed off). */
    private wakeRequested = false;
    private running = false;
    private registry: TaskRegistry | undefined;
    /** Set when a cancel wins in this instance: what a run under way checks at every step boundary. */
    private cancelled = false;
    /** Consecutive runs of this instance that failed outside the handler. */
    private runFailures = 0;
    /**
     * The last `getText` answer and the record it was built from. The store hands out one record object until its
     * next write, so the answer is current exactly while `record` is still what the store reads.
     */
    private answered: { record: TaskRecord; text: TaskText } | undefined;

    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      // Bring an existing task's schema up to date before any request or alarm reads it. An untouched object
      // (an unknown id) gets no tables: reads must not create storage.
      const version = schemaVersion(ctx.storage.sql);
      if (version > 0) migrate(ctx.storage, version);
      this.ready = version > 0;
    }

    async prepare(): Promise<boolean> {
      if (!this.ready) {
        migrate(this.ctx.storage, 0);
        this.store.forget();
        this.ready = true;
      }
      if (this.store.read()) return false;
      await this.ctx.storage.setAlarm(Date.now() + PREPARED_RUNNER_TTL_MS);
      return true;
    }

    /**
     * Creates the task and starts its first run right after this reply's commit, the alarm (FIRST_RUN_FALLBACK_MS
     * ahead) being the durable fallback; see TaskRunnerRpc.create for repeated ids.
     */
    async create(task: NewTask): Promise<Task | null> {
      if (!this.ready) {
        migrate(this.ctx.storage, 0);
        this.store.forget();
        this.ready = true;
      }
      const existing = this.store.read();
      if (existing) {
        const same =
          existing.principal === task.principal && existing.tool === task.tool && existing.input === task.input;
        return same ? toTask(existing) : null;
      }
      const now = Date.now();
      this.cancelled = false;
      this.store.insert(task, now);
      await this.ctx.storage.setAlarm(now + FIRST_RUN_FALLBACK_MS);
      const created = toTask(this.store.read()!);
      // Once the record is durable — when the output gate lets this reply go — log the line and start the run here,
      // instead of after an alarm hop. Neither holds the reply; if this instance dies first, the alarm runs the task.
      void this.ctx.storage.sync().then(() => {
        taskEventLog(eventLevel, task)("task_created", { ttlMs: task.ttlMs });
        return this.startFirstRun();
      });
      return created;
    }

    /** The first run, started by create. The alarm's guards apply: never two runs at once, nothing for a final task. */
    private async startFirstRun(): Promise<void> {
      try {
        await this.runDue();
      } catch {
        // Already logged as run_failed; the alarm armed at create retries it, as it retries a failing alarm run.
      }
    }

    async get(access: TaskAccess, query: { steps?: boolean } = {}): Promise<DetailedTask | null> {
      const record = this.owned(access);
      if (!record) return null;
      const task = this.detailed(record);
      if (query.steps) task._meta = { ...task._meta, [STEPS_META]: this.journal.timeline(TIMELINE_LIMIT) };
      return task;
    }

    async getText(access: TaskAccess): Promise<TaskText | null> {
      const record = this.owned(access);
      if (!record) return null;
      if (this.answered?.record === record) return this.answered.text;
      const text = toTaskText(this.detailed(record));
      // An input_required view also lists the pending questions, which the journal changes without the row: not kept.
      // Nor is a large answer (its record is not kept either, so it would never be used again).
      const keep = record.status !== "input_required" && text.body.length <= MAX_KEPT_RESULT_CHARS;
      this.answered = keep ? { record, text } : undefined;
      return text;
    }

    /** Records answers for outstanding input keys; others are ignored. Null when the task is unknown. */
    async update(access: TaskAccess, responses: Record<string, unknown>): Promise<UpdateOutcome | null> {
      const record = this.owned(access);
      if (!record) return null;
      if (FINAL_STATUSES.has(record.status)) return { accepted: [] };
      const asked = new Map(
        this.journal
          .pendingInputs()
          .map((step) => [stepLabel(step.name, step.occurrence), JSON.parse(step.request ?? "{}")]),
      );
      for (const [key, value] of Object.entries(responses)) {
        const problem = asked.has(key) ? checkInputAnswer(asked.get(key), value) : null;
        if (problem) return { accepted: [], invalid: { key, ...problem } };
      }
      const now = Date.now();
      const accepted = Object.entries(responses)
        .filter(([key, value]) => value !== undefined && this.journal.answerInput(key, JSON.stringify(value), now))
        .map(([key]) => key);
      if (accepted.length > 0) {
        this.events(record)("input_answered", { keys: accepted.join(",") });
        this.syncInputStatus(now);
        this.wakeRequested = true;
        await this.arm(now);
      }
      return { accepted };
    }

    /** Cooperative cancel: the first ending wins, so a task that already finished stays as it is. */
    async cancel(access: TaskAccess): Promise<boolean> {
      const record = this.owned(access);
      if (!record) return false;
      if (this.finish({ status: "cancelled" })) {
        this.cancelled = true;
        for (const controller of this.controllers) controller.abort(new Error("task cancelled"));
        await this.arm(Date.now());
      }
      return true;
    }

    async inspect(access: TaskAccess): Promise<{ tool: string; task: DetailedTask } | null> {
      const record = this.owned(access);
      return record ? { tool: record.tool, task: this.detailed(record) } : null;
    }

    /** Resolves once the task is final or waits for input, or as it stands when `timeoutMs` runs out. */
    async awaitSettled(access: TaskAccess, timeoutMs: number): Promise<DetailedTask | null> {
      const record = this.owned(access);
      if (!record) return null;
      if (settled(record.status)) return this.detailed(record);
      return new Promise<DetailedTask>((resolve) => {
        const done = (task: DetailedTask) => {
          clearTimeout(timer);
          this.listeners.delete(listener);
          resolve(task);
        };
        const listener: TaskListener = (task) => {
          if (settled(task.status)) done(task);
        };
        const timer = setTimeout(() => {
          const current = this.store.read();
          done(current ? this.detailed(current) : this.detailed(record));
        }, timeoutMs);
        this.listeners.add(listener);
      });
    }

    /**
     * A stream of the task as newline-delimited JSON: now, then after every change, closing once it is final.
     * Null when the task is unknown to this principal.
     */
    async watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null> {
      const record = this.owned(access);
      if (!record) return null;
      const encoder = new TextEncoder();
      let listener: TaskListener | undefined;
      return new ReadableStream<Uint8Array>({
        start: (controller) => {
          listener = (task) => {
            controller.enqueue(encoder.encode(`${JSON.stringify(task)}\n`));
            if (FINAL_STATUSES.has(task.status)) {
              this.listeners.delete(listener!);
              controller.close();
            }
          };
          this.listeners.add(listener);
          listener(this.detailed(record));
        },
        cancel: () => {
          if (listener) this.listeners.delete(listener);
        },
      });
    }

    async sendEvent(
      taskId: string,
      event: { type: string; payload: string },
      principal?: string,
    ): Promise<EventOutcome> {
      const record = this.ready ? this.store.read() : null;
      const unknown =
        !record || record.taskId !== taskId || (principal !== undefined && principal !== record.principal);
      if (unknown || (record.purgeAt !== null && Date.now() >= record.purgeAt)) {
        return { refused: "unknown_task", message: `no task ${taskId}` };
      }
      return this.acceptEvent(record, event.type, event.payload, "send");
    }

    async deliverWebhook(
      taskId: string,
      hook: { hookId: string; type: string; payload: string },
    ): Promise<WebhookAnswer> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== taskId || (record.purgeAt !== null && Date.now() >= record.purgeAt)) {
        return { status: 404, body: { error: "unknown_task", message: "no such task" } };
      }
      const sha256 = await sha256Hex(hook.payload);
      const prior = this.inbox.delivery(hook.hookId);
      if (prior) {
        if (prior.sha256 === sha256) return prior.answer;
        return {
          status: 409,
          body: { error: "already_delivered", message: "this webhook already delivered a different body" },
        };
      }
      const outcome = await this.acceptEvent(record, hook.type, hook.payload, "webhook");
      if ("refused" in outcome) {
        // Refused bodies are not recorded: the sender may try again once the inbox has room.
        const status = outcome.refused === "task_finished" ? 410 : outcome.refused === "buffer_full" ? 429 : 400;
        return { status, body: { error: outcome.refused, message: outcome.message } };
      }
      const answer: WebhookAnswer = { status: 202, body: { ...outcome, type: hook.type } };
      this.inbox.recordDelivery(hook.hookId, sha256, answer, Date.now());
      return answer;
    }

    /**
     * Gives an event to the oldest wait of its type, or buffers it; wakes the task for a delivered one. Synchronous up
     * to the alarm write, so its journal or inbox write never interleaves with a run's take.
     */
    private async acceptEvent(record: TaskRecord, type: string, payload: string, via: string): Promise<EventOutcome> {
      if (FINAL_STATUSES.has(record.status)) {
        return { refused: "task_finished", message: `task ${record.taskId} is ${record.status}` };
      }
      const now = Date.now();
      const stored = { type, payload, sentAt: now };
      const step = this.journal.deliverEvent(type, JSON.stringify(stored), now);
      if (step === null) {
        if (!this.inbox.add(stored)) {
          this.events(record)("event_refused", { type, via, reason: "buffer_full" });
          return { refused: "buffer_full", message: `task ${record.taskId} already keeps as many events as it may` };
        }
        this.events(record)("event_buffered", { type, via });
        return { outcome: "buffered" };
      }
      this.events(record)("event_delivered", { type, via, step });
      // The wait's status message is over once its event came; the handler's own messages are left alone.
      if (record.statusMessage === waitingMessage(step, type))
        this.store.setMessage(`received event "${type}"`, record.progress, now);
      this.notify();
      this.wakeRequested = true;
      await this.arm(now);
      return { outcome: "delivered", step };
    }

    /**
     * The test-only seam (runner/testing-seam.ts, docs/testing.md): refused unless the env has DURABLE_MCP_TESTING.
     * Deliberately not in TaskRunnerRpc. It waits for a run under way to end, so it never writes under one. Off, it
     * throws; on, a misuse is answered as a refusal.
     */
    async [TESTING_SEAM](op: TestingOp): Promise<TestingAnswer> {
      assertTestingEnabled(this.env);
      for (let waitedMs = 0; this.running; waitedMs += 10) {
        if (waitedMs >= SEAM_RUN_WAIT_MS) {
          throw new Error(`a run of this task is still under way after ${SEAM_RUN_WAIT_MS / 1000} s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // A step outcome may be injected before the task exists: its journal is then waiting for it.
      if (!this.ready && op?.op === "inject") {
        migrate(this.ctx.storage, 0);
        this.store.forget();
        this.ready = true;
      }
      const record = this.ready ? this.store.read() : null;
      const now = Date.now();
      let reply;
      try {
        reply = applyTestingOp(op, record, this.journal, now);
      } catch (error) {
        if (error instanceof TestingSeamError) return { ok: false, refused: error.message };
        throw error;
      }
      // The alarm already set stays as it is, so that the kit's runDurableObjectAlarm runs it (and the run) now,
      // rather than racing one that fires by itself; only a task with no alarm gets one.
      if (reply.wake && record && (await this.ctx.storage.getAlarm()) === null) {
        this.wakeRequested = true;
        await this.arm(now);
      }
      return { ok: true, reply };
    }

    override async alarm(): Promise<void> {
      // Ready without a record: a prepared runner that no create claimed by its deadline.
      if (this.ready && !this.store.read()) return this.discardUnclaimed();
      return this.runDue();
    }

    /** What the alarm does for a task: purge, expire, or run it (the first run also comes here, from create). */
    private async runDue(): Promise<void> {
      if (!this.ready) return;
      const record = this.store.read();
      if (!record) return;
      if (this.running) {
        // Alarms are at-least-once: a second delivery while a run is under way must not start a second,
        // concurrent replay. The run under way re-arms at its end and sees this request.
        this.wakeRequested = true;
        // This delivery is now consumed, and a run that create started has no alarm in flight behind it: keep one
        // armed, so that if this instance dies before that run re-arms at its end, the alarm resumes the task.
        await this.ctx.storage.setAlarm(Date.now() + FIRST_RUN_FALLBACK_MS);
        return;
      }
      const now = Date.now();
      if (record.purgeAt !== null && now >= record.purgeAt) {
        this.events(record)("task_purged");
        return this.purge();
      }
      const expiresAt = expiryOf(record.createdAt, record.ttlMs);
      if (expiresAt !== null && now >= expiresAt && !FINAL_STATUSES.has(record.status)) {
        this.events(record)("task_expired", { ttlMs: record.ttlMs });
        this.finish({
          status: "failed",
          error: {
            code: ProtocolErrorCode.InternalError,
            message: "task expired before it finished",
            data: { reason: "expired" },
          },
        });
        return this.arm(now);
      }
      if (FINAL_STATUSES.has(record.status)) return this.arm(now);
      try {
        await this.runHandler(record, now);
        this.runFailures = 0;
      } catch (error) {
        // Not the handler's failure (those end the task) but the runtime's: building the server, the journal.
        // The platform retries a throwing alarm; after a few failures in a row the task fails visibly instead.
        this.runFailures++;
        const message = error instanceof Error ? error.message : String(error);
        this.events(record)("run_failed", { error: message, failures: this.runFailures });
        if (this.runFailures < MAX_RUN_FAILURES) throw error;
        this.finish({
          status: "failed",
          error: {
            code: ProtocolErrorCode.InternalError,
            message: `task runtime error: ${message}`,
            data: { reason: "runtime_error" },
          },
        });
      }
      await this.arm(Date.now());
    }

    private async runHandler(record: TaskRecord, startedAt: number): Promise<void> {
      // The author's server is built once per isolate, not once per run: only its handlers are needed here.
      this.registry ??= registryFor(this.env);
      const definition = this.registry[taskDefinitionOf](record.tool);
      if (!definition) {
        this.finish({
          status: "failed",
          error: {
            code: ProtocolErrorCode.InternalError,
            message: `no task named "${record.tool}" is registered in this deployment`,
          },
        });
        return;
      }
      this.running = true;
      // The run below reads the journal afresh, so it sees every answer recorded until now.
      this.wakeRequested = false;
      const event = this.events(record);
      event("run_started");
      let outcome: RunOutcome;
      try {
        outcome = await runWithJournal(definition.handler, JSON.parse(record.input), {
          taskId: record.taskId,
          stepKeySalt: stepKeySaltOf(record),
          journal: this.journal,
          now: () => Date.now(),
          // A run starts only on a live task, and a cancel reaches the instance that runs it, so memory suffices.
          isCancelled: () => this.cancelled,
          setStatus: (message, progress) => {
            if (this.store.setMessage(message, progress ?? null, Date.now())) this.notify();
          },
          inputRequested: () => this.syncInputStatus(Date.now()),
          // Only what the creating request declared can be asked (null: through the facade, anything).
          inputUnavailable: (request) => missingInputCapability(request, record.clientCapabilities),
          handoffAt: startedAt + alarmBudgetMs,
          controllers: this.controllers,
          event,
          stepEvents: eventLevel === "all",
          events: this.eventHost(record),
          ...this.fileHosts(record),
        });
      } finally {
        this.running = false;
      }
      // Steps the journal still holds are written before the outcome is: a write that failed fails the run here.
      this.journal.flush();
      this.settle(outcome, record);
    }

    private settle(outcome: RunOutcome, record: TaskRecord): void {
      switch (outcome.kind) {
        case "returned":
          this.finish({ status: "completed", result: toToolResult(outcome.value) });
          return;
        case "threw":
          if (outcome.error instanceof TaskProtocolError) {
            this.finish({ status: "failed", error: toJsonRpcError(outcome.error) });
          } else {
            const envelope = envelopeFor(outcome.error, this.journal.completedSteps());
            this.finish(
              { status: "completed", result: toolErrorResult(envelope) },
              { isError: true, code: envelope.code, error: envelope.message },
            );
          }
          return;
        case "diverged":
          this.events(record)("replay_diverged", { error: outcome.error.message });
          this.finish({ status: "failed", error: toJsonRpcError(outcome.error) });
          return;
        case "suspended":
          // An input step may have timed out during the run; the live status follows the pending inputs.
          this.syncInputStatus(Date.now());
          if (outcome.immediate) this.wakeRequested = true;
          this.events(record)(outcome.immediate ? "run_handed_off" : "run_suspended");
          return;
        case "cancelled":
          return;
      }
    }

    /** Arms the one alarm at the earliest thing this task waits for: a step, the TTL, or the purge. */
    private async arm(now: number): Promise<void> {
      const record = this.store.read();
      if (!record) return;
      let next: number | null;
      if (FINAL_STATUSES.has(record.status)) {
        // A final task waits for nothing but its purge, whatever steps were still pending when it ended.
        next = record.purgeAt;
      } else {
        const expiresAt = expiryOf(record.createdAt, record.ttlMs);
        const candidates = [this.journal.nextWake(), expiresAt, this.wakeRequested ? now : null];
        const due = candidates.filter((t): t is number => t !== null);
        next = due.length > 0 ? Math.min(...due) : null;
      }
      // While a run is under way its own re-arm at the end must still see the request.
      if (!this.running) this.wakeRequested = false;
      if (next === null) {
        await this.ctx.storage.deleteAlarm();
        return;
      }
      // Re-arming at or before the alarm now firing can be lost locally; always move strictly forward.
      await this.ctx.storage.setAlarm(Math.max(next, Date.now() + 1));
    }

    /** Writes a final status if none was written yet; notifies watchers and logs it. Returns whether it won. */
    private finish(ending: Ending, fields: TaskEventFields = {}): boolean {
      const record = this.store.read();
      if (!record) return false;
      const now = Date.now();
      const expiresAt = expiryOf(record.createdAt, record.ttlMs);
      // A task without a TTL is kept until someone deletes it; otherwise it goes a grace period after expiry.
      const purgeAt = expiresAt === null ? null : Math.max(expiresAt, now) + purgeGraceMs;
      const won = this.store.end(ending, now, purgeAt);
      if (won) {
        this.notify();
        const event = ending.status === "cancelled" ? "task_cancelled" : "task_finished";
        this.events(record)(event, { status: ending.status, durationMs: now - record.createdAt, ...fields });
      }
      return won;
    }

    private syncInputStatus(now: number): void {
      const pending = this.journal.pendingInputs().length;
      if (this.store.setLiveStatus(pending > 0 ? "input_required" : "working", now)) this.notify();
    }

    private owned(access: TaskAccess): TaskRecord | null {
      if (!this.ready) return null;
      const record = this.store.read();
      if (!record || record.taskId !== access.taskId || record.principal !== access.principal) return null;
      if (record.purgeAt !== null && Date.now() >= record.purgeAt) return null;
      return record;
    }

    private detailed(record: TaskRecord): DetailedTask {
      return toDetailedTask(record, record.status === "input_required" ? this.journal.pendingInputs() : []);
    }

    private notify(): void {
      if (this.listeners.size === 0) return;
      const record = this.store.read();
      if (!record) return;
      const task = this.detailed(record);
      for (const listener of this.listeners) listener(task);
    }

    private events(record: TaskRecord): TaskEventSink {
      return taskEventLog(eventLevel, record);
    }

    /** The inbox and webhook URLs of `step.waitForEvent` / `step.webhookUrl`. */
    private eventHost(record: TaskRecord): NonNullable<EngineHost["events"]> {
      const settings = options.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
      return {
        take: (type) => this.inbox.take(type),
        waiting: (label, type) => {
          const current = this.store.read();
          if (this.store.setMessage(waitingMessage(label, type), current?.progress ?? null, Date.now())) this.notify();
        },
        webhookUrl: (hook) =>
          webhookSigner(this.env, settings).sign(
            settings.publicUrl ?? record.origin ?? "http://localhost",
            settings.path,
            {
              taskId: record.taskId,
              ...hook,
            },
          ),
      };
    }

    /** `step.files` and result spilling, built lazily so that a task that never uses them needs no bindings. */
    private fileHosts(record: TaskRecord): Pick<EngineHost, "files" | "spill"> {
      const settings = options.files;
      if (!settings) return {};
      let service: FileService | undefined;
      const files = () => (service ??= FileService.fromEnv(settings, this.env, record.origin ?? "http://localhost"));
      return {
        files: (doStep) =>
          createTaskFiles({ taskId: record.taskId, principal: record.principal, service: files }, doStep),
        spill: resultSpill(() => files().bucket, record.taskId),
      };
    }

    /**
     * A prepared runner's deadline passed with no create: its storage goes. No call is delivered meanwhile, so a
     * create can never land between the check and the delete (one that came first is found, and kept).
     */
    private async discardUnclaimed(): Promise<void> {
      await this.ctx.blockConcurrencyWhile(async () => {
        if (!this.ready || this.store.read()) return;
        await this.ctx.storage.deleteAlarm();
        await this.ctx.storage.deleteAll();
        this.store.forget();
        this.ready = false;
      });
    }

    private async purge(): Promise<void> {
      const record = this.store.read();
      if (options.files && record) await deleteSpilledResults(this.env, options.files, record.taskId);
      // Before the record goes, so that a failed removal is retried by the alarm with the principal still known.
      const index = options.indexBinding && (this.env as Record<string, unknown>)[options.indexBinding];
      if (index && record) await taskIndexOf(index as DurableObjectNamespace, record.principal).remove(record.taskId);
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.store.forget();
      this.ready = false;
    }
  };
}

/** Settled: nothing more happens without the client (final, or waiting for an answer). */
function settled(status: TaskStatus): boolean {
  return status === "input_required" || FINAL_STATUSES.has(status);
}

/** Every task has a salt (set at creation, or by the schema migration that introduced it). */
function stepKeySaltOf(record: TaskRecord): string {
  if (record.stepKeySalt === null) throw new Error(`task ${record.taskId} has no step-key salt`);
  return record.stepKeySalt;
}
