// Memory held by open and closed 2025-11-25 `tasks/result` streams (docs/limits.md, "long-lived streams"): STREAMS
// streams (default 64, the per-principal bound) on tasks that sleep an hour, 32 a task; the isolate's V8 heap after a
// forced collection (wrangler's inspector) and the runtime workerd's RSS, before, with them open, 8 s and 30 s after
// the client closed them all. Under wrangler dev a client's close reaches the Worker only at the stream's next write
// (the 15 s heartbeat), and the Worker's cancel reaches the TaskRunner only at its stream's next write (its 2 s
// keep-alive), which is what the 8 s and 30 s readings show.
//   BENCH_PORT=8795 (and + 1000 for the inspector)  STREAMS=64
//   pnpm bench:stream-memory
import { DevToolsSession, sleep, workerdRssByRole } from "@durable-mcp/test-harness";
import { withServer } from "./server.ts";

const PORT = Number(process.env["BENCH_PORT"] ?? 8795);
const STREAMS = Number(process.env["STREAMS"] ?? 64);
const PER_TASK = 32;

await withServer(PORT, async (server) => {
  const url = `${server.origin}/mcp`;
  let id = 1;
  const post = (method: string, params: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(url, {
      method: "POST",
      signal,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method, params }),
    });
  const nudge = () =>
    fetch(`${server.origin}/floor/noop`)
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
  const devtools = await DevToolsSession.open(server.spec.inspectorPort);
  const reading = async (label: string) => {
    const heap = await devtools.collectGarbage(nudge);
    await sleep(2000);
    const rss = workerdRssByRole(server.pgid!, server.stateDir);
    console.log(
      `${label}: heap used ${(heap.usedSize / 1048576).toFixed(1)} MiB, runtime RSS ${(rss.runtimeKiB / 1024).toFixed(1)} MiB`,
    );
    return heap.usedSize;
  };
  const tasks: string[] = [];
  for (let i = 0; i < Math.ceil(STREAMS / PER_TASK); i++) {
    const reply = (await (
      await post("tools/call", {
        name: "bench_sleep",
        arguments: { before: 0, sleepMs: 3_600_000, after: 0 },
        task: {},
      })
    ).json()) as { result: { task: { taskId: string } } };
    tasks.push(reply.result.task.taskId);
  }
  await sleep(1000);
  const base = await reading("tasks created, no stream");
  const controllers: AbortController[] = [];
  const bodies: Promise<unknown>[] = [];
  let refused = 0;
  for (let i = 0; i < STREAMS; i++) {
    const controller = new AbortController();
    const response = await post("tasks/result", { taskId: tasks[Math.floor(i / PER_TASK)] }, controller.signal);
    if (response.status !== 200) refused++;
    controllers.push(controller);
    bodies.push(response.arrayBuffer().catch(() => undefined));
  }
  console.log(`${STREAMS} streams asked, ${refused} refused`);
  const open = await reading(`${STREAMS} streams open`);
  console.log(`  per stream: ${((open - base) / STREAMS / 1024).toFixed(1)} KiB`);
  for (const controller of controllers) controller.abort();
  await sleep(8000);
  const closed = await reading("8 s after closing them all");
  console.log(`  kept per closed stream: ${((closed - base) / STREAMS / 1024).toFixed(1)} KiB`);
  const probe = await post("tasks/result", { taskId: tasks[0] });
  console.log(
    `a new stream on task 0 after the closes: ${probe.status} ${probe.status === 200 ? "" : await probe.text()}`,
  );
  if (probe.status === 200) void probe.body?.cancel();
  await sleep(20000);
  const later = await reading("30 s after closing them all");
  console.log(`  kept per closed stream: ${((later - base) / STREAMS / 1024).toFixed(1)} KiB`);
  devtools.close();
});
