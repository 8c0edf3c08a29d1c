// Files for today's clients: a 2025-era MCP client (@modelcontextprotocol/sdk 1.x) that can only make tool calls
// moves a CSV in through the chunked file tools, runs dataset_report by following nothing but the text of each
// result (the facade tools, a question answered by a user), and reads the chart back in chunks, checking its sha256.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sampleCsv, sha256Hex, type ToolResult } from "./files.js";
import { followText, type TextResult } from "./text-model.js";

const { url } = inject("wrangler");
let client: Client;

beforeAll(async () => {
  client = new Client({ name: "demo-e2e-2025-files", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
});
afterAll(() => client.close());

async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
}

describe("files through tool calls only (2025 client)", () => {
  it("uploads in base64 chunks, runs dataset_report by its text, and reads the chart back verified", async () => {
    const csv = Buffer.from(sampleCsv(3000));
    const opened = await call("file_upload_open", { name: "weather.csv", size: csv.length, sha256: sha256Hex(csv) });
    const handle = opened.structuredContent.handle as string;
    const chunk = opened.structuredContent.chunkBytes as number;
    // A wrong offset is repaired from the envelope's cursor, as a model would.
    let offset = 0;
    const wrong = await call("file_upload_write", { handle, offset: 7, data: csv.subarray(7, 9).toString("base64") });
    expect(wrong.structuredContent.error).toMatchObject({ code: "offset_mismatch", partial: { cursor: 0 } });
    while (offset < csv.length) {
      const piece = csv.subarray(offset, offset + Math.min(chunk, 40_000));
      const written = await call("file_upload_write", { handle, offset, data: piece.toString("base64") });
      expect(written.isError).toBeUndefined();
      offset = written.structuredContent.offset as number;
    }
    const committed = await call("file_upload_commit", { handle });
    expect(committed.structuredContent).toMatchObject({ state: "ready", sha256: sha256Hex(csv) });

    const asked: string[] = [];
    const turns = await followText(
      (next) => call(next.tool, next.arguments) as Promise<TextResult>,
      { tool: "dataset_report", arguments: { file: handle, title: "Weather", pauseSeconds: 1 } },
      (question) => {
        asked.push(question.key);
        return { action: "accept", values: { column: "rainfall", format: "svg" } };
      },
    );
    expect(asked).toEqual(["choose column"]);
    expect(turns.map((turn) => turn.tool)).toContain("durable_task_respond");
    const last = turns.at(-1)!;
    expect(last.isError).toBe(false);
    const reported = /File (file_[A-Za-z0-9_-]{32}) \((\d+) bytes, sha256 ([0-9a-f]{64})\)/.exec(last.text);
    expect(reported, last.text).not.toBeNull();
    const [, artifact, size, sha256] = reported!;

    const pieces: Buffer[] = [];
    for (let at = 0, eof = false; !eof;) {
      const read = await call("file_download_read", { handle: artifact, offset: at, length: 64 * 1024 });
      pieces.push(Buffer.from(read.structuredContent.data as string, "base64"));
      at = read.structuredContent.nextOffset as number;
      eof = read.structuredContent.eof as boolean;
    }
    const chart = Buffer.concat(pieces);
    expect(chart.length).toBe(Number(size));
    expect(sha256Hex(chart)).toBe(sha256);
    expect(chart.toString("utf8")).toMatch(/^<svg [^>]*>.*Weather: rainfall/s);
  });
});
