// The showcase pipeline over the wire, natively: upload a CSV through a signed tus URL, run dataset_report, answer
// its question with tasks/update, and download the chart it wrote, checking the sha256 it reported.
import { FINAL, sleep, type JsonObject, type Task } from "@durable-mcp/test-harness";
import { describe, expect, inject, it } from "vitest";
import { download, sampleCsv, sha256Hex, tusPatch, type ToolResult } from "./files.js";
import { demoClient } from "./mcp-http.js";

const { url } = inject("wrangler");
const mcp = demoClient(url);

async function until(taskId: string, done: (task: Task) => boolean, timeoutMs = 30_000): Promise<Task> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await mcp.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stuck: ${JSON.stringify(task)}`);
    await sleep(100);
  }
}

async function toolResult(name: string, args: JsonObject) {
  return (await mcp.call("tools/call", { name, arguments: args })) as unknown as ToolResult;
}

async function uploadCsv(csv: string): Promise<string> {
  const bytes = new TextEncoder().encode(csv);
  const issued = await toolResult("file_upload_url", {
    name: "weather.csv",
    size: bytes.byteLength,
    sha256: sha256Hex(bytes),
    mimeType: "text/csv",
  });
  expect(issued.isError).toBeUndefined();
  expect(await tusPatch(issued.structuredContent.uploadUrl, bytes)).toBe(bytes.byteLength);
  return issued.structuredContent.handle;
}

describe("dataset_report", () => {
  it("turns an uploaded CSV into a chart file: question, retried step, pause, artifact with its sha256", async () => {
    const handle = await uploadCsv(sampleCsv(500));
    const created = await mcp.startTask("dataset_report", { file: handle, title: "Weather", pauseSeconds: 1 });

    const asking = await until(created.taskId, (task) => task.status === "input_required");
    const question = (asking.inputRequests as Record<string, any>)["choose column"];
    expect(question.params.message).toContain("500 rows");
    expect(question.params.requestedSchema.properties.column.enum).toEqual(["id", "temperature", "rainfall"]);

    await mcp.updateTask(created.taskId, {
      "choose column": { action: "accept", content: { column: "temperature", format: "svg" } },
    });
    const done = await until(created.taskId, (task) => FINAL.has(task.status));
    expect(done.status).toBe("completed");
    const result = done.result as unknown as ToolResult;
    const { artifact, stats } = result.structuredContent;
    expect(stats).toMatchObject({ count: 500, min: -5.5, max: 34.5 });
    expect(artifact).toMatchObject({ name: "weather.svg", mimeType: "image/svg+xml" });
    const link = result.content.find((block) => block.type === "resource_link");
    expect(link).toMatchObject({ uri: artifact.uri, name: "weather.svg", size: artifact.size });

    const issued = await toolResult("file_download_url", { handle: artifact.handle });
    expect(issued.structuredContent).toMatchObject({ size: artifact.size, sha256: artifact.sha256 });
    const { response, bytes } = await download(issued.structuredContent.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    expect(sha256Hex(bytes)).toBe(artifact.sha256);
    expect(new TextDecoder().decode(bytes)).toMatch(/^<svg [^>]*>.*Weather: temperature/s);
  });

  it("ends with a repairable envelope for a CSV without numeric columns, and for a handle it cannot see", async () => {
    const handle = await uploadCsv("name,city\nada,paris\n");
    const created = await mcp.startTask("dataset_report", { file: handle });
    const failed = await until(created.taskId, (task) => FINAL.has(task.status));
    expect((failed.result as unknown as ToolResult).structuredContent.error).toMatchObject({
      code: "no_numeric_column",
      retryable: false,
      param: "file",
    });

    const ghost = await mcp.startTask("dataset_report", { file: "file_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
    const unknown = await until(ghost.taskId, (task) => FINAL.has(task.status));
    expect((unknown.result as unknown as ToolResult).structuredContent.error).toMatchObject({
      code: "unknown_file",
      param: "file",
    });
  });
});
