// The lab's calls over @durable-mcp/test-harness's MCP client: `lab_job` tasks, and retries of idempotent calls
// across a server that is being killed and restarted (a transport failure is retried, an error answer never is).
import { McpHttpClient, sleep, TransportError, type JsonObject, type Task } from "@durable-mcp/test-harness";
import type { LabJobArgs } from "../src/lab.ts";

const CLIENT_INFO = { name: "reliability-lab", version: "1.0.0" };

function lab(url: string): McpHttpClient {
  return new McpHttpClient(url, { clientInfo: CLIENT_INFO, timeoutMs: 30_000 });
}

/** Counts the transport failures that were retried, for the reports. */
export const transportRetries = { count: 0 };

/**
 * An idempotent call that must succeed: transport failures (the server is down or restarting) are retried until
 * `deadline`; an error answer is thrown at once. Without `retry`, one attempt.
 */
async function attempt<T>(call: () => Promise<T>, retry: boolean, deadline = Date.now() + 60_000): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!retry || !(error instanceof TransportError) || Date.now() > deadline) throw error;
      transportRetries.count++;
      await sleep(100);
    }
  }
}

/**
 * Starts `lab_job` as a task. With `key`, the call carries it as its Idempotency-Key, so that retrying after a
 * lost answer joins the task the first call started instead of starting another.
 */
export async function startJob(
  url: string,
  args: LabJobArgs,
  options: { key?: string; retry?: boolean; deadline?: number } = {},
): Promise<Task> {
  const headers: Record<string, string> = options.key === undefined ? {} : { "idempotency-key": options.key };
  return attempt(
    () => lab(url).startTask("lab_job", args as unknown as JsonObject, { headers }),
    options.retry !== false,
    options.deadline,
  );
}

/** tasks/get; with `steps`, the task's `_meta` carries its step timeline (stepTimeline in load-checks.ts reads it). */
export async function getTask(
  url: string,
  taskId: string,
  retry = true,
  options: { steps?: boolean } = {},
): Promise<Task> {
  return attempt(() => lab(url).getTask(taskId, options), retry);
}

/** Answers the job's `approve` question with `code`. */
export async function answerTask(url: string, taskId: string, code: string, retry = true): Promise<void> {
  await attempt(() => lab(url).updateTask(taskId, { approve: { action: "accept", content: { code } } }), retry);
}

export async function cancelTask(url: string, taskId: string, retry = true): Promise<void> {
  await attempt(() => lab(url).cancelTask(taskId), retry);
}
