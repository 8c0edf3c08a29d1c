import type { McpServer as SdkMcpServer } from "@modelcontextprotocol/server";
import { downloadReadTool, uploadCommitTool, uploadOpenTool, uploadWriteTool } from "./file-chunk-tools.js";
import type { FileToolsRuntime } from "./file-tool-kit.js";
import { downloadUrlTool, statusTool, uploadUrlTool } from "./file-url-tools.js";

/**
 * The names hosts and models meet files by.
 * @example
 * ```ts
 * import { FILE_TOOL_NAMES } from "durable-mcp-server";
 *
 * const isFileTool = (name: string) => (FILE_TOOL_NAMES as readonly string[]).includes(name);
 * ```
 */
export const FILE_TOOL_NAMES = [
  "file_upload_url",
  "file_download_url",
  "file_upload_open",
  "file_upload_write",
  "file_upload_commit",
  "file_download_read",
  "file_status",
] as const;

/**
 * The file tools: a model directs transfers and sees metadata (handle, size, sha256, progress), while bytes move
 * out of band through signed URLs, or in small base64 chunks for hosts that can only make tool calls.
 */
export function registerFileTools(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  // In FILE_TOOL_NAMES' order, which is the order tools/list lists them in.
  uploadUrlTool(server, runtime);
  downloadUrlTool(server, runtime);
  uploadOpenTool(server, runtime);
  uploadWriteTool(server, runtime);
  uploadCommitTool(server, runtime);
  downloadReadTool(server, runtime);
  statusTool(server, runtime);
}
