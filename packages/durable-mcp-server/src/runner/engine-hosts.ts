import { FileService, type FilesSettings } from "../files/file-service.js";
import { resultSpill } from "../files/result-spill.js";
import { createTaskFiles } from "../files/task-files.js";
import type { EngineHost, EventHost } from "../steps/engine-host.js";
import { waitingMessage, type EventInbox } from "./event-inbox.js";
import type { TaskRecord, TaskStore } from "./task-store.js";
import { webhookSigner, type WebhookSettings } from "./webhook-urls.js";

// What a run of the TaskRunner (task-run.ts) hands the step engine besides its journal: the event inbox and webhook
// URLs, and `step.files` with result spilling. Built once per run, from the task's record.

/** The parts of its Durable Object the event host reaches. */
export interface EventSite {
  readonly env: unknown;
  readonly store: TaskStore;
  readonly inbox: EventInbox;
  /** Tells the task's watchers it changed. */
  notify(): void;
}

/** The inbox and webhook URLs of `step.waitForEvent` / `step.webhookUrl`. */
export function eventHost(site: EventSite, settings: WebhookSettings, record: TaskRecord): EventHost {
  return {
    take: (type) => site.inbox.take(type),
    waiting: (label, type) => {
      const current = site.store.read();
      if (site.store.setMessage(waitingMessage(label, type), current?.progress ?? null, Date.now())) site.notify();
    },
    webhookUrl: (hook) =>
      webhookSigner(site.env, settings).sign(settings.publicUrl ?? record.origin ?? "http://localhost", settings.path, {
        taskId: record.taskId,
        ...hook,
      }),
  };
}

/** `step.files` and result spilling, built lazily so that a task that never uses them needs no bindings. */
export function fileHosts(
  env: unknown,
  settings: FilesSettings | undefined,
  record: TaskRecord,
): Pick<EngineHost, "files" | "spill"> {
  if (!settings) return {};
  let service: FileService | undefined;
  const files = () => (service ??= FileService.fromEnv(settings, env, record.origin ?? "http://localhost"));
  return {
    files: (doStep) => createTaskFiles({ taskId: record.taskId, principal: record.principal, service: files }, doStep),
    spill: resultSpill(() => files().bucket, record.taskId),
  };
}
