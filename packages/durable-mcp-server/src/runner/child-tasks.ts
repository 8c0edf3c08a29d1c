import { INVOKE_WAKE_MAX_MS, INVOKE_WAKE_PER_CHILD_MS, MAX_CHILDREN_PER_TASK, MAX_INVOKE_DEPTH } from "../limits.js";
import type { ChildNotice, ChildRefusal, ChildSpec, InvokeHost } from "../steps/engine-host.js";
import { childOutcome } from "../steps/invoke-step.js";
import type { StepJournal } from "../steps/journal.js";
import { parseStepLabel, stepLabel, type StepTimelineEntry } from "../steps/step-record.js";
import type { TaskEventSink } from "../task-events.js";
import { toBase64Url } from "../util/encoding.js";
import type { Outbox } from "./child-outbox.js";
import type { ChildEntry, NoticeBody } from "./child-shapes.js";
import { taskDefinitionOf, type TaskRegistry } from "./task-definition.js";
import { taskIndexOf } from "./task-index.js";
import { FINAL_STATUSES, type NewTask, type TaskRecord, type TaskStore } from "./task-store.js";

// The TaskRunner's side of `step.invoke` (steps/invoke-step.ts): starting a child exactly once, the `children` table
// (schema v13) that remembers each child and its final state, taking a child's notice (childFinished) into the
// journal with one coalesced wake, and, when a task ends, what it owes others (its parent's notice, its children's
// cancels) written to the outbox (child-outbox.ts) in the same turn as its final state.

/** The status message of a task whose step waits for a child (docs/api.md). */
export function waitingForChildMessage(label: string, task: string): string {
  return `waiting for child task "${task}" (step "${label}")`;
}

/**
 * A child's task id: derived from its parent's id and the invoke step's label, so that a parent that crashes anywhere
 * around the create reaches the same child again (whose create is idempotent) and never starts a second. As
 * unguessable as the parent's id, which it is derived from. Same shape as newTaskId.
 */
export async function childIdFor(parentId: string, label: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`invoke\u0000${parentId}\u0000${label}`),
  );
  return toBase64Url(new Uint8Array(digest).slice(0, 24));
}

interface ChildRow extends Record<string, SqlStorageValue> {
  child_id: string;
  step: string;
  task: string;
  policy: string;
  started_at: number;
  status: string | null;
  result: string | null;
  error: string | null;
  finished_at: number | null;
}

/** The `children` table of a parent. */
export class ChildLinks {
  constructor(private readonly sql: SqlStorage) {}

  /** Written before the child's create, so that a cancel of the parent reaches a child its journal does not name. */
  begin(childId: string, spec: ChildSpec, now: number): void {
    this.sql.exec(
      `INSERT INTO children (child_id, step, task, policy, started_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (child_id) DO NOTHING`,
      childId,
      spec.label,
      spec.task,
      spec.onParentCancel,
      now,
    );
  }

  /** Records a child's final state once (a repeated notice changes nothing); false when it was already known. */
  record(notice: NoticeBody, now: number): boolean {
    const cursor = this.sql.exec(
      `INSERT INTO children (child_id, step, task, policy, started_at, status, result, error, finished_at)
       VALUES (?, ?, '', 'abandon', ?, ?, ?, ?, ?)
       ON CONFLICT (child_id) DO UPDATE SET status = excluded.status, result = excluded.result,
         error = excluded.error, finished_at = excluded.finished_at WHERE children.status IS NULL`,
      notice.childId,
      notice.step,
      now,
      notice.status,
      notice.result,
      notice.error,
      now,
    );
    return cursor.rowsWritten > 0;
  }

  /** The child's notice if it told already (read, not removed: the journal's row is what replays read). */
  take(childId: string): ChildNotice | null {
    const row = this.sql.exec<ChildRow>("SELECT * FROM children WHERE child_id = ?", childId).toArray()[0];
    if (!row?.status) return null;
    return { childId, status: row.status as ChildNotice["status"], result: row.result, error: row.error };
  }

  has(childId: string): boolean {
    return this.sql.exec("SELECT 1 FROM children WHERE child_id = ?", childId).toArray().length > 0;
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM children").one().n;
  }

  /** Children that have not told their final state yet. */
  waiting(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM children WHERE status IS NULL").one().n;
  }

  /** Children still running whose policy is to be cancelled with their parent. */
  cancellable(): string[] {
    return this.sql
      .exec<{ child_id: string }>("SELECT child_id FROM children WHERE status IS NULL AND policy = 'cancel'")
      .toArray()
      .map((row) => row.child_id);
  }

  list(): ChildEntry[] {
    return this.sql
      .exec<ChildRow>("SELECT * FROM children ORDER BY started_at, child_id")
      .toArray()
      .map((row) => ({
        taskId: row.child_id,
        step: row.step,
        task: row.task,
        onParentCancel: row.policy as ChildEntry["onParentCancel"],
        status: (row.status ?? "working") as ChildEntry["status"],
        startedAt: new Date(row.started_at).toISOString(),
        finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
      }));
  }
}

/** What starting a child reaches: the registry, this deployment's TaskRunner namespace and its principal index. */
export interface ChildDeployment {
  registry: TaskRegistry;
  runners: DurableObjectNamespace;
  index: DurableObjectNamespace | undefined;
}

/** `step.invoke`'s host for one run of task `record`. */
export function invokeHost(
  site: { store: TaskStore; links: ChildLinks; notify(): void },
  deployment: ChildDeployment,
  record: TaskRecord,
): InvokeHost {
  return {
    start: (spec) => startChild(site.links, deployment, record, spec),
    take: (childId) => site.links.take(childId),
    waiting: (label, task) => {
      const current = site.store.read();
      if (site.store.setMessage(waitingForChildMessage(label, task), current?.progress ?? null, Date.now())) {
        site.notify();
      }
    },
  };
}

/**
 * Starts the child of `spec` as tools/call would (its input checked against the task's schema, filed in the
 * principal's index, then created), under the parent's principal and with a link to it; or the refusal, with nothing
 * started. The child's id is deterministic, and a create of an existing task with the same principal, tool and input
 * returns it, so starting again after a crash finds the same child.
 */
async function startChild(
  links: ChildLinks,
  deployment: ChildDeployment,
  parent: TaskRecord,
  spec: ChildSpec,
): Promise<{ childId: string } | ChildRefusal> {
  const depth = (parent.parent?.depth ?? 0) + 1;
  if (depth > MAX_INVOKE_DEPTH) {
    return { refused: "too_deep", message: `child tasks nest at most ${MAX_INVOKE_DEPTH} deep (docs/limits.md)` };
  }
  const definition = deployment.registry[taskDefinitionOf](spec.task);
  if (!definition) return { refused: "unknown_task", message: `no task named "${spec.task}" is registered` };
  const parsed = definition.parseInput(spec.input ?? {});
  if (!parsed.ok) {
    const issues = parsed.issues.slice(0, 10).map((issue) => ({
      path: (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join("."),
      message: issue.message,
    }));
    const summary = issues.map((issue) => `${issue.path || "(root)"}: ${issue.message}`).join("; ");
    return { refused: "invalid_input", message: `input of task "${spec.task}" is invalid: ${summary}`, issues };
  }
  const childId = await childIdFor(parent.taskId, spec.label);
  const now = Date.now();
  if (!links.has(childId) && links.count() >= MAX_CHILDREN_PER_TASK) {
    return { refused: "too_many_children", message: `a task starts at most ${MAX_CHILDREN_PER_TASK} child tasks` };
  }
  links.begin(childId, spec, now);
  const task: NewTask = {
    taskId: childId,
    principal: parent.principal,
    tool: definition.name,
    input: JSON.stringify(parsed.value ?? null),
    ttlMs: definition.ttlMs,
    pollIntervalMs: definition.pollIntervalMs,
    origin: parent.origin,
    clientCapabilities: parent.clientCapabilities,
    parent: { taskId: parent.taskId, step: spec.label, depth },
  };
  // Filed first, as RunnerClient.create files a tools/call's task: a task anyone was told about is always listed.
  if (deployment.index) await taskIndexOf(deployment.index, parent.principal).add(childId, now);
  const runner = deployment.runners.get(deployment.runners.idFromName(childId)) as unknown as {
    create(task: NewTask): Promise<object | null>;
  };
  if (!(await runner.create(task))) {
    // Only a replay that passes other input under the same step label gets here: the child already runs with its own.
    throw new Error(`step "${spec.label}": its child task ${childId} was started with other input`);
  }
  return { childId };
}

/**
 * A child's notice reached its parent: recorded once in `children`, its outcome journaled in the waiting invoke row,
 * and the parent woken — at once when no other child is still running, else after a pause that grows with how many
 * are (INVOKE_WAKE_PER_CHILD_MS each, at most INVOKE_WAKE_MAX_MS), so that the notices of a fan-out share a replay.
 */
export async function receiveNotice(
  site: { store: TaskStore; journal: StepJournal; links: ChildLinks; sql: SqlStorage; notify(): void },
  run: { wake(now: number): Promise<void>; wakeBy(at: number): Promise<void>; events(r: TaskRecord): TaskEventSink },
  record: TaskRecord,
  notice: NoticeBody,
): Promise<void> {
  const now = Date.now();
  if (!site.links.record(notice, now)) return;
  run.events(record)("child_notice_received", {
    step: notice.step,
    childTaskId: notice.childId,
    status: notice.status,
  });
  if (FINAL_STATUSES.has(record.status)) return;
  const { name, occurrence } = parseStepLabel(notice.step);
  const outcome = childOutcome(notice, notice.step);
  site.journal.flush();
  const cursor = site.sql.exec(
    `UPDATE steps SET state = ?, result = ?, error = ?, wake_at = NULL, updated_at = ?
     WHERE name = ? AND occurrence = ? AND kind = 'invoke' AND state = 'waiting'`,
    outcome.state,
    outcome.result,
    outcome.error,
    now,
    name,
    occurrence,
  );
  if (cursor.rowsWritten === 0) return;
  site.notify();
  const waiting = site.links.waiting();
  if (waiting === 0) return run.wake(now);
  return run.wakeBy(now + Math.min(INVOKE_WAKE_MAX_MS, INVOKE_WAKE_PER_CHILD_MS * waiting));
}

/**
 * What task `record` owes others now that it ended (written in the caller's synchronous turn, with the final state):
 * its parent's notice, and, when it was cancelled or failed (expiry included), a cancel for each child still running
 * whose policy is "cancel". A parent that completes leaves running children alone: it chose not to wait for them.
 */
export function owedOnEnding(outbox: Outbox, links: ChildLinks, ended: TaskRecord, now: number): void {
  if (ended.parent) {
    outbox.add(
      ended.parent.taskId,
      "notice",
      {
        parentId: ended.parent.taskId,
        step: ended.parent.step,
        childId: ended.taskId,
        status: ended.status as ChildNotice["status"],
        result: ended.result,
        error: ended.error,
      },
      now,
    );
  }
  if (ended.status === "completed") return;
  for (const childId of links.cancellable()) {
    outbox.add(childId, "cancel", { taskId: childId, principal: ended.principal }, now);
  }
}

/** The timeline with each invoke step's child (the task page draws the tree from it: parent, children, states). */
export function withChildren<T extends { steps: StepTimelineEntry[] }>(timeline: T, links: ChildLinks): T {
  if (!timeline.steps.some((step) => step.kind === "invoke")) return timeline;
  const byStep = new Map(links.list().map((child) => [child.step, child]));
  for (const step of timeline.steps) {
    const child = step.kind === "invoke" ? byStep.get(stepLabel(step.name, step.occurrence)) : undefined;
    if (child) step.child = { taskId: child.taskId, task: child.task, status: child.status };
  }
  return timeline;
}
