import type { DetailedTask } from "../wire/task-shapes.js";

/**
 * Reads a TaskRunner's watch stream (one JSON task per line, as the runner's `watch` writes it), a task at a time. Its
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
