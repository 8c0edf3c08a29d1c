// `pnpm bench`: starts examples/bench-server under `wrangler dev` (local workerd, fresh --persist-to dir, port
// BENCH_PORT or 8795) and measures durable-mcp-server over the wire, beside the platform floor measured in the
// same runtime. Prints a table and writes results/bench.json. It reports figures; it gates nothing.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { McpClient, resultOf, type JsonObject } from "./mcp.ts";
import { withServer, workspaceRoot, type BenchServer } from "./server.ts";
import { median, ms, ratio, summarize, table, type Summary } from "./stats.ts";

const port = Number(process.env.BENCH_PORT ?? 8795);
/** BENCH_QUICK=1: a fraction of the iterations, for trying the driver out. */
const scale = process.env.BENCH_QUICK === "1" ? 0.2 : 1;
const times = (n: number) => Math.max(1, Math.round(n * scale));
const now = () => performance.now();
const log = (message: string) => console.log(`[bench] ${message}`);

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const begin = now();
  const value = await fn();
  return [now() - begin, value];
}

async function repeat(n: number, fn: (i: number) => Promise<number>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await fn(i));
  return samples;
}

// ───────────────────────────── the floor: the platform in the same runtime ─────────────────────────────

async function httpSamples(origin: string, path: string, n: number): Promise<number[]> {
  return repeat(n, async () => {
    const [elapsed, text] = await timed(async () => (await fetch(`${origin}${path}`)).text());
    if (text !== "ok") throw new Error(`${path} answered ${text}`);
    return elapsed;
  });
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

async function measureFloor(server: BenchServer) {
  const { origin } = server;
  await httpSamples(origin, "/floor/http", times(30));
  await httpSamples(origin, "/floor/noop", times(30));
  const noop = summarize(await httpSamples(origin, "/floor/noop", times(300)));
  const http = summarize(await httpSamples(origin, "/floor/http", times(300)));
  const httpWrite = summarize(await httpSamples(origin, "/floor/http-write", times(100)));
  log(`floor HTTP: no DO ${ms(noop.p50)}, one DO call ${ms(http.p50)}, new DO + 1 row ${ms(httpWrite.p50)} (p50)`);

  // Worker→DO RPC, timed inside the Worker (each RPC is I/O, so the clock advances across it).
  const rpcRuns = await repeat(5, async () => {
    const { n, totalMs } = await getJson<{ n: number; totalMs: number }>(`${origin}/floor/rpc?n=${times(1000)}`);
    return totalMs / n;
  });
  const rpc = median(rpcRuns);
  log(`floor RPC: ${ms(rpc)} per Worker→DO call (median of 5 batches)`);

  // Coalesced INSERTs: the wall time of a batch of N minus that of an empty batch, timed from outside, since the
  // clock inside does not move without I/O. The batch commits once (the reply waits for it), as step writes do.
  const batch = times(20_000);
  await getJson(`${origin}/floor/insert?n=${batch}`);
  const empty: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < 9; i++) {
    empty.push((await timed(() => getJson(`${origin}/floor/insert?n=0`)))[0]);
    full.push((await timed(() => getJson(`${origin}/floor/insert?n=${batch}`)))[0]);
  }
  const insertCoalesced = (median(full) - median(empty)) / batch;
  log(`floor SQLite INSERT, coalesced: ${ms(insertCoalesced)} each (batches of ${batch}, median of 9)`);

  // INSERT + awaited storage.sync(): timed inside the object around each pair (sync is I/O: the clock moves).
  const syncedN = times(300);
  await getJson(`${origin}/floor/insert-synced?n=10`);
  const [syncedWall, synced] = await timed(() =>
    getJson<{ n: number; times: number[] }>(`${origin}/floor/insert-synced?n=${syncedN}`),
  );
  const insertSynced = summarize(synced.times);
  log(
    `floor SQLite INSERT + storage.sync(): ${ms(insertSynced.p50)} p50 inside, ${ms(syncedWall / syncedN)} per insert from outside`,
  );
  return {
    httpNoDo: noop,
    http,
    httpNewObjectWrite: httpWrite,
    rpcMs: rpc,
    rpcBatchesMs: rpcRuns,
    insertCoalescedMs: insertCoalesced,
    insertCoalescedBatch: { n: batch, emptyMs: summarize(empty), fullMs: summarize(full) },
    insertSyncedMs: insertSynced,
    insertSyncedOutsideMs: syncedWall / syncedN,
  };
}

// ───────────────────────────── the runtime over the wire ─────────────────────────────

/** Starts a task and waits for it over subscriptions/listen: ms from tools/call to the handle and to final. */
async function runTask(client: McpClient, tool: string, args: JsonObject) {
  const begin = now();
  const taskId = await client.start(tool, args);
  const created = now() - begin;
  const final = (await client.listen([taskId])).get(taskId)!;
  resultOf(final.task);
  return { taskId, createMs: created, totalMs: final.at - begin, task: final.task };
}

/** The same, waiting by polling tasks/get back to back. */
async function runTaskPolling(client: McpClient, tool: string, args: JsonObject) {
  const begin = now();
  const taskId = await client.start(tool, args);
  let polls = 0;
  for (;;) {
    const task = await client.get(taskId);
    polls++;
    if (task.status !== "working") {
      resultOf(task);
      return { totalMs: now() - begin, polls };
    }
  }
}

const steps = (n: number, payloadBytes = 0) => ({ steps: n, payloadBytes });

async function medianTask(client: McpClient, n: number, tool: string, args: JsonObject) {
  return median(await repeat(n, async () => (await runTask(client, tool, args)).totalMs));
}

async function measureRuntime(server: BenchServer) {
  const client = new McpClient(server.url);
  for (let i = 0; i < times(10); i++) await runTask(client, "bench_steps", steps(1));

  // Create latency and the one-step round trip (create → completed, pushed by subscriptions/listen).
  const created: number[] = [];
  const oneStep: number[] = [];
  for (let i = 0; i < times(100); i++) {
    const run = await runTask(client, "bench_steps", steps(1));
    created.push(run.createMs);
    oneStep.push(run.totalMs);
  }
  const polled = await repeat(times(50), async () => (await runTaskPolling(client, "bench_steps", steps(1))).totalMs);
  const create = summarize(created);
  const roundTrip = summarize(oneStep);
  log(`create ${ms(create.p50)} p50; one-step round trip ${ms(roundTrip.p50)} (listen), ${ms(median(polled))} (poll)`);

  // tasks/get on a completed task and on one waiting for input.
  const done = await runTask(client, "bench_steps", steps(1, 100));
  const getCompleted = summarize(await repeat(times(300), async () => (await timed(() => client.get(done.taskId)))[0]));
  const asking = await client.start("bench_input", {});
  while ((await client.get(asking)).status !== "input_required");
  const getWaiting = summarize(await repeat(times(100), async () => (await timed(() => client.get(asking)))[0]));
  await client.update(asking, { continue: { action: "cancel" } });
  log(`tasks/get ${ms(getCompleted.p50)} p50, ${ms(getCompleted.p99)} p99 (input_required: ${ms(getWaiting.p50)})`);

  // One input round: tasks/update sent → completed notification.
  const inputRound = summarize(
    await repeat(times(20), async () => {
      const taskId = await client.start("bench_input", {});
      let answeredAt = 0;
      const finals = await client.listen([taskId], async (task) => {
        if (task.status === "input_required" && answeredAt === 0) {
          answeredAt = now();
          await client.update(taskId, { continue: { action: "accept", content: { ok: true } } });
        }
      });
      return finals.get(taskId)!.at - answeredAt;
    }),
  );
  log(`input round (tasks/update → completed) ${ms(inputRound.p50)} p50`);

  // Cost with steps per task: the whole task, create to completed.
  const stepCounts = [1, 10, 100, 1000, 3000];
  const bySteps: Array<{ steps: number; totalMs: number; perStepMs: number }> = [];
  let one = 0;
  for (const count of stepCounts) {
    const total = await medianTask(client, times(count >= 1000 ? 5 : 7), "bench_steps", steps(count));
    if (count === 1) one = total;
    bySteps.push({ steps: count, totalMs: total, perStepMs: count === 1 ? 0 : (total - one) / (count - 1) });
    log(`${count} steps: ${ms(total)} (${count === 1 ? "base" : `${ms((total - one) / (count - 1))}/step over one`})`);
  }
  const thousand = bySteps.find((row) => row.steps === 1000)!;

  // Cost with payload size: 100 steps vs one step, each step returning payloadBytes characters.
  const payloads = [0, 1024, 10_240, 102_400];
  const byPayload: Array<{ payloadBytes: number; oneStepMs: number; hundredStepsMs: number; perStepMs: number }> = [];
  for (const payloadBytes of payloads) {
    const single = await medianTask(client, times(5), "bench_steps", steps(1, payloadBytes));
    const hundred = await medianTask(client, times(5), "bench_steps", steps(100, payloadBytes));
    byPayload.push({ payloadBytes, oneStepMs: single, hundredStepsMs: hundred, perStepMs: (hundred - single) / 99 });
    log(`payload ${payloadBytes} B: ${ms((hundred - single) / 99)}/step`);
  }

  // Replay after a sleep: N journaled steps, a sleep, one more step. Against the same task with a zero sleep
  // (which never suspends), the difference minus the sleep is the suspend, the alarm and the replay of N steps.
  const sleepMs = 100;
  const replay: Array<{ before: number; noSleepMs: number; withSleepMs: number; resumeMs: number }> = [];
  for (const before of [0, 100, 1000]) {
    const reps = times(5);
    const straight = await medianTask(client, reps, "bench_sleep", { before, sleepMs: 0, after: 1 });
    const slept = await medianTask(client, reps, "bench_sleep", { before, sleepMs, after: 1 });
    replay.push({ before, noSleepMs: straight, withSleepMs: slept, resumeMs: slept - straight - sleepMs });
    log(`resume after a sleep with ${before} journaled steps: ${ms(slept - straight - sleepMs)}`);
  }
  const replayPerStep = (replay.at(-1)!.resumeMs - replay[0]!.resumeMs) / 1000;

  // Concurrent tasks: N tasks × 50 steps started together; wall time from the first tools/call to the last
  // completion (one listen over all of them).
  const concurrency: Array<{ tasks: number; stepsPerTask: number; wallMs: number; stepsPerSecond: number }> = [];
  for (const tasks of [1, 5, 20, 50]) {
    const walls = await repeat(times(3), async () => {
      const begin = now();
      const ids = await Promise.all(Array.from({ length: tasks }, () => client.start("bench_steps", steps(50))));
      const finals = await client.listen(ids);
      for (const { task } of finals.values()) resultOf(task);
      return Math.max(...[...finals.values()].map((final) => final.at)) - begin;
    });
    const wall = median(walls);
    concurrency.push({ tasks, stepsPerTask: 50, wallMs: wall, stepsPerSecond: (tasks * 50) / (wall / 1000) });
    log(`${tasks} parallel tasks × 50 steps: ${ms(wall)}, ${((tasks * 50) / (wall / 1000)).toFixed(0)} steps/s`);
  }

  return {
    create,
    oneStepRoundTrip: roundTrip,
    oneStepRoundTripPolling: summarize(polled),
    tasksGetCompleted: getCompleted,
    tasksGetInputRequired: getWaiting,
    inputRound,
    perStepMs: thousand.perStepMs,
    engineOverhead1000Ms: thousand.totalMs - one,
    bySteps,
    byPayload,
    replay: { sleepMs, rows: replay, perReplayedStepMs: replayPerStep },
    concurrency,
  };
}

// ───────────────────────────── report ─────────────────────────────

function environment() {
  const git = (...args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: workspaceRoot, encoding: "utf8" }).trim();
    } catch {
      return null;
    }
  };
  const version = (pkg: string) => {
    try {
      const path = join(workspaceRoot, "node_modules", pkg, "package.json");
      return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
    } catch {
      return null;
    }
  };
  return {
    date: new Date().toISOString(),
    commit: git("rev-parse", "--short", "HEAD"),
    libraryChanged: (git("status", "--porcelain", "--", "packages/durable-mcp-server/src") ?? "") !== "",
    node: process.version,
    wrangler: version("wrangler"),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    loadavgBefore: loadavg(),
  };
}

interface Target {
  metric: string;
  value: string;
  floor: string;
  ratio: string;
  target: string;
  met: boolean;
}

function targets(floor: Awaited<ReturnType<typeof measureFloor>>, wire: Awaited<ReturnType<typeof measureRuntime>>) {
  const http = floor.http.p50;
  const twenty = wire.concurrency.find((row) => row.tasks === 20)!;
  const rows: Target[] = [
    {
      metric: "create (tools/call → handle) p50",
      value: ms(wire.create.p50),
      floor: `HTTP + 1 DO call ${ms(http)}`,
      ratio: ratio(wire.create.p50 / http),
      target: "≤ 1.5× floor",
      met: wire.create.p50 <= 1.5 * http,
    },
    {
      metric: "tasks/get p50",
      value: ms(wire.tasksGetCompleted.p50),
      floor: `HTTP + 1 DO call ${ms(http)}`,
      ratio: ratio(wire.tasksGetCompleted.p50 / http),
      target: "≤ 1.2× floor",
      met: wire.tasksGetCompleted.p50 <= 1.2 * http,
    },
    {
      metric: "one-step task round trip p50",
      value: ms(wire.oneStepRoundTrip.p50),
      floor: `HTTP + 1 DO call ${ms(http)}`,
      ratio: ratio(wire.oneStepRoundTrip.p50 / http),
      target: "≤ 3× floor",
      met: wire.oneStepRoundTrip.p50 <= 3 * http,
    },
    {
      metric: "per-step overhead (1000 vs 1 step)",
      value: ms(wire.perStepMs),
      floor: `synced INSERT ${ms(floor.insertSyncedMs.p50)}`,
      ratio: ratio(wire.perStepMs / floor.insertSyncedMs.p50),
      target: "≤ 0.1 ms and ≤ 1 synced commit",
      met: wire.perStepMs <= 0.1 && wire.perStepMs <= floor.insertSyncedMs.p50,
    },
    {
      metric: "engine overhead, 1000-step task",
      value: ms(wire.engineOverhead1000Ms),
      floor: `1000 coalesced INSERTs ${ms(1000 * floor.insertCoalescedMs)}`,
      ratio: ratio(wire.engineOverhead1000Ms / (1000 * floor.insertCoalescedMs)),
      target: "< 200 ms",
      met: wire.engineOverhead1000Ms < 200,
    },
    {
      metric: "20 parallel tasks × 50 steps",
      value: `${twenty.stepsPerSecond.toFixed(0)} steps/s`,
      floor: "—",
      ratio: "—",
      target: "≥ 2000 steps/s",
      met: twenty.stepsPerSecond >= 2000,
    },
  ];
  return rows;
}

function report(
  floor: Awaited<ReturnType<typeof measureFloor>>,
  wire: Awaited<ReturnType<typeof measureRuntime>>,
  goals: Target[],
) {
  const http = floor.http.p50;
  const summaryRow = (name: string, s: Summary, denominator: number | null) => [
    name,
    ms(s.p50),
    ms(s.p99),
    denominator ? ratio(s.p50 / denominator) : "",
  ];
  console.log("\nFloor (same workerd, same machine)\n");
  console.log(
    table([
      ["measure", "p50", "p99", ""],
      summaryRow("HTTP request, Worker only", floor.httpNoDo, null),
      summaryRow("HTTP request + 1 DO call (the HTTP floor)", floor.http, null),
      summaryRow("HTTP request + new DO + 1 committed row", floor.httpNewObjectWrite, null),
      ["Worker→DO RPC (inside the Worker)", ms(floor.rpcMs), "", ""],
      ["SQLite INSERT, coalesced (batch wall time / N)", ms(floor.insertCoalescedMs), "", ""],
      summaryRow("SQLite INSERT + awaited storage.sync()", floor.insertSyncedMs, null),
    ]),
  );
  console.log("\ndurable-mcp-server over the wire (Tasks extension declared; ratio = p50 / HTTP floor)\n");
  console.log(
    table([
      ["measure", "p50", "p99", "× floor"],
      summaryRow("create: tools/call → task handle", wire.create, http),
      summaryRow("one-step task: create → completed (listen)", wire.oneStepRoundTrip, http),
      summaryRow("one-step task: create → completed (polling)", wire.oneStepRoundTripPolling, http),
      summaryRow("tasks/get, completed task", wire.tasksGetCompleted, http),
      summaryRow("tasks/get, input_required task", wire.tasksGetInputRequired, http),
      summaryRow("input round: tasks/update → completed", wire.inputRound, http),
    ]),
  );
  console.log("\nGrowth with steps per task (create → completed, median)\n");
  console.log(
    table([
      ["steps", "total", "per step over a one-step task"],
      ...wire.bySteps.map((row) => [String(row.steps), ms(row.totalMs), row.steps === 1 ? "" : ms(row.perStepMs)]),
    ]),
  );
  console.log("\nGrowth with payload (each step returns payloadBytes characters; 100 steps vs 1)\n");
  console.log(
    table([
      ["payload", "1 step", "100 steps", "per step"],
      ...wire.byPayload.map((row) => [
        `${row.payloadBytes} B`,
        ms(row.oneStepMs),
        ms(row.hundredStepsMs),
        ms(row.perStepMs),
      ]),
    ]),
  );
  console.log(`\nResume after a ${wire.replay.sleepMs} ms sleep (with-sleep − no-sleep − sleep)\n`);
  console.log(
    table([
      ["journaled steps", "no sleep", "with sleep", "resume cost"],
      ...wire.replay.rows.map((row) => [
        String(row.before),
        ms(row.noSleepMs),
        ms(row.withSleepMs),
        ms(row.resumeMs),
      ]),
    ]),
  );
  console.log(`replay: ${ms(wire.replay.perReplayedStepMs)} per journaled step`);
  console.log("\nConcurrent tasks × 50 steps (first tools/call → last completion, median)\n");
  console.log(
    table([
      ["tasks", "wall", "steps/s"],
      ...wire.concurrency.map((row) => [String(row.tasks), ms(row.wallMs), row.stepsPerSecond.toFixed(0)]),
    ]),
  );
  console.log("\nHeadline: targets\n");
  console.log(
    table([
      ["metric", "value", "floor", "ratio", "target", "met"],
      ...goals.map((goal) => [goal.metric, goal.value, goal.floor, goal.ratio, goal.target, goal.met ? "yes" : "NO"]),
    ]),
  );
}

const began = now();
const env = environment();
log(`starting bench-server on 127.0.0.1:${port} (${env.cpus} CPUs, load ${env.loadavgBefore.map((l) => l.toFixed(2))})`);
const measured = await withServer(port, async (server) => {
  log(`wrangler dev is up (${((now() - began) / 1000).toFixed(1)} s)`);
  const floor = await measureFloor(server);
  const wire = await measureRuntime(server);
  return { floor, wire };
});
const goals = targets(measured.floor, measured.wire);
report(measured.floor, measured.wire, goals);
const out = join(workspaceRoot, "results");
mkdirSync(out, { recursive: true });
const file = join(out, "bench.json");
const seconds = (now() - began) / 1000;
writeFileSync(
  file,
  `${JSON.stringify({ environment: { ...env, loadavgAfter: loadavg(), seconds, quick: scale < 1 }, ...measured, targets: goals }, null, 2)}\n`,
);
console.log(`\n[bench] wrote ${file} in ${seconds.toFixed(0)} s`);
