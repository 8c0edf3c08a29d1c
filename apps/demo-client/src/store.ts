// The page's task state: the tasks started in this browser (ids in localStorage; the server keeps the tasks),
// their latest snapshot from tasks/get (polled at the task's pollIntervalMs until it is final), and the raw
// JSON-RPC log of each task (also in localStorage, the newest entries only).
import { useSyncExternalStore } from "react";
import { FINAL_STATUSES, McpError, rpc, type JsonObject, type LogEntry, type TaskSnapshot } from "./mcp.ts";

export interface TaskRecord {
  taskId: string;
  tool: string;
  serverUrl: string;
  arguments: JsonObject;
  startedAt: string;
  /** Set once tasks/cancel was acknowledged: the page shows "cancellation requested" until the task is final. */
  cancelRequested?: boolean;
}

export interface TaskView {
  record: TaskRecord;
  snapshot?: TaskSnapshot;
  /** Why the last tasks/get failed (the poll goes on unless the task is gone). */
  pollError?: string;
  /** The server no longer knows the task (expired, purged, or another server's). */
  gone?: string;
}

const TASKS_KEY = "durable-mcp-demo-client/tasks";
const LOG_KEY = (taskId: string) => `durable-mcp-demo-client/log/${taskId}`;
const LOG_LIMIT = 200;
const RETRY_MS = 3000;

function load<T>(key: string, fallback: T): T {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : (JSON.parse(text) as T);
  } catch {
    return fallback;
  }
}

function save(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the page still works, it just forgets on reload
  }
}

class TaskStore {
  private views = new Map<string, TaskView>();
  private order: string[] = [];
  private logs = new Map<string, LogEntry[]>();
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  private listeners = new Set<() => void>();
  private version = 0;
  private list: TaskView[] = [];

  constructor() {
    const records = load<TaskRecord[]>(TASKS_KEY, []);
    for (const record of Array.isArray(records) ? records : []) {
      if (!record || typeof record.taskId !== "string") continue;
      this.views.set(record.taskId, { record });
      this.order.push(record.taskId);
      this.schedule(record.taskId, 0);
    }
    this.rebuild();
  }

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = () => this.version;

  tasks(): TaskView[] {
    return this.list;
  }

  task(taskId: string): TaskView | undefined {
    return this.views.get(taskId);
  }

  log(taskId: string): LogEntry[] {
    let entries = this.logs.get(taskId);
    if (!entries) {
      entries = load<LogEntry[]>(LOG_KEY(taskId), []);
      this.logs.set(taskId, entries);
    }
    return entries;
  }

  /** A log callback for rpc() that files the exchange under `taskId`. */
  logger(taskId: string): (entry: LogEntry) => void {
    return (entry) => this.appendLog(taskId, [entry]);
  }

  appendLog(taskId: string, entries: LogEntry[]): void {
    const all = [...this.log(taskId), ...entries].slice(-LOG_LIMIT);
    this.logs.set(taskId, all);
    save(LOG_KEY(taskId), all);
    this.changed();
  }

  add(record: TaskRecord, snapshot: TaskSnapshot, creation: LogEntry[]): void {
    this.views.set(record.taskId, { record, snapshot });
    this.order = [record.taskId, ...this.order.filter((id) => id !== record.taskId)];
    this.persist();
    this.appendLog(record.taskId, creation);
    this.schedule(record.taskId, snapshot.pollIntervalMs ?? 1000);
  }

  remove(taskId: string): void {
    this.stop(taskId);
    this.views.delete(taskId);
    this.order = this.order.filter((id) => id !== taskId);
    this.logs.delete(taskId);
    try {
      localStorage.removeItem(LOG_KEY(taskId));
    } catch {
      // ignore
    }
    this.persist();
    this.changed();
  }

  /** Sends tasks/update with the answers; polls at once so the page follows the task. */
  async answer(taskId: string, inputResponses: JsonObject): Promise<void> {
    const view = this.views.get(taskId);
    if (!view) throw new Error(`unknown task ${taskId}`);
    await rpc(view.record.serverUrl, "tasks/update", { taskId, inputResponses }, this.logger(taskId));
    this.schedule(taskId, 0);
  }

  /** Sends tasks/cancel; the task shows "cancellation requested" until tasks/get reports it final. */
  async cancel(taskId: string): Promise<void> {
    const view = this.views.get(taskId);
    if (!view) throw new Error(`unknown task ${taskId}`);
    await rpc(view.record.serverUrl, "tasks/cancel", { taskId }, this.logger(taskId));
    this.update(taskId, { record: { ...view.record, cancelRequested: true } });
    this.persist();
    this.schedule(taskId, 0);
  }

  refresh(taskId: string): void {
    this.schedule(taskId, 0);
  }

  private schedule(taskId: string, delayMs: number): void {
    this.stop(taskId);
    this.timers.set(
      taskId,
      setTimeout(() => void this.poll(taskId), delayMs),
    );
  }

  private stop(taskId: string): void {
    const timer = this.timers.get(taskId);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(taskId);
  }

  private async poll(taskId: string): Promise<void> {
    this.timers.delete(taskId);
    const view = this.views.get(taskId);
    if (!view) return;
    try {
      const result = await rpc(view.record.serverUrl, "tasks/get", { taskId }, this.logger(taskId));
      const snapshot = result as unknown as TaskSnapshot;
      this.update(taskId, { snapshot, pollError: undefined, gone: undefined });
      if (!FINAL_STATUSES.has(snapshot.status) && !this.timers.has(taskId)) {
        this.schedule(taskId, Math.max(250, snapshot.pollIntervalMs ?? 1000));
      }
    } catch (error) {
      if (error instanceof McpError && error.kind === "rpc" && error.rpcError?.code === -32602) {
        this.update(taskId, {
          gone: `The server does not know this task any more (${error.rpcError.message}): it expired, or it belongs to another server or caller.`,
        });
        return;
      }
      this.update(taskId, { pollError: error instanceof Error ? error.message : String(error) });
      if (!this.timers.has(taskId)) this.schedule(taskId, RETRY_MS);
    }
  }

  private update(taskId: string, patch: Partial<TaskView>): void {
    const view = this.views.get(taskId);
    if (!view) return;
    this.views.set(taskId, { ...view, ...patch });
    this.changed();
  }

  private persist(): void {
    save(
      TASKS_KEY,
      this.order.map((id) => this.views.get(id)?.record).filter((record): record is TaskRecord => !!record),
    );
  }

  private rebuild(): void {
    this.list = this.order.map((id) => this.views.get(id)).filter((view): view is TaskView => !!view);
  }

  private changed(): void {
    this.rebuild();
    this.version++;
    for (const listener of this.listeners) listener();
  }
}

export const store = new TaskStore();

/** Re-renders the caller on every change of the store. */
export function useStore(): TaskStore {
  useSyncExternalStore(store.subscribe, store.getVersion);
  return store;
}
