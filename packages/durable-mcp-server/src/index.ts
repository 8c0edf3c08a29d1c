// The public surface of durable-mcp-server. Everything not exported here is internal.
export { McpServer } from "./server/mcp-server.js";
export { IDEMPOTENCY_KEY_META, LINKS_META, PARENT_TASK_META, PROGRESS_META, STEPS_META } from "./wire/meta-keys.js";
export type {
  DurableMcpServerOptions,
  FallbackPolicy,
  TaskConcurrency,
  TaskConfig,
  TaskHandler,
  TaskHandlerResult,
  TaskServerOptions,
} from "./server/task-config.js";
export { durableMcp } from "./routing/durable-mcp.js";
export type { Authenticate, Caller } from "./routing/mcp-endpoint.js";
export type {
  DurableMcp,
  WaitUntil,
  DurableMcpOptions,
  FilesOptions,
  LimitsOptions,
  WebhooksOptions,
} from "./routing/durable-mcp-options.js";
export type { TaskLimiterClass } from "./limiter/index.js";
export type { BulkDriverClass } from "./operator/bulk-driver.js";
export type { SendEventInput, SendEventOptions, SendEventResult } from "./tasks/send-event.js";
export type { ExportHistoryOptions } from "./tasks/export-history.js";
export type { TaskHistory, TaskHistoryStep } from "./steps/history-format.js";
export { TaskHistoryError, type TaskHistoryProblem } from "./errors/history-errors.js";
export type { AuthenticateOperator, Operator, OperatorOptions } from "./operator/operator-access.js";
export { EventRefusedError, EventTimeoutError } from "./errors/event-errors.js";
export type { EventRefusal } from "./errors/event-errors.js";
export { ChildTaskError, InvokeError } from "./errors/invoke-errors.js";
export type { ChildTaskEnding, InvokeRefusal } from "./errors/invoke-errors.js";
export type { TaskRunnerClass, TaskRunnerRpc } from "./runner/index.js";
export type { FileRunnerClass, FileRunnerRpc } from "./file-runner/index.js";
export type { TaskEventLevel } from "./task-events.js";
export type { Duration } from "./steps/duration.js";
export type { ReplayMode } from "./steps/engine-host.js";
export type { Backoff, StepConfig } from "./steps/retry-policy.js";
export type {
  ElicitRequest,
  ElicitResult,
  InputOptions,
  InputRequest,
  InvokeOptions,
  InvokeResult,
  Serializable,
  Step,
  StepAttempt,
  TaskEvent,
  WaitForEventOptions,
  WebhookUrlOptions,
} from "./steps/types.js";
export {
  InputTimeoutError,
  InputUnavailableError,
  NonRetryableError,
  StepFailedError,
  StepResultError,
  StepTimeoutError,
  TaskProtocolError,
} from "./errors/errors.js";
export { RepairableError } from "./errors/envelope.js";
export type { ErrorEnvelope, ErrorEnvelopeCode } from "./errors/envelope.js";
export { TASKS_EXTENSION } from "./wire/protocol.js";
export { FILE_TOOL_NAMES } from "./files/file-tools.js";
export { fileLink } from "./files/file-tool-kit.js";
export type { FileView } from "./files/file-service.js";
export type { ArtifactBody, ArtifactSpec, FileRef, InputFile, TaskFiles } from "./steps/types.js";
export type { CreateTaskResult, DetailedTask, GetTaskResult, Task } from "./wire/task-shapes.js";
export type { AttemptHistoryEntry, StepTimelineEntry } from "./steps/step-record.js";
