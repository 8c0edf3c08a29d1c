import { env } from "cloudflare:workers";
import { newTaskId } from "../src/ids.js";
import type { FixtureEnv } from "./fixtures/worker.js";
import type { TaskRunnerRpc } from "../src/runner/task-runner-rpc.js";
import type { NewTask } from "../src/runner/task-store.js";
import type { DetailedTask } from "../src/wire/task-shapes.js";

export const fixtureEnv = env as unknown as FixtureEnv;

export interface StartedTask {
  taskId: string;
  access: { taskId: string; principal: string };
  stub: DurableObjectStub & TaskRunnerRpc;
  probe: ReturnType<typeof probeFor>;
  probeName: string;
}

export function probeFor(name: string) {
  return fixtureEnv.PROBE.get(fixtureEnv.PROBE.idFromName(name));
}

/**
 * What `create` is given for fixture tool `tool` under `taskId`: its input names the task's own probe
 * (`probe-<taskId>`, see probeFor), alice's, a minute to live unless `ttlMs` says otherwise, polled every 100 ms.
 */
export function fixtureTask(
  taskId: string,
  tool: string,
  input: Record<string, unknown> = {},
  options: { principal?: string; ttlMs?: number | null } = {},
): NewTask {
  return {
    taskId,
    principal: options.principal ?? "alice",
    tool,
    input: JSON.stringify({ probe: `probe-${taskId}`, ...input }),
    ttlMs: options.ttlMs === undefined ? 60_000 : options.ttlMs,
    pollIntervalMs: 100,
  };
}

/** Creates a fixture task on a fresh TaskRunner, with its own probe. */
export async function startTask(
  tool: string,
  input: Record<string, unknown> = {},
  options: { namespace?: DurableObjectNamespace; principal?: string; ttlMs?: number | null } = {},
): Promise<StartedTask> {
  const namespace = options.namespace ?? fixtureEnv.TASK_RUNNER;
  const taskId = newTaskId();
  const principal = options.principal ?? "alice";
  const probeName = `probe-${taskId}`;
  const stub = namespace.get(namespace.idFromName(taskId)) as unknown as DurableObjectStub & TaskRunnerRpc;
  await stub.create(fixtureTask(taskId, tool, input, options));
  return { taskId, access: { taskId, principal }, stub, probe: probeFor(probeName), probeName };
}

/** Polls `tasks/get` until `done` holds, as a client would; fails with the last task seen. */
export async function waitForTask(
  started: Pick<StartedTask, "stub" | "access">,
  done: (task: DetailedTask) => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<DetailedTask> {
  const deadline = Date.now() + timeoutMs;
  let last: DetailedTask | null = null;
  while (Date.now() < deadline) {
    last = await started.stub.get(started.access);
    if (last && (await done(last))) return last;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`task did not reach the expected state; last seen: ${JSON.stringify(last)}`);
}

export const isFinal = (task: DetailedTask) => ["completed", "failed", "cancelled"].includes(task.status);
