import type { DetailedTask } from "../wire/task-shapes.js";
import type { TaskListener } from "./task-runner-rpc.js";
import { FINAL_STATUSES } from "./task-store.js";

/**
 * A TaskRunner's `watch` stream: `first` now, then the task after every change (each one a listener in `listeners`
 * receives), one JSON task per line, closing once it is final. A cancelled stream stops listening.
 */
export function watchStream(listeners: Set<TaskListener>, first: DetailedTask): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let listener: TaskListener | undefined;
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      listener = (task) => {
        controller.enqueue(encoder.encode(`${JSON.stringify(task)}\n`));
        if (FINAL_STATUSES.has(task.status)) {
          listeners.delete(listener!);
          controller.close();
        }
      };
      listeners.add(listener);
      listener(first);
    },
    cancel: () => {
      if (listener) listeners.delete(listener);
    },
  });
}

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
      yield JSON.parse(buffered.slice(0, newline)) as DetailedTask;
      buffered = buffered.slice(newline + 1);
    }
  }
}
