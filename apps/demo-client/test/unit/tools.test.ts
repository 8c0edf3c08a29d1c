// How "Start a task" reads tools/list (src/tools.ts): the one-line purpose and the groups. Plain functions.
import { describe, expect, it } from "vitest";
import { TASKS_EXTENSION, type ToolInfo } from "../../shared/mcp.ts";
import { purposeOf, toolGroupsOf } from "../../src/tools.ts";

const tool = (name: string, fields: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  inputSchema: { type: "object" },
  ...fields,
});
const taskTool = (name: string) => tool(name, { _meta: { [TASKS_EXTENSION]: { taskSupport: "required" } } });

describe("the tools of Start a task", () => {
  it("takes a description's first sentence as the tool's purpose", () => {
    expect(purposeOf(tool("a", { description: "Builds a report. Takes minutes; asks once." }))).toBe(
      "Builds a report.",
    );
    expect(purposeOf(tool("a", { description: "  Sends it! Then waits." }))).toBe("Sends it!");
    // A dot inside a word (a version, a domain) does not end the sentence.
    expect(purposeOf(tool("a", { description: "Mails someone@refused.example? Maybe." }))).toBe(
      "Mails someone@refused.example?",
    );
    expect(purposeOf(tool("a", { description: "No full stop" }))).toBe("No full stop");
    expect(purposeOf(tool("a"))).toBe("");
  });

  it("groups task tools, plain tools and file plumbing, each in the server's order", () => {
    const groups = toolGroupsOf([
      tool("echo"),
      taskTool("dataset_report"),
      tool("file_upload_url"),
      taskTool("send_report"),
      taskTool("file_export"),
      tool("add"),
    ]);
    expect({
      tasks: groups.tasks.map((t) => t.name),
      plain: groups.plain.map((t) => t.name),
      plumbing: groups.plumbing.map((t) => t.name),
    }).toEqual({
      tasks: ["dataset_report", "send_report"],
      plain: ["echo", "add"],
      plumbing: ["file_upload_url", "file_export"],
    });
  });
});
