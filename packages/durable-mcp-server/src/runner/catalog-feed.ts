import { checkTags, TaskTagsError } from "../catalog/task-tags.js";
import {
  deleteCatalogRow,
  writeCatalogRows,
  type CatalogChange,
  type TaskSessionEntry,
} from "../catalog/catalog-writer.js";
import { CATALOG_RETRY_MS, CATALOG_WRITE_ATTEMPTS, MAX_CATALOG_MESSAGE_LENGTH } from "../limits.js";
import type { StepJournal } from "../steps/journal.js";
import type { TaskEventSink } from "../task-events.js";
import type { TaskDefinition } from "./task-definition.js";
import { FINAL_STATUSES, type TaskRecord, type TaskStore } from "./task-store.js";
import { liveMessage } from "./task-view.js";

// A TaskRunner's hand-over to the task catalog (design/operations.md): after each change it bumps the task's catalog
// version (in the object's KV storage, in the same synchronous section as the change, so it commits with it) and writes
// the newest snapshot to D1 off the request's path — one write in flight per task, changes made meanwhile coalesced
// into the next. Without a D1 binding it does nothing at all.

/** Key of the per-task catalog version in the object's KV storage. */
export const CATALOG_VERSION_KEY = "catalogVersion";
/** Key of the 2025 session the task was created in (per-session `tasks/list` from the catalog), when it was. */
export const CATALOG_SESSION_KEY = "catalogSession";

export interface CatalogSite {
  readonly storage: DurableObjectStorage;
  readonly store: TaskStore;
  readonly journal: StepJournal;
}

export class CatalogFeed {
  private pumping: Promise<void> | undefined;
  private dirty = false;
  private tags: Record<string, string> | undefined;
  /**
   * Whether this instance filed the task's session entry and tags (an evicted instance's successor files them once
   * more, which adds nothing).
   */
  private sessionFiled = false;

  constructor(
    private readonly site: CatalogSite,
    /** The catalog database, or undefined when the deployment binds none. */
    private readonly db: D1Database | undefined,
    private readonly definitionOf: (tool: string) => TaskDefinition | undefined,
    private readonly events: (record: TaskRecord) => TaskEventSink,
  ) {}

  /**
   * The task changed: bumps its version now (call it synchronously after the change) and writes the row after the
   * current macrotask, so nothing waits on D1 (a create's reply least of all). `session`, at the create: the 2025
   * session whose list the task joins, filed with its first row.
   */
  changed(session?: { id: string; expiresAt: number }): void {
    if (!this.db) return;
    const kv = this.site.storage.kv;
    kv.put(CATALOG_VERSION_KEY, (kv.get<number>(CATALOG_VERSION_KEY) ?? 0) + 1);
    if (session) kv.put(CATALOG_SESSION_KEY, session);
    this.dirty = true;
    this.pumping ??= new Promise<void>((resolve) => setTimeout(resolve, 0))
      .then(() => this.pump())
      .finally(() => (this.pumping = undefined));
  }

  /**
   * Writes the newest state as a new version (reconcile: a row the catalog lost or holds stale); false without a
   * catalog. Resolves once written (or given up on, which is logged).
   */
  async refresh(): Promise<boolean> {
    if (!this.db) return false;
    this.changed();
    await this.settled();
    return true;
  }

  /** The task was purged: waits for a write in flight, then deletes its row (a failure is logged; the sweep ends it). */
  async purged(taskId: string): Promise<void> {
    if (!this.db) return;
    this.dirty = false;
    await this.pumping;
    try {
      await deleteCatalogRow(this.db, taskId);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.warn(JSON.stringify({ event: "catalog_write_failed", taskId, action: "delete", error: message }));
    }
  }

  /** Whether writes are pending or in flight (tests wait for the catalog to catch up). */
  get busy(): boolean {
    return this.pumping !== undefined;
  }

  /** Settles once the writes pending now are done (those coalesced into them included). */
  async settled(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private async pump(): Promise<void> {
    const db = this.db!;
    while (this.dirty) {
      this.dirty = false;
      const change = this.snapshot();
      if (!change) return;
      for (let attempt = 1; ; attempt++) {
        try {
          // The session entry and the tags (which never change) go with this instance's first write only.
          const session = this.sessionFiled ? undefined : this.sessionEntry(change);
          await writeCatalogRows(db, [change], session ? [session] : [], !this.sessionFiled);
          this.sessionFiled = true;
          break;
        } catch (error) {
          const record = this.site.store.read();
          if (attempt >= CATALOG_WRITE_ATTEMPTS || !record) {
            if (record) {
              const message = error instanceof Error ? error.message : String(error);
              this.events(record)("catalog_write_failed", { error: message, attempts: attempt });
            }
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, CATALOG_RETRY_MS * 2 ** (attempt - 1)));
          // A newer change came meanwhile: write that instead of retrying this one.
          if (this.dirty) break;
        }
      }
    }
  }

  /** The row as the task stands now; null when there is no task (not created yet, or purged). */
  snapshot(): CatalogChange | null {
    const record = this.site.store.read();
    if (!record) return null;
    const { steps } = this.site.journal.timeline(1);
    const step = steps.at(-1);
    const final = FINAL_STATUSES.has(record.status);
    return {
      taskId: record.taskId,
      tool: record.tool,
      principal: record.principal,
      status: record.status,
      statusMessage: liveMessage(record)?.slice(0, MAX_CATALOG_MESSAGE_LENGTH) ?? null,
      progress: record.progress,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      finishedAt: final ? record.updatedAt : null,
      durationMs: final ? record.updatedAt - record.createdAt : null,
      currentStep: step ? (step.occurrence > 1 ? `${step.name}#${step.occurrence}` : step.name) : null,
      stepState: step?.state ?? null,
      stepUpdatedAt: step ? Date.parse(step.updatedAt) : null,
      attempts: step?.attempts ?? 0,
      retries: this.site.journal.retryCount(),
      nextWakeAt: final ? null : this.site.journal.nextWake(),
      errorCode: errorCodeOf(record),
      tags: this.tagsOf(record),
      purgeAt: record.purgeAt,
      version: this.site.storage.kv.get<number>(CATALOG_VERSION_KEY) ?? 0,
    };
  }

  private sessionEntry(change: CatalogChange): TaskSessionEntry | undefined {
    const session = this.site.storage.kv.get<{ id: string; expiresAt: number }>(CATALOG_SESSION_KEY);
    if (!session) return undefined;
    return {
      taskId: change.taskId,
      sessionId: session.id,
      principal: change.principal,
      createdAt: change.createdAt,
      expiresAt: session.expiresAt,
    };
  }

  private tagsOf(record: TaskRecord): Record<string, string> {
    if (this.tags) return this.tags;
    const declared = this.definitionOf(record.tool)?.tags;
    if (!declared) return (this.tags = {});
    try {
      this.tags = checkTags(declared(JSON.parse(record.input)));
    } catch (error) {
      // The task runs on; it is filed without tags, and the log says why.
      const message = error instanceof TaskTagsError || error instanceof Error ? error.message : String(error);
      this.events(record)("catalog_tags_refused", { error: message });
      this.tags = {};
    }
    return this.tags;
  }
}

/** A failed task's reason (or JSON-RPC code), or the code of a tool error's envelope; null otherwise. */
export function errorCodeOf(record: TaskRecord): string | null {
  if (record.status === "failed" && record.error) {
    const error = JSON.parse(record.error) as { code?: number; data?: { reason?: unknown } };
    return typeof error.data?.reason === "string" ? error.data.reason : String(error.code ?? "failed");
  }
  if (record.status === "completed" && record.result?.includes('"isError":true')) {
    const result = JSON.parse(record.result) as { structuredContent?: { error?: { code?: unknown } } };
    const code = result.structuredContent?.error?.code;
    return typeof code === "string" ? code : "tool_error";
  }
  return null;
}

/** The catalog's D1 database in `env` under `binding`, or undefined when the deployment binds none. */
export function catalogDatabase(env: unknown, binding: string | undefined): D1Database | undefined {
  if (!binding) return undefined;
  const db = (env as Record<string, unknown> | undefined)?.[binding] as D1Database | undefined;
  return typeof db?.prepare === "function" ? db : undefined;
}
