// durable-mcp-server/testing: for tests of a Worker's tasks under @cloudflare/vitest-plugin (docs/testing.md).
// `testTasks` is the kit; `withTestingSeam` makes the TaskRunner a test config exports for it; `McpHttpClient` the raw
// MCP client it speaks through (also alone, for Node, as `durable-mcp-server/testing/mcp-client`).
export { TaskKit, TaskKitError, TestTask, testTasks } from "./task-kit.js";
export { withTestingSeam } from "./testing-runner.js";
export { replayHistories, replayHistory, type ReplayVerdict } from "./replay-history.js";
export { TaskHistoryError, type TaskHistoryProblem } from "../errors/history-errors.js";
export type { TaskHistory, TaskHistoryStep } from "../steps/history-format.js";
export type { InjectedOutcome, StartOptions, StepState, StepTimelineEntry, TestTasksOptions } from "./task-kit.js";
export * from "./mcp-client.js";
