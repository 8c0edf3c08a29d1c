import { runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callTaskUntil, final, rpc } from "../jsonrpc.js";
import { fixtureEnv } from "../helpers.js";
import { putObject } from "../../src/files/task-files.js";
import { createUpload, handleOf, MIB, patch, randomBytes, sha256Hex } from "./helpers.js";

async function uploadText(text: string, name: string, principal = "alice"): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const { url } = await createUpload(
    bytes.byteLength,
    { filename: name, filetype: "text/csv", sha256: await sha256Hex(bytes) },
    { principal },
  );
  expect((await patch(url, 0, bytes)).status).toBe(204);
  return handleOf(url);
}

describe("step.files", () => {
  it("reads an uploaded file by handle and writes artifacts the caller can download", async () => {
    const csv = "name,score\nada,3\nbob,5\ncy,8\n";
    const handle = await uploadText(csv, "scores.csv");
    const { task } = await callTaskUntil("csv_summary", { file: handle }, final);
    expect(task.status).toBe("completed");
    const result = (await rpc("tasks/get", { taskId: task.taskId })).body.result!.result;
    expect(result.content[0]).toEqual({ type: "text", text: "3 rows" });
    const [report, copy] = result.content.slice(1);
    expect(report).toMatchObject({ type: "resource_link", name: "report.md", mimeType: "text/markdown" });
    expect(report.uri).toMatch(/^http:\/\/fixture\.test\/files\/file_/);

    const auth = { Authorization: "Bearer alice" };
    const body = await (await SELF.fetch(report.uri, { headers: auth })).text();
    expect(body).toBe(`# scores.csv\n\n3 rows, sha256 ${await sha256Hex(new TextEncoder().encode(csv))}\n`);
    expect(report.size).toBe(new TextEncoder().encode(body).byteLength);
    expect(report._meta["durable-mcp-server/file"].sha256).toBe(await sha256Hex(new TextEncoder().encode(body)));
    // The streamed copy is byte for byte the input.
    expect(await (await SELF.fetch(copy.uri, { headers: auth })).text()).toBe(csv);
    expect(copy.description).toBe(`sha256 ${await sha256Hex(new TextEncoder().encode(csv))}`);
    // Artifacts belong to the task's principal.
    const foreign = await SELF.fetch(report.uri, { headers: { Authorization: "Bearer mallory" } });
    expect(foreign.status).toBe(404);
    await foreign.text();
  });

  it("ends the task with unknown_file for a handle the caller does not own", async () => {
    const handle = await uploadText("a\n1\n", "other.csv", "mallory");
    const { task } = await callTaskUntil("csv_summary", { file: handle }, final);
    const result = (await rpc("tasks/get", { taskId: task.taskId })).body.result!.result;
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ code: "unknown_file", param: "handle", retryable: false });
  });
});

describe("large step results", () => {
  it("spill to R2, replay identically, and are removed when the task is purged", async () => {
    const { task } = await callTaskUntil("big_result", { kib: 1024 }, final);
    expect(task.status).toBe("completed");
    const result = (await rpc("tasks/get", { taskId: task.taskId })).body.result!.result;
    const value = JSON.parse(result.content[0].text);
    expect(value.length).toBeGreaterThan(1_048_576);
    // "big" is random: the same hash after the replay means it was read back, not run again.
    expect(value.after).toBe(value.before);

    const namespace = fixtureEnv.MCP_TASK_RUNNER;
    const stub = namespace.get(namespace.idFromName(task.taskId));
    const stored = await runInDurableObject(
      stub,
      (_, state) =>
        state.storage.sql.exec<{ result: string }>("SELECT result FROM steps WHERE name = 'big'").one().result,
    );
    expect(stored).toMatch(/^@r2:results\//);
    const key = stored.slice("@r2:".length);
    expect((await fixtureEnv.FILES.head(key))?.size).toBeGreaterThan(1_048_576);

    // ttl 3 s + purge grace 0.2 s.
    const deadline = Date.now() + 12_000;
    while ((await fixtureEnv.FILES.head(key)) !== null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await fixtureEnv.FILES.head(key)).toBeNull();
  });
});

describe("putObject", () => {
  it("stores a stream of unknown length in equal multipart parts and measures it", async () => {
    const bytes = randomBytes(11 * MIB + 7);
    let at = 0;
    // Odd-sized pieces, and no length known up front.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.slice(at, at + 999_983));
        at += 999_983;
      },
    });
    const key = `test/${crypto.randomUUID()}`;
    const stored = await putObject(fixtureEnv.FILES, key, stream, "application/x-test");
    expect(stored).toEqual({ size: bytes.byteLength, sha256: await sha256Hex(bytes) });
    const object = await fixtureEnv.FILES.get(key);
    expect(object?.httpMetadata?.contentType).toBe("application/x-test");
    expect(await sha256Hex(new Uint8Array(await object!.arrayBuffer()))).toBe(stored.sha256);
  });
});
