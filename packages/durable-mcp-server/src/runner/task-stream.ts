import type { DetailedTask } from "../wire/task-shapes.js";
import type { TaskListener } from "./task-runner-rpc.js";
import { WATCH_PING_MS } from "../limits.js";
import { FINAL_STATUSES, settled } from "./task-store.js";

/**
 * A TaskRunner's `watch` stream: `first` now, then the task after every change (each one a listener in `listeners`
 * receives), one JSON task per line, closing once it is final. A cancelled stream stops listening.
 *
 * A stream the Worker cancels (its client went away) is seen here only at the next write: over RPC, a cancel reaches
 * the sending side when a write fails. So every WATCH_PING_MS the stream writes an empty line, which readers skip;
 * without it a closed stream of a task that changes rarely (an hour's sleep) would hold its listener, its queue and
 * its place among the task's MAX_STREAMS_PER_TASK until the task next changed.
 */
export function watchStream(listeners: Set<TaskListener>, first: DetailedTask): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let listener: TaskListener | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (listener) listeners.delete(listener);
    if (ping !== undefined) clearInterval(ping);
  };
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      listener = (task) => {
        controller.enqueue(encoder.encode(`${JSON.stringify(task)}\n`));
        if (FINAL_STATUSES.has(task.status)) {
          stop();
          controller.close();
        }
      };
      listeners.add(listener);
      listener(first);
      if (FINAL_STATUSES.has(first.status)) return;
      ping = setInterval(() => {
        try {
          controller.enqueue(PING);
        } catch {
          // Closed or errored meanwhile: nothing more to write.
          stop();
        }
      }, WATCH_PING_MS);
    },
    cancel: stop,
  });
}

/** The keep-alive line of a watch stream: empty, so readers skip it. */
const PING = new Uint8Array([0x0a]);

/**
 * Reads a TaskRunner's watch stream (one JSON task per line, as `watchStream` writes it), a task at a time. Its
 * readers: the SEP-2663 listen and the 2025-11-25 `tasks/result` stream.
 */
export async function* tasksOf(reader: ReadableStreamDefaultReader<string>): AsyncGenerator<DetailedTask> {
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += value;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      // An empty line is the stream's keep-alive (watchStream).
      if (newline > 0) yield JSON.parse(buffered.slice(0, newline)) as DetailedTask;
      buffered = buffered.slice(newline + 1);
    }
  }
}

/**
 * Resolves with the task once it is settled (final, or waiting for input) as `listeners` report it, or with `current()`
 * when `timeoutMs` runs out first. The caller answers at once for a task already settled.
 */
export function awaitSettledTask(
  listeners: Set<TaskListener>,
  current: () => DetailedTask,
  timeoutMs: number,
): Promise<DetailedTask> {
  return new Promise<DetailedTask>((resolve) => {
    const done = (task: DetailedTask) => {
      clearTimeout(timer);
      listeners.delete(listener);
      resolve(task);
    };
    const listener: TaskListener = (task) => {
      if (settled(task.status)) done(task);
    };
    const timer = setTimeout(() => done(current()), timeoutMs);
    listeners.add(listener);
  });
}
