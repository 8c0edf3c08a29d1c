// Helpers of the child-task tests: a child's deterministic id, a task's children and journal, and a result's text.
import { runInDurableObject } from "cloudflare:test";
import { childIdFor } from "../../src/runner/child-tasks.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import { fixtureEnv, type StartedTask } from "../helpers.js";

export type RunnerStub = DurableObjectStub & TaskRunnerRpc;

export function runnerOf(taskId: string): RunnerStub {
  return fixtureEnv.TASK_RUNNER.get(fixtureEnv.TASK_RUNNER.idFromName(taskId)) as unknown as RunnerStub;
}

/** The child a parent's step `label` starts, as a StartedTask (alice's, the parent's probe). */
export async function childOf(parent: StartedTask, label = "child"): Promise<StartedTask> {
  const taskId = await childIdFor(parent.taskId, label);
  return { ...parent, taskId, access: { taskId, principal: parent.access.principal }, stub: runnerOf(taskId) };
}

export function textOf(task: Pick<DetailedTask, "result">): unknown {
  return JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
}

export function journalOf(stub: RunnerStub) {
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec<{ name: string; kind: string; state: string }>("SELECT name, kind, state FROM steps ORDER BY seq")
      .toArray(),
  );
}

export function outboxOf(stub: RunnerStub) {
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql.exec<{ target: string; kind: string }>("SELECT target, kind FROM outbox").toArray(),
  );
}
