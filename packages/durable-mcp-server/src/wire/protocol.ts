/** Constants of the MCP Tasks extension (SEP-2663) and the 2026-07-28 envelope it rides on. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
export const PROTOCOL_VERSION = "2026-07-28";

export const TaskMethods = {
  get: "tasks/get",
  update: "tasks/update",
  cancel: "tasks/cancel",
  /** Removed from the extension; answered with -32601. */
  result: "tasks/result",
  list: "tasks/list",
} as const;

/** True when this request's own `_meta` declares the Tasks extension (never remembered across requests). */
export function declaresTasks(params: unknown): boolean {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const capabilities = meta?.[CLIENT_CAPABILITIES_META] as { extensions?: Record<string, unknown> } | undefined;
  const extension = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof extension === "object" && extension !== null;
}

/** `data` of the -32021 error for a request that needed the Tasks extension. */
export const REQUIRED_TASKS_CAPABILITY = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
