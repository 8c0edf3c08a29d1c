import { SELF } from "cloudflare:test";
import type { CreateTaskResult, GetTaskResult } from "durable-mcp-server";
import { describe, expect, it } from "vitest";

// A Tasks-aware client's requests: the 2026-07-28 envelope with the Tasks extension declared.
async function mcp<Result = Record<string, unknown>>(method: string, params: Record<string, unknown>, name?: string) {
  // A loopback URL: without `authenticate` the defaults serve loopback Hosts only.
  const response = await SELF.fetch("http://localhost/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
        },
      },
    }),
  });
  return (await response.json()) as { result?: Result; error?: { code: number } };
}

async function untilFinal(taskId: string) {
  for (let i = 0; i < 500; i++) {
    const { result } = await mcp<GetTaskResult>("tasks/get", { taskId }, taskId);
    if (result && ["completed", "failed", "cancelled"].includes(result.status)) return result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the task did not finish");
}

describe("build_report", () => {
  it("returns a task at once and completes after a retried step and a durable sleep", async () => {
    const created = await mcp<CreateTaskResult>(
      "tools/call",
      { name: "build_report", arguments: { region: "emea", coolDown: 50 } },
      "build_report",
    );
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const task = await untilFinal(created.result!.taskId);
    expect(task).toMatchObject({
      status: "completed",
      statusMessage: "fetched figures for emea",
      result: {
        content: [{ type: "text", text: "# emea\nRevenue: 4000" }],
        structuredContent: { region: "emea", revenue: 4000 },
      },
    });
  });

  it("reports a step that keeps failing as a repairable tool error", async () => {
    // Four attempts (the first plus 3 retries) all fail.
    const created = await mcp<CreateTaskResult>(
      "tools/call",
      { name: "build_report", arguments: { region: "apac", coolDown: 0, flakyAttempts: 4 } },
      "build_report",
    );
    const task = await untilFinal(created.result!.taskId);
    expect(task).toMatchObject({
      status: "completed",
      result: {
        isError: true,
        structuredContent: {
          error: {
            code: "step_failed",
            retryable: true,
            message: "upstream timeout for apac (attempt 4)",
            details: { step: "fetch figures", attempts: 4 },
          },
        },
      },
    });
  });

  it("refuses invalid arguments without starting a task", async () => {
    const reply = await mcp("tools/call", { name: "build_report", arguments: { region: "" } }, "build_report");
    expect(reply.result).toMatchObject({ isError: true });
    expect(reply.result).not.toHaveProperty("taskId");
  });
});

describe("the starter's defaults", () => {
  it("refuse a Host that is not loopback, until the Worker lists it in allowedHosts", async () => {
    const response = await SELF.fetch("https://report-task.example.workers.dev/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(403);
  });
});
