// Bearer tokens from configuration, each its own principal, on a second dev server started with AUTH_TOKENS: a
// caller without a known token is refused, and one principal cannot see, answer, cancel, download or upload to
// another's tasks and files.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { McpHttpClient, WranglerDev, workspaceRoot } from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleCsv, sha256Hex, tusPatch, type ToolResult } from "./files.js";
import { CLIENT_INFO } from "./mcp-http.js";

const server = WranglerDev.create({
  name: "task-server-auth",
  cwd: join(workspaceRoot, "apps/task-server"),
  config: join(workspaceRoot, "wrangler.jsonc"),
  port: Number(process.env.E2E_AUTH_PORT ?? 8793),
  portHint: "set E2E_AUTH_PORT to a free port",
  readyHeaders: { Authorization: "Bearer alice-token" },
  args: [
    "--var",
    "AUTH_TOKENS:alice-token:alice,bob-token:bob",
    "--var",
    `FILE_URL_SECRET:${randomBytes(32).toString("hex")}`,
  ],
});

const as = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
let alice: McpHttpClient;

beforeAll(async () => {
  await server.start();
  alice = new McpHttpClient(server.url, { clientInfo: CLIENT_INFO });
});
afterAll(() => server.dispose());

describe("bearer tokens", () => {
  it("refuses a missing or unknown token with 401 and a Bearer challenge", async () => {
    for (const headers of [{}, { Authorization: "Bearer nobody" }] as Array<Record<string, string>>) {
      const answer = await alice.post("tools/list", { _meta: alice.envelope() }, { headers });
      expect(answer.response.status).toBe(401);
      expect(answer.response.headers.get("www-authenticate")).toMatch(/^Bearer /);
      await answer.response.body?.cancel();
    }
    const upload = await fetch(`${server.origin}/files`, {
      method: "POST",
      headers: { "Tus-Resumable": "1.0.0", "Upload-Length": "1" },
    });
    expect(upload.status).toBe(401);
  });

  it("keeps each principal's tasks and files to itself", async () => {
    const csv = new TextEncoder().encode(sampleCsv(20));
    const issued = (await alice.call(
      "tools/call",
      { name: "file_upload_url", arguments: { name: "a.csv", size: csv.byteLength, sha256: sha256Hex(csv) } },
      as("alice-token"),
    )) as unknown as ToolResult;
    const handle = issued.structuredContent.handle as string;
    await tusPatch(issued.structuredContent.uploadUrl, csv);
    const task = await alice.startTask("dataset_report", { file: handle }, as("alice-token"));

    // Bob: the task and the file look exactly like ones that do not exist. The answer for Alice's task and the
    // one for a random unknown id, under the same request id, must be the same bytes (status and type too).
    const unknownId = randomBytes(24).toString("base64url");
    for (const [method, extra] of [
      ["tasks/get", {}],
      ["tasks/cancel", {}],
      ["tasks/update", { inputResponses: { approve: { action: "accept", content: {} } } }],
    ] as const) {
      const answers = [];
      for (const taskId of [task.taskId, unknownId]) {
        const { response } = await alice.post(
          method,
          { taskId, ...extra, _meta: alice.envelope() },
          { ...as("bob-token"), id: `${method}-probe` },
        );
        answers.push({
          status: response.status,
          type: response.headers.get("content-type"),
          body: await response.text(),
        });
      }
      expect(answers[0], method).toEqual(answers[1]);
      expect(JSON.parse(answers[0]!.body).error, method).toBeDefined();
    }
    const status = (await alice.call(
      "tools/call",
      { name: "file_status", arguments: { handle } },
      as("bob-token"),
    )) as unknown as ToolResult;
    expect(status.structuredContent.error.code).toBe("unknown_file");
    const bobDownload = await fetch(`${server.origin}/files/${handle}`, as("bob-token"));
    const ghostDownload = await fetch(`${server.origin}/files/file_${"B".repeat(32)}`, as("bob-token"));
    expect([bobDownload.status, ghostDownload.status]).toEqual([404, 404]);
    expect(await bobDownload.text()).toBe(await ghostDownload.text());
    // Bob's own task cannot read Alice's file either.
    const bobTask = await alice.startTask("dataset_report", { file: handle }, as("bob-token"));
    let seen = await alice.call("tasks/get", { taskId: bobTask.taskId, _meta: alice.envelope() }, as("bob-token"));
    for (let i = 0; i < 100 && !["completed", "failed"].includes(seen.status as string); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await alice.call("tasks/get", { taskId: bobTask.taskId, _meta: alice.envelope() }, as("bob-token"));
    }
    expect((seen.result as unknown as ToolResult).structuredContent.error.code).toBe("unknown_file");

    // Alice still sees hers, waiting for her answer.
    const mine = await alice.call("tasks/get", { taskId: task.taskId, _meta: alice.envelope() }, as("alice-token"));
    expect(["working", "input_required"]).toContain(mine.status);
    expect((await fetch(`${server.origin}/files/${handle}`, as("alice-token"))).status).toBe(200);
  });
});
