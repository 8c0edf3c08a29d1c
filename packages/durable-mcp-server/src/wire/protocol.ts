import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";

/**
 * Constants of the MCP Tasks extension (SEP-2663) and the 2026-07-28 envelope it rides on. The envelope's meta
 * keys are the SDK's (`CLIENT_CAPABILITIES_META_KEY`, `PROTOCOL_VERSION_META_KEY`); the SDK 2.4 exports neither
 * the extension's id nor a constant for this revision (its LATEST_PROTOCOL_VERSION is the 2025 one), hence these.
 * @example
 * ```ts
 * import { TASKS_EXTENSION } from "durable-mcp-server";
 *
 * const capabilities = { extensions: { [TASKS_EXTENSION]: {} } };
 * ```
 */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const PROTOCOL_VERSION = "2026-07-28";

export const TaskMethods = {
  get: "tasks/get",
  update: "tasks/update",
  cancel: "tasks/cancel",
  /** Removed from the extension; answered with -32601. */
  result: "tasks/result",
  list: "tasks/list",
} as const;

/**
 * True when a request's envelope (its `_meta`, or the SDK's `ctx.mcpReq.envelope`) declares the Tasks extension.
 * Checked per request: a server must never remember it from an earlier one.
 */
export function declaresTasks(envelope: unknown): boolean {
  const meta = envelope as Record<string, unknown> | undefined;
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const extension = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof extension === "object" && extension !== null;
}

/** `data` of the -32021 error for a request that needed the Tasks extension. */
export const REQUIRED_TASKS_CAPABILITY = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
