// durable-mcp-server/testing: for tests of a Worker's tasks under @cloudflare/vitest-plugin (docs/testing.md).
// `testTasks` is the kit; `McpHttpClient` the raw MCP client it speaks through (also alone, for Node, as
// `durable-mcp-server/testing/mcp-client`).
export { TaskKit, TaskKitError, TestTask, testTasks } from "./task-kit.js";
export type { InjectedOutcome, StartOptions, StepState, StepTimelineEntry, TestTasksOptions } from "./task-kit.js";
export * from "./mcp-client.js";
