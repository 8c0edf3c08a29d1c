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
import { deliverOutbox, Outbox } from "./child-outbox.js";
import { ChildLinks, invokeHost, owedOnEnding } from "./child-tasks.js";
import { taskDefinitionOf, type TaskRegistry } from "./task-definition.js";
import { taskIndexOf } from "./task-index.js";
import { catalogDatabase } from "./catalog-feed.js";
import { FINAL_STATUSES, stepKeySaltOf, type Ending, type TaskRecord } from "./task-store.js";
import type { WebhookSettings } from "./webhook-urls.js";
import { LimitRefusal, type LimitSettings } from "./run-slot.js";
import { admitRun, leaveLimiters, QUEUED_PREFIX, type Admitted, type Waiting } from "./run-admission.js";

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
  /** This deployment's TaskRunner binding (children are created, and parents told, through it); none: no invoke. */
  runnerBinding: string | undefined;
  /** The deployment's concurrency limits (run-slot.ts); undefined without a TaskLimiter. */
  limits: LimitSettings | undefined;
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
  /** The earliest time a child's notice asked for a run (receiveNotice's coalesced wake); null when none did. */
  private wakeByAt: number | null = null;
  /** The children this task started (`step.invoke`) and what it owes other tasks once final. */
  readonly links: ChildLinks;
  readonly outbox: Outbox;
  /** Set while the last run waits in a limiter's queue: when to ask it again (the alarm, instead of the due steps). */
  private queuedRecheckAt: number | null = null;

  constructor(
    private readonly site: RunSite<Env>,
    private readonly config: RunConfig<Env>,
  ) {
    this.links = new ChildLinks(site.storage.sql);
    this.outbox = new Outbox(site.storage.sql);
  }

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
    this.wakeByAt = null;
    const event = this.events(record);
    // The one place a run takes its concurrency slots and its start (and, in the finally below, gives them back):
    // every run, from create, an alarm, a wake or a restart, comes through here.
    let slot: Admitted | null = null;
    let outcome: RunOutcome | undefined;
    try {
      const admission = await admitRun(this.admissionSite(), config.limits, definition, record);
      if (admission && "waiting" in admission) return this.queued(record, admission.waiting);
      if (admission) {
        slot = admission.admitted;
        // Only a limited task can have waited: other runs touch neither the row nor the store's kept record.
        this.queuedRecheckAt = null;
        if (site.store.clearMessage(QUEUED_PREFIX, Date.now())) site.notify();
      }
      event("run_started");
      const held = slot;
      outcome = await runWithJournal(definition.handler, JSON.parse(record.input), {
        taskId: record.taskId,
        stepKeySalt: stepKeySaltOf(record),
        journal: site.journal,
        now: () => Date.now(),
        // A run starts only on a live task, and a cancel reaches the instance that runs it, so memory suffices.
        // Read from the row at every new step: a pause that lands mid-run stops it at the next step boundary.
        isPaused: () => site.store.read()?.pausedAt != null,
        // A run whose slot or start may have lapsed (no renewal landed in its lease) starts no further step.
        isCancelled: () => this.cancelled || (held !== null && !held.valid()),
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
        invoke: this.invokeHostFor(record),
        ...fileHosts(site.env, config.files, record),
      });
    } catch (error) {
      if (!(error instanceof LimitRefusal)) throw error;
      this.finish({ status: "failed", error: error.toJsonRpc() }, { code: error.reason });
      return;
    } finally {
      this.running = false;
      const final = outcome !== undefined && outcome.kind !== "suspended" && outcome.kind !== "cancelled";
      await slot?.release(final);
    }
    if (slot && !slot.valid() && !this.cancelled) {
      // Stopped for want of its slot, not cancelled: the task asks for a slot again at once.
      event("slot_lost");
      this.wakeRequested = true;
    }
    // Steps the journal still holds are written before the outcome is: a write that failed fails the run here.
    site.journal.flush();
    this.settle(outcome!, record);
  }

  /** The run waits for a slot or its start: says so and asks again later (or when a limiter wakes it). */
  private queued(record: TaskRecord, waiting: Waiting): void {
    this.queuedRecheckAt = waiting.recheckAt;
    if (this.site.store.setMessage(waiting.message, null, Date.now())) this.site.notify();
    this.events(record)("run_queued", waiting.fields);
  }

  private admissionSite() {
    const { site } = this;
    return { env: site.env, kv: site.storage.kv, firstStartedAt: () => site.journal.firstStartedAt() };
  }

  /** Takes the task out of its limiter's queue and slots (after a cancel); nothing to do without a limit. */
  private async leaveLimiter(): Promise<void> {
    const { site, config } = this;
    const record = site.store.read();
    if (!record || !config.limits) return;
    this.registry ??= config.registryFor(site.env);
    await leaveLimiters(site.env, config.limits, this.registry[taskDefinitionOf](record.tool), record);
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

  /** Requests a run by `at` at the latest (a child's notice: child-tasks.ts receiveNotice) and arms the alarm. */
  wakeBy(at: number): Promise<void> {
    this.wakeByAt = this.wakeByAt === null ? at : Math.min(this.wakeByAt, at);
    return this.arm(Date.now());
  }

  /** The TaskRunner namespace of this deployment, when the runner was told its binding. */
  runners(): DurableObjectNamespace | undefined {
    const binding = this.config.runnerBinding;
    return binding ? ((this.site.env as Record<string, unknown>)[binding] as DurableObjectNamespace) : undefined;
  }

  private invokeHostFor(record: TaskRecord) {
    const runners = this.runners();
    if (!runners || !this.registry) return undefined;
    const binding = this.config.indexBinding;
    const index = binding ? ((this.site.env as Record<string, unknown>)[binding] as DurableObjectNamespace) : undefined;
    return invokeHost(
      { store: this.site.store, links: this.links, notify: () => this.site.notify() },
      { registry: this.registry, runners, index },
      record,
    );
  }

  /** After a cancel won: a run under way stops at its next step boundary, its attempts' signals abort. */
  async abort(): Promise<void> {
    this.cancelled = true;
    for (const controller of this.controllers) controller.abort(new Error("task cancelled"));
    this.queuedRecheckAt = null;
    await this.leaveLimiter();
    return this.arm(Date.now());
  }

  /** Arms the one alarm at the earliest thing this task waits for: a step, the TTL, or the purge. */
  async arm(now: number): Promise<void> {
    const record = this.site.store.read();
    if (!record) return;
    let next: number | null;
    if (FINAL_STATUSES.has(record.status)) {
      // A final task waits for nothing but its purge, whatever steps were still pending when it ended, and for the
      // other tasks it owes a message to (child-outbox.ts) to have it.
      const runners = this.runners();
      if (runners) await deliverOutbox(this.outbox, runners, this.events(record));
      const owed = this.outbox.nextAt();
      next = owed === null || (record.purgeAt !== null && record.purgeAt < owed) ? record.purgeAt : owed;
    } else {
      const expiresAt = expiryOf(record.createdAt, record.ttlMs);
      // A paused task's due steps, wake requests and children's wakes wait for the resume (which re-arms); its TTL
      // still runs. A task waiting for a slot is due now by its journal: it waits for its limiter instead (or a wake).
      const paused = record.pausedAt !== null;
      const due = this.queuedRecheckAt ?? this.site.journal.nextWake();
      const candidates = paused ? [expiresAt] : [due, expiresAt, this.wakeRequested ? now : null, this.wakeByAt];
      const times = candidates.filter((t): t is number => t !== null);
      next = times.length > 0 ? Math.min(...times) : null;
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
      // In this synchronous turn, so that the messages commit with the final state that owes them.
      owedOnEnding(this.outbox, this.links, this.site.store.read()!, now);
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
