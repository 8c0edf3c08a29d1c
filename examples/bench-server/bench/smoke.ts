// Smoke test (`pnpm --filter bench-server test`): starts the bench server and checks that every bench tool and
// floor route does what it says. It asserts correctness only, never timing.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withServer, workspaceRoot } from "./server.ts";
import { DevToolsSession, workerdRssByRole, type JsonObject } from "@durable-mcp/test-harness";
import { heapPeakDuring } from "./heap.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { measureParallelJournalClock } from "./steps.ts";

const TASK_ID_META = "durable-mcp-server/taskId";
const STEPS_META = "durable-mcp-server/steps";

const port = Number(process.env.BENCH_TEST_PORT ?? 8796);
const began = performance.now();

await withServer(port, async (server) => {
  const client = benchClient(server.url);

  const tools = ((await client.call("tools/list")).tools as Array<{ name: string }>).map((tool) => tool.name);
  for (const name of ["bench_steps", "bench_sleep", "bench_input", "bench_inline"])
    assert.ok(tools.includes(name), name);

  const steps = (await client.startTask("bench_steps", { steps: 3, payloadBytes: 5 })).taskId;
  const sleeper = (await client.startTask("bench_sleep", { before: 2, sleepMs: 50, after: 2 })).taskId;
  const asker = (await client.startTask("bench_input", {})).taskId;
  const finals = await client.listenTasks([steps, sleeper, asker], async (task) => {
    if (task.status === "input_required") {
      assert.deepEqual(Object.keys(task.inputRequests ?? {}), ["continue"]);
      await client.updateTask(asker, { continue: { action: "accept", content: { ok: true } } });
    }
  });
  assert.deepEqual(resultOf(finals.get(steps)!.task), { steps: 3, bytes: 15 });
  const slept = resultOf(finals.get(sleeper)!.task);
  assert.equal(slept.steps, 4);
  assert.equal(typeof slept.replayMs, "number");
  assert.deepEqual(resultOf(finals.get(asker)!.task), { action: "accept", content: { ok: true } });
  assert.deepEqual(resultOf(await client.getTask(steps)), { steps: 3, bytes: 15 });

  // bench_inline answers a Tasks client with the ordinary result when it is ready within its 50 ms budget, else
  // with the task (a busy machine may take longer): either way the task completes with the same result.
  const inline = await client.call("tools/call", { name: "bench_inline", arguments: { steps: 1, payloadBytes: 3 } });
  const inlineTaskId = (
    inline.resultType === "task" ? inline.taskId : (inline._meta as JsonObject)[TASK_ID_META]
  ) as string;
  if (inline.resultType !== "task") {
    assert.equal(inline.resultType, "complete");
    assert.deepEqual(JSON.parse((inline.content as Array<{ text: string }>)[0]!.text), { steps: 1, bytes: 3 });
  }
  assert.deepEqual(resultOf((await client.listenTasks([inlineTaskId])).get(inlineTaskId)!.task), {
    steps: 1,
    bytes: 3,
  });

  // A Tasks client that declares no elicitation (MCP Inspector 2.12's case): bench_input's question is never put
  // to it. The task ends with the input_unavailable envelope and never shows input_required.
  const noElicitation = {
    ...client.envelope(),
    "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
  };
  const unasked = (await client.call("tools/call", { name: "bench_input", arguments: {}, _meta: noElicitation }))
    .taskId as string;
  const seen: string[] = [];
  const unaskedFinal = (
    await client.listenTasks([unasked], (task) => {
      seen.push(task.status);
      // Fail at once rather than wait on a question nobody will answer.
      if (task.status === "input_required") throw new Error(`bench_input asked a client without elicitation`);
    })
  ).get(unasked)!.task;
  const polled = await client.getTask(unasked);
  assert.ok(!seen.includes("input_required") && polled.status === "completed", JSON.stringify(seen));
  assert.equal(polled.inputRequests, undefined);
  const envelope = (unaskedFinal.result?.structuredContent as { error?: JsonObject } | undefined)?.error;
  assert.equal(unaskedFinal.result?.isError, true);
  assert.equal(envelope?.code, "input_unavailable", JSON.stringify(unaskedFinal));
  assert.deepEqual(envelope?.details, {
    step: "continue",
    method: "elicitation/create",
    capability: "elicitation.form",
  });
  // Its journal holds the question as failed, never as waiting.
  const timeline = (
    await client.call("tasks/get", { taskId: unasked, _meta: { ...noElicitation, [STEPS_META]: true } })
  )._meta as JsonObject;
  assert.deepEqual(
    ((timeline[STEPS_META] as JsonObject).steps as JsonObject[]).map((step) => [step.name, step.kind, step.state]),
    [["continue", "input", "failed"]],
  );

  // The same tools on the endpoints with task event logging off and on every step.
  for (const path of ["/mcp-quiet", "/mcp-step-events"]) {
    const other = benchClient(`${server.origin}${path}`);
    const taskId = (await other.startTask("bench_steps", { steps: 2, payloadBytes: 4 })).taskId;
    assert.deepEqual(resultOf((await other.listenTasks([taskId])).get(taskId)!.task), { steps: 2, bytes: 8 }, path);
  }

  // Files: the file tools hand out a tus upload URL, and the bytes come back with their sha256.
  const bytes = new TextEncoder().encode("bench,file\n1,2\n");
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const opened = await client.call("tools/call", {
    name: "file_upload_url",
    arguments: { name: "smoke.csv", size: bytes.byteLength, sha256 },
  });
  const { handle, uploadUrl } = opened.structuredContent as { handle: string; uploadUrl: string };
  const patched = await fetch(uploadUrl, {
    method: "PATCH",
    headers: { "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" },
    body: bytes,
  });
  assert.equal(patched.status, 204);
  const link = await client.call("tools/call", { name: "file_download_url", arguments: { handle } });
  const { url: downloadUrl } = link.structuredContent as { url: string };
  const downloaded = new Uint8Array(await (await fetch(downloadUrl)).arrayBuffer());
  assert.equal(createHash("sha256").update(downloaded).digest("hex"), sha256);

  // A task tool refuses arguments outside its schema.
  const refused = await client.call("tools/call", { name: "bench_steps", arguments: { steps: -1, payloadBytes: 0 } });
  assert.equal(refused.isError, true);

  for (const path of ["/floor/noop", "/floor/http", "/floor/http-new", "/floor/http-write"]) {
    const response = await fetch(`${server.origin}${path}`);
    assert.equal(response.status, 200, path);
    assert.equal(await response.text(), "ok", path);
  }
  // A create's least (bench/table.ts): a tools/call-shaped POST, its body parsed, one row committed in a warm object.
  const postWrite = await fetch(`${server.origin}/floor/http-post-write`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bench_steps" } }),
  });
  assert.equal(await postWrite.text(), "ok");
  assert.equal((await fetch(`${server.origin}/floor/http-post-write`)).status, 405);
  const floor = async <T>(path: string) => (await (await fetch(`${server.origin}${path}`)).json()) as T;
  assert.equal((await floor<{ n: number }>("/floor/rpc?n=5")).n, 5);
  assert.equal((await floor<{ n: number }>("/floor/insert?n=7&bytes=3")).n, 7);
  assert.equal((await floor<{ n: number }>("/floor/insert-synced?n=3")).n, 3);
  assert.equal((await floor<{ n: number }>("/floor/log?n=2")).n, 2);
  assert.equal((await floor<{ times: number[] }>("/floor/alarm?n=2")).times.length, 2);
  assert.equal(typeof (await floor<{ dateMs: number }>("/floor/clock?iterations=1000")).dateMs, "number");
  assert.equal((await fetch(`${server.origin}/nowhere`)).status, 404);

  // The upload bench's chunked floors (bench/files-upload.ts): a chunk into an object of its own, then removed; a
  // one-part multipart upload completed, then removed; a chunk whose Content-Length is not its size refused.
  const at = server.origin;
  assert.equal(
    ((await (await put(`${at}/floor/chunk-put?run=smoke&index=0&size=3`, "abc")).json()) as { size: number }).size,
    3,
  );
  assert.equal((await put(`${at}/floor/chunk-put?run=smoke&index=1&size=4`, "abc")).status, 411);
  assert.equal((await fetch(`${at}/floor/chunks?run=smoke`, { method: "DELETE" })).status, 204);
  const started = (await (await fetch(`${at}/floor/multipart?key=floor/smoke`, { method: "POST" })).json()) as {
    uploadId: string;
  };
  const multipart = `${at}/floor/multipart?key=floor/smoke&uploadId=${encodeURIComponent(started.uploadId)}`;
  const part = await (await put(`${multipart}&part=1&size=3`, "abc")).json();
  const completed = await fetch(`${multipart}&complete=1`, { method: "POST", body: JSON.stringify([part]) });
  assert.equal(((await completed.json()) as { size: number }).size, 3);
  assert.equal((await fetch(`${at}/floor/r2-put?key=floor/smoke`, { method: "DELETE" })).status, 204);
  // The routed floor: two parts through one object, which answers the whole object's SHA-256 at completion.
  const routedStart = (await (
    await fetch(`${at}/floor/multipart?key=floor/smoke-routed`, { method: "POST" })
  ).json()) as {
    uploadId: string;
  };
  const routed = `${at}/floor/routed-multipart?key=floor/smoke-routed&uploadId=${encodeURIComponent(routedStart.uploadId)}`;
  const first = "a".repeat(5 * 1024 * 1024);
  const routedParts = [
    await (await put(`${routed}&part=1&size=${first.length}`, first)).json(),
    await (await put(`${routed}&part=2&size=3`, "abc")).json(),
  ];
  const routedDone = (await (
    await fetch(`${routed}&complete=1`, { method: "POST", body: JSON.stringify(routedParts) })
  ).json()) as { size: number; sha256: string };
  assert.deepEqual(routedDone, {
    size: first.length + 3,
    sha256: createHash("sha256").update(first).update("abc").digest("hex"),
  });
  assert.equal((await fetch(`${at}/floor/r2-put?key=floor/smoke-routed`, { method: "DELETE" })).status, 204);

  // What bench:memory reads (bench/memory.ts): both workerd processes, told apart, and a forced collection of the
  // isolate over the inspector, which workerd carries out only once a request (the nudge) enters the isolate.
  const split = workerdRssByRole(server.pgid!, server.stateDir);
  assert.ok(split.runtimeKiB > 0 && split.proxyKiB > 0, `runtime and proxy workerd: ${JSON.stringify(split)}`);
  const devtools = await DevToolsSession.open(server.spec.inspectorPort);
  try {
    const heap = await devtools.collectGarbage(() => fetch(`${server.origin}/floor/noop`).then((r) => r.text()));
    assert.ok(heap.usedSize > 0 && heap.usedSize <= heap.totalSize, JSON.stringify(heap));
  } finally {
    devtools.close();
  }
  // bench:table's heap row (bench/heap.ts): samples taken while a task runs, between two forced collections.
  const peak = await heapPeakDuring(server, async () => {
    const taskId = (await client.startTask("bench_steps", { steps: 200, payloadBytes: 0 })).taskId;
    return resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
  });
  assert.deepEqual(peak.value, { steps: 200, bytes: 0 });
  assert.ok(peak.samples > 0 && peak.peakUsedBytes >= peak.baselineUsedBytes, JSON.stringify(peak));
  // …and its 20 × 50 row's clock (bench/steps.ts): every task's step timeline, read back.
  const parallel = await measureParallelJournalClock(client, 3, 5, 1);
  assert.ok(parallel.runs[0]!.journalSpanMs >= 1 && parallel.stepsPerSecond > 0, JSON.stringify(parallel));
});

// One check for the run's total (scripts/test-summary.mjs); a failure above throws before this line.
mkdirSync(join(workspaceRoot, "results/tests"), { recursive: true });
writeFileSync(join(workspaceRoot, "results/tests/bench-server.json"), JSON.stringify({ passed: 1, failed: 0 }));
console.log(`bench-server smoke test passed in ${((performance.now() - began) / 1000).toFixed(1)} s`);

function put(url: string, body: string): Promise<Response> {
  return fetch(url, { method: "PUT", body });
}
