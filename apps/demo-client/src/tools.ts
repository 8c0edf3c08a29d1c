// How "Start a task" reads tools/list: task tools first, plain tools after them, file plumbing (file_*) apart, each
// with a one-line purpose. The views: components/Tools.tsx and components/ToolPicker.tsx.
import { taskSupport, type ToolInfo } from "../shared/mcp.ts";

/** The first sentence of a description: the one-line purpose. */
export function purposeOf(tool: ToolInfo): string {
  const text = tool.description?.trim() ?? "";
  const end = text.search(/[.!?](\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** The page's file tools (file_upload_url, file_status, ...): it uses them itself, so they are advanced. */
export const isPlumbing = (tool: ToolInfo) => tool.name.startsWith("file_");

export interface ToolGroups {
  /** Tools that run as tasks (`_meta` tasks `taskSupport`), in the server's order. */
  tasks: ToolInfo[];
  /** Tools that answer at once. */
  plain: ToolInfo[];
  plumbing: ToolInfo[];
}

export function toolGroupsOf(tools: readonly ToolInfo[]): ToolGroups {
  return {
    tasks: tools.filter((t) => taskSupport(t) !== undefined && !isPlumbing(t)),
    plain: tools.filter((t) => taskSupport(t) === undefined && !isPlumbing(t)),
    plumbing: tools.filter(isPlumbing),
  };
}
