import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { TaskProtocolError } from "../errors/errors.js";
import { toJsonRpcError } from "../errors/jsonrpc.js";
import { envelopeFor, toolErrorResult, toToolResult } from "../errors/envelope.js";
import type { FilesSettings } from "../files/file-service.js";
import { deleteSpilledResults } from "../files/result-spill.js";
import { FIRST_RUN_FALLBACK_MS, MAX_RUN_FAILURES } from "../limits.js";
import type { RunOutcome } from "../steps/engine-host.js";
import { runWithJournal } from "../steps/engine.js";
import { loadInjectedOutcomes } from "../steps/injected-outcomes.js";
import type { StepJournal } from "../steps/journal.js";
import { taskEventLog, type TaskEventFields, type TaskEventLevel, type TaskEventSink } from "../task-events.js";
import { expiryOf } from "../util/expiry.js";
import { missingInputCapability } from "../wire/input-capabilities.js";
import { eventHost, fileHosts, type EventSite } from "./engine-hosts.js";
import { taskDefinitionOf, type TaskRegistry } from "./task-definition.js";
import { taskIndexOf } from "./task-index.js";
import { catalogDatabase } from "./catalog-feed.js";
import { FINAL_STATUSES, type Ending, type TaskRecord } from "./task-store.js";
import type { WebhookSettings } from "./webhook-urls.js";

// The TaskRunner's run loop: what its alarm does (purge, expire, or run the handler against the journal), how a run's
// outcome settles the task, the one alarm it arms next, and the ending every path writes. The Durable Object
// (task-runner.ts) holds one TaskRun per instance and keeps its RPC methods; the state below lives as long as it does.

/** The deployment's settings a run reads, resolved once per `defineTaskRunner`. */
export interface RunConfig<Env> {
  /** The author's server for an env, built once per isolate. */
  registryFor: (env: Env) => TaskRegistry;
  alarmBudgetMs: number;
  purgeGraceMs: number;
  eventLevel: TaskEventLevel;
  files: FilesSettings | undefined;
  webhooks: WebhookSettings;
  indexBinding: string | undefined;
  /** With a catalog bound, lists come from it and nothing is indexed: the purge leaves the index alone. */
  catalogBinding: string | undefined;
}

/** The parts of its Durable Object a run reaches. */
export interface RunSite<Env> extends EventSite {
  readonly env: Env;
  readonly storage: DurableObjectStorage;
  readonly journal: StepJournal;
  /** The object's storage is gone (purged): from now on every call answers as for an unknown id. */
  forget(): void;
}

export class TaskRun<Env> {
  /** A run should start as soon as possible (an answer arrived, or a run handed off). */
  wakeRequested = false;
  running = false;
  /** Set when a cancel wins in this instance: what a run under way checks at every step boundary. */
  cancelled = false;
  /** Aborted on cancel: the signals of this instance's in-flight step attempts. */
  private controllers = new Set<AbortController>();
  /** Consecutive runs of this instance that failed outside the handler. */
  private runFailures = 0;
  private registry: TaskRegistry | undefined;

  constructor(
    private readonly site: RunSite<Env>,
    private readonly config: RunConfig<Env>,
  ) {}

  /**
   * What the alarm does for a task: purge, expire, or run it (the first run also comes here, from create). The
   * object's schema must be in place (its caller checks).
   */
  async runDue(): Promise<void> {
    const record = this.site.store.read();
    if (!record) return;
    if (this.running) {
      // Alarms are at-least-once: a second delivery while a run is under way must not start a second,
      // concurrent replay. The run under way re-arms at its end and sees this request.
      this.wakeRequested = true;
      // This delivery is now consumed, and a run that create started has no alarm in flight behind it: keep one
      // armed, so that if this instance dies before that run re-arms at its end, the alarm resumes the task.
      await this.site.storage.setAlarm(Date.now() + FIRST_RUN_FALLBACK_MS);
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
    // Paused: nothing runs until the resume, which wakes the task; the alarm now waits for the TTL only.
    if (record.pausedAt !== null) return this.arm(now);
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
    const { site, config } = this;
    // The author's server is built once per isolate, not once per run: only its handlers are needed here.
    this.registry ??= config.registryFor(site.env);
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
        journal: site.journal,
        now: () => Date.now(),
        // A run starts only on a live task, and a cancel reaches the instance that runs it, so memory suffices.
        isCancelled: () => this.cancelled,
        // Read from the row at every new step: a pause that lands mid-run stops it at the next step boundary.
        isPaused: () => site.store.read()?.pausedAt != null,
        setStatus: (message, progress) => {
          if (site.store.setMessage(message, progress ?? null, Date.now())) site.notify();
        },
        inputRequested: () => this.syncInputStatus(Date.now()),
        // Only what the creating request declared can be asked (null: through the facade, anything).
        inputUnavailable: (request) => missingInputCapability(request, record.clientCapabilities),
        handoffAt: startedAt + config.alarmBudgetMs,
        controllers: this.controllers,
        event,
        stepEvents: config.eventLevel === "all",
        events: eventHost(site, config.webhooks, record),
        injected: loadInjectedOutcomes(site.storage.sql),
        replay: definition.replay,
        ...fileHosts(site.env, config.files, record),
      });
    } finally {
      this.running = false;
    }
    // Steps the journal still holds are written before the outcome is: a write that failed fails the run here.
    site.journal.flush();
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
          const envelope = envelopeFor(outcome.error, this.site.journal.completedSteps());
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

  /** Requests a run as soon as possible (an answer or an event arrived) and arms the alarm for it. */
  wake(now: number): Promise<void> {
    this.wakeRequested = true;
    return this.arm(now);
  }

  /** After a cancel won: a run under way stops at its next step boundary, its attempts' signals abort. */
  abort(): Promise<void> {
    this.cancelled = true;
    for (const controller of this.controllers) controller.abort(new Error("task cancelled"));
    return this.arm(Date.now());
  }

  /** Arms the one alarm at the earliest thing this task waits for: a step, the TTL, or the purge. */
  async arm(now: number): Promise<void> {
    const record = this.site.store.read();
    if (!record) return;
    let next: number | null;
    if (FINAL_STATUSES.has(record.status)) {
      // A final task waits for nothing but its purge, whatever steps were still pending when it ended.
      next = record.purgeAt;
    } else {
      const expiresAt = expiryOf(record.createdAt, record.ttlMs);
      // A paused task's due steps and wake requests wait for the resume (which re-arms); its TTL still runs.
      const paused = record.pausedAt !== null;
      const candidates = paused
        ? [expiresAt]
        : [this.site.journal.nextWake(), expiresAt, this.wakeRequested ? now : null];
      const due = candidates.filter((t): t is number => t !== null);
      next = due.length > 0 ? Math.min(...due) : null;
    }
    // While a run is under way its own re-arm at the end must still see the request.
    if (!this.running) this.wakeRequested = false;
    if (next === null) {
      await this.site.storage.deleteAlarm();
      return;
    }
    // Re-arming at or before the alarm now firing can be lost locally; always move strictly forward.
    await this.site.storage.setAlarm(Math.max(next, Date.now() + 1));
  }

  /** Writes a final status if none was written yet; notifies watchers and logs it. Returns whether it won. */
  finish(ending: Ending, fields: TaskEventFields = {}): boolean {
    const record = this.site.store.read();
    if (!record) return false;
    const now = Date.now();
    const expiresAt = expiryOf(record.createdAt, record.ttlMs);
    // A task without a TTL is kept until someone deletes it; otherwise it goes a grace period after expiry.
    const purgeAt = expiresAt === null ? null : Math.max(expiresAt, now) + this.config.purgeGraceMs;
    const won = this.site.store.end(ending, now, purgeAt);
    if (won) {
      this.site.notify();
      const event = ending.status === "cancelled" ? "task_cancelled" : "task_finished";
      this.events(record)(event, { status: ending.status, durationMs: now - record.createdAt, ...fields });
    }
    return won;
  }

  /** The live status follows the journal: input_required while an input is pending, else working. */
  syncInputStatus(now: number): void {
    const pending = this.site.journal.pendingInputs().length;
    if (this.site.store.setLiveStatus(pending > 0 ? "input_required" : "working", now)) this.site.notify();
  }

  events(record: TaskRecord): TaskEventSink {
    return taskEventLog(this.config.eventLevel, record);
  }

  private async purge(): Promise<void> {
    const { site, config } = this;
    const record = site.store.read();
    if (config.files && record) await deleteSpilledResults(site.env, config.files, record.taskId);
    // Before the record goes, so that a failed removal is retried by the alarm with the principal still known.
    const index =
      config.indexBinding &&
      !catalogDatabase(site.env, config.catalogBinding) &&
      (site.env as Record<string, unknown>)[config.indexBinding];
    if (index && record) await taskIndexOf(index as DurableObjectNamespace, record.principal).remove(record.taskId);
    await site.storage.deleteAlarm();
    await site.storage.deleteAll();
    site.forget();
  }
}

/** Every task has a salt (set at creation, or by the schema migration that introduced it). */
function stepKeySaltOf(record: TaskRecord): string {
  if (record.stepKeySalt === null) throw new Error(`task ${record.taskId} has no step-key salt`);
  return record.stepKeySalt;
}
