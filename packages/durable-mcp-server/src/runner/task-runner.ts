import { DurableObject } from "cloudflare:workers";
import { FIRST_RUN_FALLBACK_MS, MAX_KEPT_RESULT_CHARS, MAX_STREAMS_PER_TASK, TIMELINE_LIMIT } from "../limits.js";
import { StepJournal } from "../steps/journal.js";
import { DEFAULT_TASK_EVENT_LEVEL, taskEventLog, type TaskEventFields } from "../task-events.js";
import { STEPS_META } from "../wire/meta-keys.js";
import type { DetailedTask, Task } from "../wire/task-shapes.js";
import { answerInputs } from "./input-answers.js";
import { armPrepared, discardUnclaimed } from "./prepared-runner.js";
import { acceptEvent, deliverWebhook } from "./event-delivery.js";
import { EventInbox, type EventOutcome, type WebhookAnswer } from "./event-inbox.js";
import { catalogDatabase, CatalogFeed } from "./catalog-feed.js";
import { migrate, schemaVersion } from "./schema.js";
import { taskDefinitionOf, type TaskRegistry } from "./task-definition.js";
import { TaskRun, type RunConfig, type RunSite } from "./task-run.js";
import type {
  TaskAccess,
  TaskListener,
  TaskRunnerClass,
  TaskRunnerOptions,
  TaskRunnerRpc,
  UpdateOutcome,
  TooManyStreams,
} from "./task-runner-rpc.js";
import { FINAL_STATUSES, settled, TaskStore, type NewTask, type TaskRecord } from "./task-store.js";
import { awaitSettledTask, watchStream } from "./task-stream.js";
import { toDetailedTask, toTask, toTaskText, type TaskText } from "./task-view.js";
import { SEAM_HOST, warnLegacyTestingVariable, type SeamHost } from "./seam-host.js";
import { DEFAULT_WEBHOOK_SETTINGS } from "./webhook-urls.js";
import { exportTaskHistory, type HistoryExport } from "./task-history.js";
import { keptSessionKey } from "./session-key.js";
import { pauseTask, resumeTask, type LifecycleOutcome } from "./task-lifecycle.js";
import {
  confirmRestart,
  planRestart,
  sameSeed,
  SEED_CHECKPOINT,
  seedTask,
  type RestartPlan,
  type RestartRequest,
  type RestartSeed,
} from "./task-restart.js";
import type { ChildEntry, NoticeBody } from "./child-shapes.js";
import { receiveNotice, withChildren } from "./child-tasks.js";

// The TaskRunner Durable Object: its RPC methods (the contract is task-runner-rpc.ts) over the task's record, journal
// and inbox. The run loop its alarm drives is task-run.ts; what a run hands the engine, engine-hosts.ts.

const DEFAULT_ALARM_BUDGET_MS = 10 * 60_000;
const DEFAULT_PURGE_GRACE_MS = 60_000;

/**
 * Builds the TaskRunner Durable Object class for an author's server: one object per task, holding the task
 * record and its step journal in SQLite, and driving the handler from its single alarm.
 */
export function defineTaskRunner<Env = unknown>(options: TaskRunnerOptions<Env>): TaskRunnerClass<Env> {
  const eventLevel = options.events ?? DEFAULT_TASK_EVENT_LEVEL;
  // The author's server, built once per isolate and env rather than once per object: every task is a new object, and
  // a run only looks its handler up (building a whole McpServer with its schemas is the bulk of a run's start).
  const registries = new WeakMap<object, TaskRegistry>();
  const registryFor = (env: Env): TaskRegistry => {
    const key = env as object;
    let registry = registries.get(key);
    if (!registry) registries.set(key, (registry = options.registry(env)));
    return registry;
  };
  const runConfig: RunConfig<Env> = {
    registryFor,
    alarmBudgetMs: options.alarmBudgetMs ?? DEFAULT_ALARM_BUDGET_MS,
    purgeGraceMs: options.purgeGraceMs ?? DEFAULT_PURGE_GRACE_MS,
    eventLevel,
    files: options.files,
    webhooks: options.webhooks ?? DEFAULT_WEBHOOK_SETTINGS,
    indexBinding: options.indexBinding,
    catalogBinding: options.catalogBinding,
    runnerBinding: options.runnerBinding,
    limits: options.limits,
  };

  return class TaskRunner extends DurableObject<Env> implements TaskRunnerRpc {
    private store = new TaskStore(this.ctx.storage.sql);
    private journal = new StepJournal(this.ctx.storage.sql);
    private inbox = new EventInbox(this.ctx.storage.sql);
    private ready = false;
    /**
     * When the alarm of this unclaimed runner is due, as this instance armed it (prepare, or the alarm re-arming at
     * the deadline); undefined when not known here (another instance armed it, or a delivery consumed it).
     */
    private preparedAlarmAt: number | undefined;
    private listeners = new Set<TaskListener>();
    /**
     * The last `getText` answer and the record it was built from. The store hands out one record object until its
     * next write, so the answer is current exactly while `record` is still what the store reads.
     */
    private answered: { record: TaskRecord; text: TaskText } | undefined;
    /** The object as its run loop and its event delivery reach it. */
    private site: RunSite<Env> = {
      env: this.env,
      storage: this.ctx.storage,
      store: this.store,
      journal: this.journal,
      inbox: this.inbox,
      notify: () => this.notify(),
      forget: () => this.forget(),
    };
    private run = new TaskRun<Env>(this.site, runConfig);
    /** The hand-over to the task catalog (a no-op without its D1 binding). */
    private catalog = new CatalogFeed(
      { storage: this.ctx.storage, store: this.store, journal: this.journal },
      catalogDatabase(this.env, options.catalogBinding),
      (tool) => registryFor(this.env)[taskDefinitionOf](tool),
      (record) => taskEventLog(eventLevel, record),
    );

    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      // Bring an existing task's schema up to date before any request or alarm reads it. An untouched object
      // (an unknown id) gets no tables: reads must not create storage.
      const version = schemaVersion(ctx.storage.sql);
      if (version > 0) migrate(ctx.storage, version);
      this.ready = version > 0;
      warnLegacyTestingVariable(this, env);
    }

    /**
     * The deployment's generated 2025-11-25 session key, on the one object named SESSION_KEY_OBJECT (session-key.ts):
     * kept by a binding every deployment has, so that no new binding is needed.
     */
    async sessionKey(): Promise<string> {
      return keptSessionKey(this.ctx.storage.kv);
    }

    async prepare(): Promise<boolean> {
      this.applySchema();
      if (this.store.read()) return false;
      this.preparedAlarmAt = await armPrepared(this.ctx.storage);
      return true;
    }

    /**
     * Creates the task and starts its first run right after this reply's commit, the alarm (FIRST_RUN_FALLBACK_MS
     * ahead) being the durable fallback; see TaskRunnerRpc.create for repeated ids.
     */
    async create(task: NewTask): Promise<Task | null> {
      this.applySchema();
      const existing = this.store.read();
      if (existing) {
        const same =
          existing.principal === task.principal && existing.tool === task.tool && existing.input === task.input;
        return same ? toTask(existing) : null;
      }
      this.store.insert(task, Date.now());
      return this.started(task, {});
    }

    /** A task just written (create, or a restart's seed): its alarm and first run. */
    private async started(task: NewTask, fields: TaskEventFields): Promise<Task> {
      const now = Date.now();
      this.run.cancelled = false;
      this.catalog.changed(task.listSession ?? undefined);
      // The alarm prepare (or the alarm handler) armed is known only to the instance that armed it: a field, not
      // getAlarm(), since only this class arms an unclaimed runner, and after an eviction arming anyway is safe (it
      // only costs the setAlarm this saves). One due by now may be on its way already: arm then too. One due in
      // (now, now + FIRST_RUN_FALLBACK_MS] is this first run's fallback, earlier than ours: it fires after this create
      // (which awaits nothing before it returns), finds the record and runs the task under runDue's guards. (The
      // deadline stays in the object's KV: nothing reads it once the record exists, and the purge removes it.)
      const armed = this.preparedAlarmAt;
      this.preparedAlarmAt = undefined;
      if (armed === undefined || armed <= now || armed > now + FIRST_RUN_FALLBACK_MS) {
        await this.ctx.storage.setAlarm(now + FIRST_RUN_FALLBACK_MS);
      }
      const created = toTask(this.store.read()!);
      // Once the record is durable — when the output gate lets this reply go — log the line and start the run here,
      // instead of after an alarm hop. Neither holds the reply; if this instance dies first, the alarm runs the task.
      void this.ctx.storage.sync().then(() => {
        taskEventLog(eventLevel, task)("task_created", { ttlMs: task.ttlMs, ...fields });
        return this.startFirstRun();
      });
      return created;
    }

    /** The first run, started by create. The alarm's guards apply: never two runs at once, nothing for a final task. */
    private async startFirstRun(): Promise<void> {
      try {
        if (this.ready) await this.run.runDue();
        this.catalog.changed();
      } catch {
        // Already logged as run_failed; the alarm armed at create retries it, as it retries a failing alarm run.
      }
    }

    async get(access: TaskAccess, query: { steps?: boolean } = {}): Promise<DetailedTask | null> {
      const record = this.owned(access);
      if (!record) return null;
      const task = this.detailed(record);
      if (query.steps) {
        task._meta = {
          ...task._meta,
          [STEPS_META]: withChildren(this.journal.timeline(TIMELINE_LIMIT), this.run.links),
        };
      }
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
      return record ? answerInputs(this.journal, this.run, record, responses) : null;
    }

    /** Cooperative cancel: the first ending wins, so a task that already finished stays as it is. */
    async cancel(access: TaskAccess): Promise<boolean> {
      const record = this.owned(access);
      if (!record) return false;
      if (this.run.finish({ status: "cancelled" })) await this.run.abort();
      return true;
    }

    /** An operator's pause: the run stops at its next step boundary (task-lifecycle.ts). Null: unknown task. */
    async pause(access: TaskAccess): Promise<LifecycleOutcome | null> {
      const record = this.owned(access);
      return record ? pauseTask(this.site, this.run, record) : null;
    }

    /** An operator's resume: the task runs on from where it stopped. Null: unknown task. */
    async resume(access: TaskAccess): Promise<LifecycleOutcome | null> {
      const record = this.owned(access);
      return record ? resumeTask(this.site, this.run, record) : null;
    }

    /** The original's side of a restart or retry (task-restart.ts). Null: unknown (or purged) task. */
    async planRestart(access: TaskAccess, request: RestartRequest): Promise<RestartPlan | null> {
      const record = this.owned(access);
      return record ? planRestart(this.site, runConfig.files, record, request) : null;
    }

    async confirmRestart(access: TaskAccess, newTaskId: string): Promise<boolean> {
      const record = this.owned(access);
      return record ? confirmRestart(this.store, record, newTaskId) : false;
    }

    /** The new task's side: created with its seeded journal in one transaction; see TaskRunnerRpc.seedRestart. */
    async seedRestart(seed: RestartSeed): Promise<Task | null> {
      this.applySchema();
      const existing = this.store.read();
      if (existing) return sameSeed(existing, seed) ? toTask(existing) : null;
      seedTask(this.ctx.storage, this.store, seed, Date.now(), (rows, planned) => this[SEED_CHECKPOINT](rows, planned));
      return this.started(seed.task, {
        restartedFrom: seed.links.restartedFrom?.taskId ?? seed.links.retriedFrom?.taskId,
      });
    }

    /** A crash point for the seeding's tests (a fixture subclass defines it); nothing as deployed. */
    [SEED_CHECKPOINT](_rowsWritten: number, _seed: RestartSeed): void {}

    async inspect(access: TaskAccess): Promise<{ tool: string; task: DetailedTask } | null> {
      const record = this.owned(access);
      return record ? { tool: record.tool, task: this.detailed(record) } : null;
    }

    /** Resolves once the task is final or waits for input, or as it stands when `timeoutMs` runs out. */
    async awaitSettled(access: TaskAccess, timeoutMs: number): Promise<DetailedTask | null> {
      const record = this.owned(access);
      if (!record) return null;
      if (settled(record.status)) return this.detailed(record);
      return awaitSettledTask(this.listeners, () => this.detailed(this.store.read() ?? record), timeoutMs);
    }

    /**
     * A stream of the task as newline-delimited JSON: now, then after every change, closing once it is final.
     * Null when the task is unknown to this principal.
     */
    async watch(access: TaskAccess): Promise<ReadableStream<Uint8Array> | null | TooManyStreams> {
      const record = this.owned(access);
      if (!record) return null;
      // Each stream is a listener here and a stream through a Worker: bounded per task, whoever opens them.
      if (this.listeners.size >= MAX_STREAMS_PER_TASK) return "too_many_streams";
      return watchStream(this.listeners, this.detailed(record));
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
      return acceptEvent(this.site, this.run, record, event.type, event.payload, "send");
    }

    async exportHistory(taskId: string, principal?: string): Promise<HistoryExport> {
      return exportTaskHistory(this.ready ? this.site : null, runConfig.files, taskId, principal);
    }

    async deliverWebhook(
      taskId: string,
      hook: { hookId: string; type: string; payload: string },
    ): Promise<WebhookAnswer> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== taskId || (record.purgeAt !== null && Date.now() >= record.purgeAt)) {
        return { status: 404, body: { error: "unknown_task", message: "no such task" } };
      }
      return deliverWebhook(this.site, this.run, record, hook);
    }

    /** A child's final state (runner/child-outbox.ts): recorded once; "gone" when this object holds no such task. */
    async childFinished(notice: NoticeBody): Promise<"recorded" | "gone"> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== notice.parentId) return "gone";
      const { store, journal, notify } = this.site;
      const site = { store, journal, notify, links: this.run.links, sql: this.ctx.storage.sql };
      await receiveNotice(site, this.run, record, notice);
      return "recorded";
    }

    async children(taskId: string, principal?: string): Promise<ChildEntry[] | null> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== taskId || (principal !== undefined && principal !== record.principal)) {
        return null;
      }
      return this.run.links.list();
    }

    /**
     * What the testing seam works on (runner/seam-host.ts). Symbol-keyed, so not callable over RPC: only the
     * subclass a test config exports (withTestingSeam, durable-mcp-server/testing) reaches it.
     */
    [SEAM_HOST](): SeamHost {
      return {
        sql: this.ctx.storage.sql,
        journal: this.journal,
        running: () => this.run.running,
        applySchema: () => this.applySchema(),
        record: () => (this.ready ? this.store.read() : null),
        wake: (now) => this.run.wake(now),
        getAlarm: () => this.ctx.storage.getAlarm(),
      };
    }

    override async alarm(): Promise<void> {
      // This delivery consumes whatever prepare armed; discardUnclaimed records what it arms next.
      this.preparedAlarmAt = undefined;
      if (!this.ready) return;
      // Ready without a record: a prepared runner that no create claimed by its deadline.
      const record = this.store.read();
      if (!record) return this.discardUnclaimed();
      await this.run.runDue();
      // The run moved the steps on (or the task was purged): the catalog follows.
      if (this.ready) this.catalog.changed();
      else await this.catalog.purged(record.taskId);
    }

    async limiterWake(taskId: string): Promise<boolean> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== taskId || FINAL_STATUSES.has(record.status)) return false;
      await this.run.wake(Date.now());
      return true;
    }

    /** Writes this task's catalog row again as it stands (the operator's reconcile); "gone" when there is no task. */
    async refreshCatalog(taskId: string): Promise<"refreshed" | "gone" | "off"> {
      const record = this.ready ? this.store.read() : null;
      if (!record || record.taskId !== taskId) return "gone";
      return (await this.catalog.refresh()) ? "refreshed" : "off";
    }

    /** Applies the current schema to an untouched object (prepare, create, an injected outcome); a no-op once ready. */
    private applySchema(): void {
      if (this.ready) return;
      migrate(this.ctx.storage, 0);
      this.store.forget();
      this.ready = true;
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
      this.catalog.changed();
      if (this.listeners.size === 0) return;
      const record = this.store.read();
      if (!record) return;
      const task = this.detailed(record);
      for (const listener of this.listeners) listener(task);
    }

    /** A prepared runner's alarm with no create: re-armed at its deadline, or its storage gone (prepared-runner.ts). */
    private async discardUnclaimed(): Promise<void> {
      this.preparedAlarmAt = await discardUnclaimed(
        this.ctx,
        () => !this.ready || this.store.read() !== null,
        () => this.forget(),
      );
    }

    /** The storage is gone (purged, or a prepared runner discarded): every call now answers as for an unknown id. */
    private forget(): void {
      this.store.forget();
      this.ready = false;
    }
  };
}
