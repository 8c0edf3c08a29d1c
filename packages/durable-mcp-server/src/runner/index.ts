// The door of the TaskRunner Durable Object's folder: everything the Worker-side layers above (tasks/, fallback/,
// server/, routing/, testing/) may use of the objects. The RPC contract (task-runner-rpc.ts) is the wall: callers hold
// a TaskRunnerRpc stub and the types it speaks; the classes, the store, the journal glue and the run loop stay inside.
export type {
  TaskAccess,
  TaskListener,
  TaskRunnerClass,
  TaskRunnerOptions,
  TaskRunnerRpc,
  TooManyStreams,
  UpdateOutcome,
} from "./task-runner-rpc.js";
export { defineTaskRunner } from "./task-runner.js";
export type { HistoryExport } from "./task-history.js";
export type { LifecycleOutcome } from "./task-lifecycle.js";
export type { RestartPlan, RestartRefusal, RestartRequest, RestartSeed } from "./task-restart.js";
export {
  defineTaskIndex,
  taskIndexOf,
  type IndexCursor,
  type IndexEntry,
  type IndexScope,
  type TaskIndexClass,
  type TaskIndexRpc,
} from "./task-index.js";
export {
  taskDefinitionOf,
  type LimitCaller,
  type ConcurrencyLimit,
  type LimitFunction,
  type TaskDefinition,
  type TaskLimits,
  type TaskRegistry,
} from "./task-definition.js";
export { limitKeyOf, LimitRefusal, type LimitSettings } from "./run-slot.js";
export { rateKeyOf } from "./rate-start.js";
export { FINAL_STATUSES, type NewTask } from "./task-store.js";
export type { TaskText } from "./task-view.js";
export { tasksOf } from "./task-stream.js";
export type { EventOutcome, WebhookAnswer } from "./event-inbox.js";
export { DEFAULT_WEBHOOK_SETTINGS, hasWebhookSecret, webhookSigner, type WebhookSettings } from "./webhook-urls.js";
export { checkInputAnswer, exampleAnswer } from "./elicit-answer.js";
// The seam's types only (erased at build): its code is reached by testing/ alone, through runner/testing-seam.ts.
export type { InjectedOutcome, TestingAnswer, TestingOp, TestingReply } from "./testing-seam.js";
export { catalogDatabase } from "./catalog-feed.js";
export { readSessionKey } from "./session-key.js";
export { eventPayloadProblem } from "./event-payload.js";
export { SEAM_HOST, TESTING_SEAM, type SeamHost } from "./seam-host.js";
export type { ChildEntry } from "./child-shapes.js";
