// `pnpm bench`: starts examples/bench-server under `wrangler dev` (local workerd, a fresh --persist-to dir, port
// BENCH_PORT or 8795) and measures durable-mcp-server over the wire, beside the platform floor measured in the
// same runtime. Prints tables and writes results/bench.json. It reports figures; it gates nothing.
//   BENCH_QUICK=1                 a fifth of the iterations, to try the driver out
//   BENCH_LOCAL_OBSERVABILITY=1   keep wrangler dev's local tracing on (see docs/performance.md)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import type { JsonObject, McpHttpClient } from "@durable-mcp/test-harness";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer, workspaceRoot, type BenchServer } from "./server.ts";
import { median, ms, ratio, summarize, table, type Summary } from "./stats.ts";
import { fileRowsTable, measureFiles } from "./files.ts";
import { measureStepRows, stepRowsTable } from "./steps.ts";

const port = Number(process.env.BENCH_PORT ?? 8795);
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

interface Batch {
  n: number;
  insideMs: number;
}

/**
 * Per-row cost of a batch of `n` INSERTs, two ways: the wall time of the whole call (reply after the commit)
 * minus that of an empty call, from outside; and the loop's own time on workerd's clock, from inside.
 */
async function insertCost(origin: string, path: string, n: number, bytes: number, reps: number) {
  await getJson(`${origin}${path}?n=${Math.min(n, 10)}&bytes=${bytes}`);
  const empty: number[] = [];
  const full: number[] = [];
  const inside: number[] = [];
  for (let i = 0; i < reps; i++) {
    empty.push((await timed(() => getJson(`${origin}${path}?n=0&bytes=${bytes}`)))[0]);
    const [elapsed, batch] = await timed(() => getJson<Batch>(`${origin}${path}?n=${n}&bytes=${bytes}`));
    full.push(elapsed);
    inside.push(batch.insideMs);
  }
  return {
    n,
    bytes,
    outsideMs: Math.max(0, median(full) - median(empty)) / n,
    insideMs: median(inside) / n,
    emptyCallMs: median(empty),
    fullCallMs: median(full),
  };
}

async function measureFloor(server: BenchServer, payloads: number[]) {
  const { origin } = server;
  const clock = await getJson<{ dateMs: number; perfMs: number }>(`${origin}/floor/clock?iterations=50000000`);
  log(`clock check: a CPU spin with no I/O moved Date.now() by ${clock.dateMs} ms inside the Durable Object`);

  await httpSamples(origin, "/floor/http", times(50));
  await httpSamples(origin, "/floor/noop", times(50));
  const noop = summarize(await httpSamples(origin, "/floor/noop", times(400)));
  const http = summarize(await httpSamples(origin, "/floor/http", times(400)));
  const httpNew = summarize(await httpSamples(origin, "/floor/http-new", times(150)));
  const httpWrite = summarize(await httpSamples(origin, "/floor/http-write", times(150)));
  log(
    `HTTP p50: Worker only ${ms(noop.p50)}, + 1 DO call ${ms(http.p50)}, + a new DO ${ms(httpNew.p50)}, + a new DO and its first row ${ms(httpWrite.p50)}`,
  );

  const rpcBatches = await repeat(5, async () => {
    const { n, totalMs } = await getJson<{ n: number; totalMs: number }>(`${origin}/floor/rpc?n=${times(1000)}`);
    return totalMs / n;
  });
  const rpc = median(rpcBatches);
  log(`Worker→DO RPC: ${ms(rpc)} each (inside the Worker, median of 5 batches of ${times(1000)})`);

  const alarm = summarize((await getJson<{ times: number[] }>(`${origin}/floor/alarm?n=${times(50)}`)).times);
  log(`alarm dispatch (setAlarm(now) → alarm() runs): ${ms(alarm.p50)} p50`);

  const coalesced = await insertCost(origin, "/floor/insert", times(20_000), 0, 9);
  log(`SQLite INSERT, coalesced: ${ms(coalesced.outsideMs)} (outside), ${ms(coalesced.insideMs)} (inside)`);
  const synced = await insertCost(origin, "/floor/insert-synced", times(300), 0, 3);
  log(`SQLite INSERT + storage.sync(): ${ms(synced.insideMs)} (inside), ${ms(synced.outsideMs)} (outside)`);
  const byPayload = [];
  for (const bytes of payloads.filter((b) => b > 0)) {
    byPayload.push(await insertCost(origin, "/floor/insert", times(100), bytes, 5));
  }
  return {
    clockCheck: clock,
    httpWorkerOnly: noop,
    http,
    httpNewObject: httpNew,
    httpNewObjectFirstRow: httpWrite,
    rpcMs: rpc,
    rpcBatchesMs: rpcBatches,
    alarmDispatch: alarm,
    insertCoalesced: coalesced,
    insertSynced: synced,
    insertCoalescedByPayload: byPayload,
  };
}

// ───────────────────────────── the runtime over the wire ─────────────────────────────

/** Starts a task and waits for it over subscriptions/listen: ms from tools/call to the handle and to final. */
async function runTask(client: McpHttpClient, tool: string, args: JsonObject) {
  const begin = now();
  const taskId = (await client.startTask(tool, args)).taskId;
  const createMs = now() - begin;
  const final = (await client.listenTasks([taskId])).get(taskId)!;
  const result = resultOf(final.task);
  return { taskId, createMs, totalMs: final.at - begin, result };
}

/** The same, waiting by polling tasks/get back to back. */
async function runTaskPolling(client: McpHttpClient, tool: string, args: JsonObject): Promise<number> {
  const begin = now();
  const taskId = (await client.startTask(tool, args)).taskId;
  for (;;) {
    const task = await client.getTask(taskId);
    if (task.status !== "working") {
      resultOf(task);
      return now() - begin;
    }
  }
}

const steps = (n: number, payloadBytes = 0) => ({ steps: n, payloadBytes });

/**
 * The one-step task with an inline budget (bench_inline, `inline: "50 ms"`): tools/call → the ordinary result. A
 * call the budget did not cover comes back as a task; it is followed to completion (listen) and counted.
 */
async function measureInline(client: McpHttpClient) {
  let asTask = 0;
  const once = async () => {
    const begin = now();
    const answer = await client.call("tools/call", { name: "bench_inline", arguments: steps(1) });
    if (answer.resultType === "task") {
      asTask++;
      resultOf((await client.listenTasks([answer.taskId as string])).get(answer.taskId as string)!.task);
    } else if (answer.isError) {
      throw new Error(`bench_inline failed: ${JSON.stringify(answer)}`);
    }
    return now() - begin;
  };
  await repeat(times(20), once);
  asTask = 0;
  const roundTrip = summarize(await repeat(times(200), once));
  return { roundTrip, asTask, calls: times(200) };
}

/**
 * `reps` pairs of tasks run back to back, a baseline and a variant: the medians of each, and the median of the
 * per-pair differences (drift in the machine's load cancels within a pair).
 */
async function paired(client: McpHttpClient, reps: number, tool: string, base: JsonObject, variant: JsonObject) {
  const baseMs: number[] = [];
  const variantMs: number[] = [];
  const diffMs: number[] = [];
  const variantResults: JsonObject[] = [];
  for (let i = 0; i < reps; i++) {
    const a = (await runTask(client, tool, base)).totalMs;
    const b = await runTask(client, tool, variant);
    baseMs.push(a);
    variantMs.push(b.totalMs);
    diffMs.push(b.totalMs - a);
    variantResults.push(b.result);
  }
  return { baseMs: median(baseMs), variantMs: median(variantMs), diffMs: median(diffMs), variantResults };
}

/** The full suite, on /mcp-quiet: the library with task event logging off (measureDefaults covers /mcp). */
async function measureRuntime(server: BenchServer, payloads: number[]) {
  const client = benchClient(`${server.origin}/mcp-quiet`);

  // An MCP request that reaches no Durable Object: what the SDK and the router cost per request.
  await repeat(times(30), async () => (await timed(() => client.call("server/discover")))[0]);
  const discover = summarize(
    await repeat(times(300), async () => (await timed(() => client.call("server/discover")))[0]),
  );
  log(`server/discover (no DO) ${ms(discover.p50)} p50`);

  for (let i = 0; i < times(20); i++) await runTask(client, "bench_steps", steps(1));
  const created: number[] = [];
  const oneStep: number[] = [];
  for (let i = 0; i < times(200); i++) {
    const run = await runTask(client, "bench_steps", steps(1));
    created.push(run.createMs);
    oneStep.push(run.totalMs);
  }
  const create = summarize(created);
  const roundTrip = summarize(oneStep);
  const polled = summarize(await repeat(times(100), () => runTaskPolling(client, "bench_steps", steps(1))));
  log(`create ${ms(create.p50)} p50; one-step round trip ${ms(roundTrip.p50)} (listen), ${ms(polled.p50)} (poll)`);
  const inline = await measureInline(client);
  log(
    `one-step task inline (bench_inline, 50 ms budget) ${ms(inline.roundTrip.p50)} p50; ${inline.asTask} came back as a task`,
  );

  const done = await runTask(client, "bench_steps", steps(1, 100));
  const getCompleted = summarize(
    await repeat(times(500), async () => (await timed(() => client.getTask(done.taskId)))[0]),
  );
  const asking = (await client.startTask("bench_input", {})).taskId;
  while ((await client.getTask(asking)).status !== "input_required");
  const getWaiting = summarize(await repeat(times(200), async () => (await timed(() => client.getTask(asking)))[0]));
  await client.updateTask(asking, { continue: { action: "cancel" } });
  log(`tasks/get ${ms(getCompleted.p50)} p50, ${ms(getCompleted.p99)} p99 (input_required: ${ms(getWaiting.p50)})`);

  const inputRound = summarize(
    await repeat(times(30), async () => {
      const taskId = (await client.startTask("bench_input", {})).taskId;
      let answeredAt = 0;
      const finals = await client.listenTasks([taskId], async (task) => {
        if (task.status === "input_required" && answeredAt === 0) {
          answeredAt = now();
          await client.updateTask(taskId, { continue: { action: "accept", content: { ok: true } } });
        }
      });
      return finals.get(taskId)!.at - answeredAt;
    }),
  );
  log(`input round (tasks/update → completed) ${ms(inputRound.p50)} p50`);

  // Steps per task: the whole task, tools/call to the completed notification, each paired with a one-step task.
  const bySteps: Array<{ steps: number; oneStepMs: number; totalMs: number; perStepMs: number }> = [];
  for (const [count, reps] of [
    [10, 15],
    [100, 15],
    [1000, 9],
    [3000, 5],
    [10_000, 3],
  ] as const) {
    const pair = await paired(client, times(reps), "bench_steps", steps(1), steps(count));
    const perStepMs = pair.diffMs / (count - 1);
    bySteps.push({ steps: count, oneStepMs: pair.baseMs, totalMs: pair.variantMs, perStepMs });
    log(`${count} steps: ${ms(pair.variantMs)} (${ms(perStepMs)} per step over a one-step task)`);
  }
  const thousand = bySteps.find((row) => row.steps === 1000)!;

  // Payload: 100 steps vs 1, each step returning payloadBytes characters.
  const byPayload: Array<{ payloadBytes: number; oneStepMs: number; hundredStepsMs: number; perStepMs: number }> = [];
  for (const payloadBytes of payloads) {
    const pair = await paired(client, times(9), "bench_steps", steps(1, payloadBytes), steps(100, payloadBytes));
    byPayload.push({
      payloadBytes,
      oneStepMs: pair.baseMs,
      hundredStepsMs: pair.variantMs,
      perStepMs: pair.diffMs / 99,
    });
    log(`payload ${payloadBytes} B: ${ms(pair.diffMs / 99)} per step`);
  }

  // Resume after a sleep: N journaled steps, a sleep, one more step. The resumed run replays the N steps from the
  // journal before it gets past the sleep; the tool reports how long that took on the Durable Object's clock
  // (replayMs, whole ms). Over the wire, the same task with a zero sleep (which never suspends) is its pair:
  // with − without − the sleep is the suspension, the alarm and the replay, less whatever the first run's
  // commit and garbage collection cost that the sleep now hides.
  const sleepMs = 100;
  const replay: Array<{
    before: number;
    noSleepMs: number;
    withSleepMs: number;
    resumeMs: number;
    replayMs: number;
  }> = [];
  for (const [before, reps] of [
    [0, 9],
    [1000, 9],
    [3000, 7],
    [10_000, 5],
  ] as const) {
    const pair = await paired(
      client,
      times(reps),
      "bench_sleep",
      { before, sleepMs: 0, after: 1 },
      { before, sleepMs, after: 1 },
    );
    const resumeMs = pair.diffMs - sleepMs;
    const replayMs = median(pair.variantResults.map((result) => Number(result.replayMs)));
    replay.push({ before, noSleepMs: pair.baseMs, withSleepMs: pair.variantMs, resumeMs, replayMs });
    log(`after a sleep over ${before} journaled steps: replay ${ms(replayMs)}, resume over the wire ${ms(resumeMs)}`);
  }
  const longest = replay.at(-1)!;
  const perReplayedStepMs = (longest.replayMs - replay[0]!.replayMs) / longest.before;

  // Concurrent tasks: N tasks × 50 steps started together, first tools/call to last completion (one listen).
  const concurrency: Array<{ tasks: number; stepsPerTask: number; wallMs: number; stepsPerSecond: number }> = [];
  for (const tasks of [1, 5, 20, 50]) {
    const walls = await repeat(times(7), async () => {
      const begin = now();
      const ids = await Promise.all(
        Array.from({ length: tasks }, () => client.startTask("bench_steps", steps(50)).then((task) => task.taskId)),
      );
      const finals = await client.listenTasks(ids);
      for (const { task } of finals.values()) resultOf(task);
      return Math.max(...[...finals.values()].map((final) => final.at)) - begin;
    });
    const wallMs = median(walls);
    const stepsPerSecond = (tasks * 50) / (wallMs / 1000);
    concurrency.push({ tasks, stepsPerTask: 50, wallMs, stepsPerSecond });
    log(`${tasks} parallel tasks × 50 steps: ${ms(wallMs)}, ${stepsPerSecond.toFixed(0)} steps/s`);
  }

  return {
    discover,
    create,
    oneStepRoundTrip: roundTrip,
    oneStepRoundTripPolling: polled,
    oneStepInline: inline,
    tasksGetCompleted: getCompleted,
    tasksGetInputRequired: getWaiting,
    inputRound,
    perStepMs: thousand.perStepMs,
    engineOverhead1000Ms: thousand.perStepMs * 999,
    bySteps,
    byPayload,
    replay: { sleepMs, rows: replay, perReplayedStepMs },
    concurrency,
  };
}

/**
 * The headline figures again on /mcp: the library exactly as configured by default (task event logging at its
 * default level). Shorter than the full suite; each log line costs something under wrangler dev (see the docs).
 */
async function measureDefaults(server: BenchServer) {
  const client = benchClient(server.url);
  for (let i = 0; i < times(5); i++) await runTask(client, "bench_steps", steps(1));
  const created: number[] = [];
  const oneStep: number[] = [];
  for (let i = 0; i < times(50); i++) {
    const run = await runTask(client, "bench_steps", steps(1));
    created.push(run.createMs);
    oneStep.push(run.totalMs);
  }
  const done = await runTask(client, "bench_steps", steps(1));
  const getCompleted = summarize(
    await repeat(times(200), async () => (await timed(() => client.getTask(done.taskId)))[0]),
  );
  const thousand = await paired(client, times(5), "bench_steps", steps(1), steps(1000));
  const walls = await repeat(times(3), async () => {
    const begin = now();
    const ids = await Promise.all(
      Array.from({ length: 20 }, () => client.startTask("bench_steps", steps(50)).then((task) => task.taskId)),
    );
    const finals = await client.listenTasks(ids);
    for (const { task } of finals.values()) resultOf(task);
    return Math.max(...[...finals.values()].map((final) => final.at)) - begin;
  });
  const parallelWallMs = median(walls);
  const result = {
    create: summarize(created),
    oneStepRoundTrip: summarize(oneStep),
    tasksGetCompleted: getCompleted,
    perStepMs: thousand.diffMs / 999,
    engineOverhead1000Ms: thousand.diffMs,
    parallel20x50: { wallMs: parallelWallMs, stepsPerSecond: 1000 / (parallelWallMs / 1000) },
  };
  log(
    `defaults: create ${ms(result.create.p50)}, one-step ${ms(result.oneStepRoundTrip.p50)}, ` +
      `tasks/get ${ms(getCompleted.p50)}, ${ms(result.perStepMs)} per step, ` +
      `20 × 50 at ${result.parallel20x50.stepsPerSecond.toFixed(0)} steps/s`,
  );
  return result;
}

/**
 * Opt-in per-step event lines (/mcp-step-events, `events: "all"`: two log lines per step), and the platform's
 * price of one console.log line in the same runtime. Last and short: see the docs on wrangler dev and log lines.
 */
async function measureStepEvents(server: BenchServer) {
  const client = benchClient(`${server.origin}/mcp-step-events`);
  await runTask(client, "bench_steps", steps(1));
  const hundred = await paired(client, times(3), "bench_steps", steps(1), steps(100));
  const lineCost = await insertCost(server.origin, "/floor/log", times(100), 0, 3);
  log(`events "all": ${ms(hundred.diffMs / 99)} per step (100 vs 1); one console.log line ${ms(lineCost.outsideMs)}`);
  return { perStepMs: hundred.diffMs / 99, logLineMs: lineCost.outsideMs };
}

// ───────────────────────────── report ─────────────────────────────

type Floor = Awaited<ReturnType<typeof measureFloor>>;
type Wire = Awaited<ReturnType<typeof measureRuntime>>;
type Defaults = Awaited<ReturnType<typeof measureDefaults>>;
type StepEvents = Awaited<ReturnType<typeof measureStepEvents>>;

function git(...args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: workspaceRoot, encoding: "utf8", stdio: "pipe" }).trim();
  } catch {
    return null;
  }
}

function version(pkg: string): string | null {
  try {
    const path = join(workspaceRoot, "node_modules", pkg, "package.json");
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

function environment() {
  return {
    date: new Date().toISOString(),
    commit: git("rev-parse", "--short", "HEAD"),
    libraryUncommittedChanges: (git("status", "--porcelain", "--", "packages/durable-mcp-server/src") ?? "") !== "",
    node: process.version,
    wrangler: version("wrangler"),
    localObservability: process.env.BENCH_LOCAL_OBSERVABILITY === "1",
    quick: scale < 1,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    loadavgBefore: loadavg(),
  };
}

interface Target {
  metric: string;
  target: string;
  floor: string;
  /** events: "none" (/mcp-quiet) */
  quiet: { value: string; ratio: string; met: boolean };
  /** the library's defaults (/mcp) */
  defaults: { value: string; ratio: string; met: boolean };
}

function targets(floor: Floor, wire: Wire, defaults: Defaults): Target[] {
  const http = floor.http.p50;
  const synced = floor.insertSynced.insideMs;
  const twenty = wire.concurrency.find((r) => r.tasks === 20)!.stepsPerSecond;
  const floorHttp = `HTTP + 1 DO call ${ms(http)}`;
  const stepGoal = (v: number) => v <= 0.1 && v <= synced;
  const latency = (metric: string, goal: number, quiet: number, byDefault: number): Target => ({
    metric,
    target: `≤ ${goal}× floor`,
    floor: floorHttp,
    quiet: { value: ms(quiet), ratio: ratio(quiet / http), met: quiet <= goal * http },
    defaults: { value: ms(byDefault), ratio: ratio(byDefault / http), met: byDefault <= goal * http },
  });
  return [
    {
      metric: "per-step overhead (1000 vs 1 step)",
      target: "≤ 0.1 ms and ≤ 1 synced commit",
      floor: `synced INSERT ${ms(synced)}`,
      quiet: { value: ms(wire.perStepMs), ratio: ratio(wire.perStepMs / synced), met: stepGoal(wire.perStepMs) },
      defaults: {
        value: ms(defaults.perStepMs),
        ratio: ratio(defaults.perStepMs / synced),
        met: stepGoal(defaults.perStepMs),
      },
    },
    latency("create: tools/call → handle, p50", 1.5, wire.create.p50, defaults.create.p50),
    latency("tasks/get p50", 1.2, wire.tasksGetCompleted.p50, defaults.tasksGetCompleted.p50),
    latency("one-step task round trip p50", 3, wire.oneStepRoundTrip.p50, defaults.oneStepRoundTrip.p50),
    {
      metric: "engine overhead of a 1000-step task",
      target: "< 200 ms",
      floor: `2000 coalesced INSERTs ${ms(2000 * floor.insertCoalesced.outsideMs)}`,
      quiet: {
        value: ms(wire.engineOverhead1000Ms),
        ratio: ratio(wire.engineOverhead1000Ms / (2000 * floor.insertCoalesced.outsideMs)),
        met: wire.engineOverhead1000Ms < 200,
      },
      defaults: {
        value: ms(defaults.engineOverhead1000Ms),
        ratio: ratio(defaults.engineOverhead1000Ms / (2000 * floor.insertCoalesced.outsideMs)),
        met: defaults.engineOverhead1000Ms < 200,
      },
    },
    {
      metric: "20 parallel tasks × 50 steps",
      target: "≥ 2000 steps/s",
      floor: "—",
      quiet: { value: `${twenty.toFixed(0)} steps/s`, ratio: "—", met: twenty >= 2000 },
      defaults: {
        value: `${defaults.parallel20x50.stepsPerSecond.toFixed(0)} steps/s`,
        ratio: "—",
        met: defaults.parallel20x50.stepsPerSecond >= 2000,
      },
    },
  ];
}

const row = (name: string, s: Summary, versus?: number) => [
  name,
  ms(s.p50),
  ms(s.p99),
  versus === undefined ? "" : ratio(s.p50 / versus),
];

const print = (title: string, rows: string[][]) => console.log(`\n${title}\n\n${table(rows)}`);

function report(floor: Floor, wire: Wire, defaults: Defaults, stepEvents: StepEvents, goals: Target[]) {
  const http = floor.http.p50;
  print("Floor: the platform in the same workerd (ratio: p50 / HTTP + 1 DO call)", [
    ["measure", "p50", "p99", "ratio"],
    row("HTTP request, Worker only", floor.httpWorkerOnly, http),
    row("HTTP request + 1 DO call (the HTTP floor)", floor.http, http),
    row("HTTP request + 1 call to a new DO", floor.httpNewObject, http),
    row("HTTP request + new DO + its first row committed", floor.httpNewObjectFirstRow, http),
    ["Worker→DO RPC, inside the Worker", ms(floor.rpcMs), "", ""],
    row("Alarm dispatch: setAlarm(now) → alarm() runs", floor.alarmDispatch, http),
    ["SQLite INSERT, coalesced: batch wall time / N", ms(floor.insertCoalesced.outsideMs), "", ""],
    ["SQLite INSERT, coalesced: loop time inside / N", ms(floor.insertCoalesced.insideMs), "", ""],
    ["SQLite INSERT + awaited storage.sync() (inside)", ms(floor.insertSynced.insideMs), "", ""],
    ...floor.insertCoalescedByPayload.map((p) => [`SQLite INSERT of ${p.bytes} B, coalesced`, ms(p.outsideMs), "", ""]),
  ]);
  print(
    "durable-mcp-server over the wire on /mcp-quiet (events: none), Tasks extension declared (ratio: p50 / HTTP floor)",
    [
      ["measure", "p50", "p99", "ratio"],
      row("server/discover (MCP request, no DO)", wire.discover, http),
      row("create: tools/call → task handle", wire.create, http),
      row("one-step task: create → completed (listen)", wire.oneStepRoundTrip, http),
      row("one-step task: create → completed (polling)", wire.oneStepRoundTripPolling, http),
      row(
        `one-step task, inline: tools/call → result (${wire.oneStepInline.asTask}/${wire.oneStepInline.calls} as a task)`,
        wire.oneStepInline.roundTrip,
        http,
      ),
      row("tasks/get, completed task", wire.tasksGetCompleted, http),
      row("tasks/get, input_required task", wire.tasksGetInputRequired, http),
      row("input round: tasks/update → completed", wire.inputRound, http),
    ],
  );
  print("Steps per task (create → completed; each run paired with a one-step task, medians)", [
    ["steps", "one-step task", "this task", "per step over the one-step task"],
    ...wire.bySteps.map((r) => [String(r.steps), ms(r.oneStepMs), ms(r.totalMs), ms(r.perStepMs)]),
  ]);
  print("Payload (each step returns payloadBytes characters; 100 steps paired with 1, medians)", [
    ["payload", "1 step", "100 steps", "per step", "coalesced INSERT of that size"],
    ...wire.byPayload.map((r) => [
      `${r.payloadBytes} B`,
      ms(r.oneStepMs),
      ms(r.hundredStepsMs),
      ms(r.perStepMs),
      ms(
        floor.insertCoalescedByPayload.find((p) => p.bytes === r.payloadBytes)?.outsideMs ??
          floor.insertCoalesced.outsideMs,
      ),
    ]),
  ]);
  print(`Resume after a ${wire.replay.sleepMs} ms sleep (medians)`, [
    ["journaled steps", "replay in the resumed run", "without sleep", "with sleep", "wire: with − without − sleep"],
    ...wire.replay.rows.map((r) => [
      String(r.before),
      ms(r.replayMs),
      ms(r.noSleepMs),
      ms(r.withSleepMs),
      ms(r.resumeMs),
    ]),
  ]);
  console.log(`replay in the resumed run: ${ms(wire.replay.perReplayedStepMs)} per journaled step`);
  print("Concurrent tasks × 50 steps (first tools/call → last completion, median)", [
    ["tasks", "wall", "steps/s"],
    ...wire.concurrency.map((r) => [String(r.tasks), ms(r.wallMs), r.stepsPerSecond.toFixed(0)]),
  ]);
  print("Event logging: none (/mcp-quiet), the library's default (/mcp), every step (/mcp-step-events)", [
    ["measure", "events: none", "defaults", 'events: "all"'],
    ["create p50", ms(wire.create.p50), ms(defaults.create.p50), ""],
    ["one-step task round trip p50", ms(wire.oneStepRoundTrip.p50), ms(defaults.oneStepRoundTrip.p50), ""],
    ["tasks/get p50", ms(wire.tasksGetCompleted.p50), ms(defaults.tasksGetCompleted.p50), ""],
    [
      "per step (100 steps vs 1)",
      ms(wire.bySteps.find((r) => r.steps === 100)!.perStepMs),
      "",
      ms(stepEvents.perStepMs),
    ],
    ["per step (1000 steps vs 1)", ms(wire.perStepMs), ms(defaults.perStepMs), ""],
    [
      "20 parallel tasks × 50 steps",
      `${wire.concurrency.find((r) => r.tasks === 20)!.stepsPerSecond.toFixed(0)} steps/s`,
      `${defaults.parallel20x50.stepsPerSecond.toFixed(0)} steps/s`,
      "",
    ],
    ["one console.log line (floor)", "", "", ms(stepEvents.logLineMs)],
  ]);
  print("Targets (ratio: to the floor named)", [
    ["metric", "target", "floor", "events: none", "ratio", "met", "defaults", "ratio", "met"],
    ...goals.map((g) => [
      g.metric,
      g.target,
      g.floor,
      g.quiet.value,
      g.quiet.ratio,
      g.quiet.met ? "yes" : "NO",
      g.defaults.value,
      g.defaults.ratio,
      g.defaults.met ? "yes" : "NO",
    ]),
  ]);
}

const began = now();
const env = environment();
const payloads = [0, 1024, 10_240, 102_400];
log(
  `bench-server on 127.0.0.1:${port}; ${env.cpus} CPUs, load ${env.loadavgBefore.map((l) => l.toFixed(2)).join(" ")}` +
    `${env.libraryUncommittedChanges ? "; NOTE: packages/durable-mcp-server/src has uncommitted changes" : ""}`,
);
const measured = await withServer(port, async (server) => {
  log(`wrangler dev is up after ${((now() - began) / 1000).toFixed(1)} s`);
  const floor = await measureFloor(server, payloads);
  const wire = await measureRuntime(server, payloads);
  const defaults = await measureDefaults(server);
  const stepEvents = await measureStepEvents(server);
  // The step engine's rows (issue 15): per step at 2,000 and 10,000, and tasks/get during a long run.
  const engine = {
    httpFloorMs: floor.http.p50,
    newObjectFloorMs: floor.httpNewObjectFirstRow.p50,
    ...(await measureStepRows(benchClient(`${server.origin}/mcp-quiet`), scale)),
  };
  // The files rows (issue 15): upload vs raw R2 put, download vs raw R2 get, measured here with their floors.
  const files = process.env.BENCH_FILES === "0" ? null : await measureFiles(server.origin, log);
  return { floor, wire, defaults, stepEvents, engine, files };
});
const goals = targets(measured.floor, measured.wire, measured.defaults);
report(measured.floor, measured.wire, measured.defaults, measured.stepEvents, goals);
console.log(
  "\nStep engine on /mcp-quiet (issue 15: ≤ 10 µs per step at 2,000 steps, flat to 10,000; reads between steps)\n",
);
console.log(stepRowsTable(measured.engine));
if (measured.files) {
  console.log("\nFiles (issue 15; medians of 3 interleaved rounds, both floors measured in this run)\n");
  console.log(fileRowsTable(measured.files));
}
const seconds = (now() - began) / 1000;
const out = join(workspaceRoot, "results");
mkdirSync(out, { recursive: true });
const file = join(out, "bench.json");
const environmentAfter = { ...env, loadavgAfter: loadavg(), seconds };
writeFileSync(file, `${JSON.stringify({ environment: environmentAfter, ...measured, targets: goals }, null, 2)}\n`);
console.log(`\n[bench] wrote ${file} (${seconds.toFixed(0)} s in all)`);
