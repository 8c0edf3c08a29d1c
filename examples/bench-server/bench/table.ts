// The performance table's rows (issue 32), each against a named floor measured in the same round, the floors
// interleaved with what they judge so that drift in a shared machine's load falls on both. One round:
//   F (GET /floor/http: HTTP → Worker → one call to a warm object), then create + poll to completion on /mcp and the
//   same task with an inline result (bench_inline), then
//   the new-object floor (GET /floor/http-write) and the committed-POST floor (a tools/call's request to
//   /floor/http-post-write: one JSON.parse, one warm call that commits a row), then the POST floor (the tasks/get's own request to
//   /floor/http-post: one JSON.parse, one warm call) and tasks/get in alternating halves, then F again (the round's
//   F is both blocks together); the pool's gain (/mcp-counted with pre-created runners against
//   /mcp-counted-nopool, order alternating by round) and its cost (prepares and rows counted in the objects); creates
//   where a warm pre-created runner serves them, each with its round trip (paced, on /mcp-counted then /mcp, between
//   two paced F blocks); the
//   synced-commit floor (INSERT + awaited storage.sync()) and 20 × 50 on the journal clock; per-step pairs at 2,000
//   and 10,000 steps; three 10,000-step runs, each with tasks/get sent back to back, every get timed.
// Every round is kept; a row's figure is the median of its rounds' own ratios (or values), and every round is shown.
import type { McpHttpClient } from "@durable-mcp/test-harness";
import { loadavg } from "node:os";
import { log, now, repeat, timed } from "./common.ts";
import { httpSamples, insertCost, postFloorClient } from "./floor.ts";
import { benchClient, resultOf } from "./mcp.ts";
import type { BenchServer } from "./server.ts";
import { median, ms, summarize } from "./stats.ts";
import { measureGetDuringRun, measureParallelJournalClock, measurePerStep } from "./steps.ts";
import { inlineCall } from "./wire.ts";

const oneStep = { steps: 1, payloadBytes: 0 };

/**
 * A paced block leaves this long after each request (a create: after its task completed), so that the pool's refill
 * (PREPARED_RUNNER_REFILL_DELAY_MS, 50 ms after a reply) has prepared the next runner before the next create: about
 * 12 creates a second, for which the pool keeps two runners ready. F is paced the same, to judge like with like.
 */
export const PACED_GAP_MS = 60;
/** Creates a paced block sends before it measures: until the pool's rate (its last 10 s) asks for runners. */
const PACED_WARMUP = 30;
const pause = () => new Promise((resolve) => setTimeout(resolve, PACED_GAP_MS));

export interface TableSizes {
  rounds: number;
  /** Requests per floor block and creates per create block. */
  perBlock: number;
  pairs2000: number;
  pairs10000: number;
  parallelRuns: number;
}

export const FULL_SIZES: TableSizes = { rounds: 5, perBlock: 100, pairs2000: 9, pairs10000: 3, parallelRuns: 3 };
export const QUICK_SIZES: TableSizes = { rounds: 2, perBlock: 20, pairs2000: 3, pairs10000: 1, parallelRuns: 1 };

export interface PoolCounts {
  creates: number;
  prepares: number;
  objects: number;
  rowsWritten: number;
  setAlarms: number;
}

/** One round's p50s (ms) and figures; nothing of a round is dropped. */
export interface TableRound {
  round: number;
  loadavg: number[];
  httpFloor: number;
  postFloor: number;
  newObjectFloor: number;
  /** A tools/call-shaped POST to /floor/http-post-write: body parsed, one warm call that commits one row. */
  postWriteFloor: number;
  create: number;
  roundTripPolling: number;
  /** The mean number of tasks/get a round trip sent until the task was final. */
  getsPerTrip: number;
  /** The same one-step task with an inline budget (bench_inline): tools/call → the result; asTask: came back as a task. */
  inline: { p50: number; asTask: number };
  get: number;
  pool: { first: "pool" | "nopool"; create: number; createNoPool: number; pool: PoolCounts; noPool: PoolCounts };
  /**
   * Creates where a warm pre-created runner serves them: paced (PACED_GAP_MS after each task), on `/mcp` and on
   * `/mcp-counted` (no TaskIndex write), against F paced the same; `served`: the share of the counted block's
   * creates that reached a prepared runner; `creates`: how many of the block's `planned` creates were counted
   * (fewer when the Worker reloaded mid-block and its counters with it: `wrangler dev` rebuilds on a source change).
   * `roundTrip`, `getsPerTrip`: the `/mcp` block's trips (its create, then tasks/get until final), the round trip a
   * caller sees when a warm runner serves the create.
   */
  warm: {
    gapMs: number;
    httpFloor: number;
    create: number;
    roundTrip: number;
    getsPerTrip: number;
    createNoIndex: number;
    served: number;
    creates: number;
    planned: number;
  };
  perStep2000Ms: number;
  perStep10000Ms: number;
  /** Over the round's three runs; firstMs and lastMs: the worst first and the worst last get of a run. */
  getWait: { gets: number; worstMs: number; firstMs: number; lastMs: number; p50Ms: number };
  syncedCommitMs: number;
  parallel: {
    runs: Array<{ journalSpanMs: number; stepsPerSecond: number; clientMs: number }>;
    stepsPerSecond: number;
  };
}

/** tools/call → the handle, then tasks/get back to back until final: [create ms, round trip ms, gets sent]. */
export async function createAndPoll(client: McpHttpClient): Promise<[number, number, number]> {
  const begin = now();
  const taskId = (await client.startTask("bench_steps", oneStep)).taskId;
  const created = now() - begin;
  for (let gets = 1; ; gets++) {
    const task = await client.getTask(taskId);
    if (task.status !== "working") {
      resultOf(task);
      return [created, now() - begin, gets];
    }
  }
}

async function createBlock(client: McpHttpClient, n: number) {
  const creates: number[] = [];
  const trips: number[] = [];
  let gets = 0;
  for (let i = 0; i < n; i++) {
    const [created, total, sent] = await createAndPoll(client);
    creates.push(created);
    trips.push(total);
    gets += sent;
  }
  return { create: summarize(creates).p50, roundTrip: summarize(trips).p50, getsPerTrip: gets / n };
}

interface RawCounts {
  objects: number;
  preparedCreates: number;
  calls: Record<string, number>;
  setAlarms: number;
  rowsWritten: number;
}

async function counts(origin: string, reset: boolean): Promise<RawCounts> {
  return (await (await fetch(`${origin}/bench/counts${reset ? "?reset=1" : ""}`)).json()) as RawCounts;
}

/** Creates on one of the counted endpoints, then (after their runs and refills settle) what they cost. */
async function countedBlock(origin: string, path: string, n: number): Promise<[number, PoolCounts]> {
  await counts(origin, true);
  const { create } = await createBlock(benchClient(`${origin}${path}`), n);
  // The last runs, refills and any prepared runner's first-second alarm.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const c = await counts(origin, true);
  return [
    create,
    {
      creates: c.calls.create ?? 0,
      prepares: c.calls.prepare ?? 0,
      objects: c.objects,
      rowsWritten: c.rowsWritten,
      setAlarms: c.setAlarms,
    },
  ];
}

/**
 * Paced creates after a paced warm-up: the p50s of the measured ones' creates and round trips, and the gets a trip
 * sent; `measuring` runs between the two.
 */
async function pacedCreates(
  client: McpHttpClient,
  n: number,
  measuring?: () => Promise<unknown>,
): Promise<{ create: number; roundTrip: number; getsPerTrip: number }> {
  for (let i = 0; i < PACED_WARMUP; i++) {
    await createAndPoll(client);
    await pause();
  }
  await measuring?.();
  const creates: number[] = [];
  const trips: number[] = [];
  let gets = 0;
  for (let i = 0; i < n; i++) {
    const [created, total, sent] = await createAndPoll(client);
    creates.push(created);
    trips.push(total);
    gets += sent;
    await pause();
  }
  return { create: summarize(creates).p50, roundTrip: summarize(trips).p50, getsPerTrip: gets / n };
}

/** A warm-runner block: F paced, creates on `/mcp-counted` (counted) and on `/mcp` paced, F paced again. */
async function warmBlock(origin: string, n: number): Promise<TableRound["warm"]> {
  const half = Math.max(1, Math.floor(n / 2));
  const pacedF = () =>
    repeat(half, async () => {
      const [elapsed] = await httpSamples(origin, "/floor/http", 1);
      await pause();
      return elapsed!;
    });
  const f1 = await pacedF();
  const noIndex = await pacedCreates(benchClient(`${origin}/mcp-counted`), n, () => counts(origin, true));
  const c = await counts(origin, true);
  const indexed = await pacedCreates(benchClient(`${origin}/mcp`), n);
  const f2 = await pacedF();
  const creates = c.calls.create ?? 0;
  return {
    gapMs: PACED_GAP_MS,
    httpFloor: summarize([...f1, ...f2]).p50,
    create: indexed.create,
    roundTrip: indexed.roundTrip,
    getsPerTrip: indexed.getsPerTrip,
    createNoIndex: noIndex.create,
    served: creates > 0 ? c.preparedCreates / creates : 0,
    creates,
    planned: n,
  };
}

export async function measureTableRound(server: BenchServer, round: number, sizes: TableSizes): Promise<TableRound> {
  const { origin } = server;
  const n = sizes.perBlock;
  const load = loadavg();
  const mcp = benchClient(`${origin}/mcp`);
  const quiet = benchClient(`${origin}/mcp-quiet`);

  const f1 = await httpSamples(origin, "/floor/http", n);
  const created = await createBlock(mcp, n);
  const inlineCounted = { asTask: 0 };
  const inline = summarize(await repeat(n, () => inlineCall(mcp, inlineCounted))).p50;
  const newObject = summarize(await httpSamples(origin, "/floor/http-write", n)).p50;
  const postWrite = postFloorClient(origin, "/floor/http-post-write", "tools/call");
  const createParams = { name: "bench_steps", arguments: oneStep, _meta: mcp.envelope() };
  const postWriteFloor = summarize(await repeat(n, () => postWrite(createParams))).p50;

  // A completed task with a 100-character result; its get and the POST floor send the same request.
  const done = (await mcp.startTask("bench_steps", { steps: 1, payloadBytes: 100 })).taskId;
  resultOf((await mcp.listenTasks([done])).get(done)!.task);
  const post = postFloorClient(origin);
  const params = { taskId: done, _meta: mcp.envelope() };
  const postSamples: number[] = [];
  const getSamples: number[] = [];
  for (let half = 0; half < 2; half++) {
    postSamples.push(...(await repeat(n / 2, () => post(params))));
    getSamples.push(...(await repeat(n / 2, async () => (await timed(() => mcp.getTask(done)))[0])));
  }
  const f2 = await httpSamples(origin, "/floor/http", n);

  const order: Array<"pool" | "nopool"> = round % 2 === 0 ? ["pool", "nopool"] : ["nopool", "pool"];
  const pool: Partial<Record<"pool" | "nopool", [number, PoolCounts]>> = {};
  for (const which of order) {
    pool[which] = await countedBlock(origin, which === "pool" ? "/mcp-counted" : "/mcp-counted-nopool", n);
  }

  const warm = await warmBlock(origin, n / 2);

  const synced = await insertCost(origin, "/floor/insert-synced", 100, 0, 3);
  const parallel = await measureParallelJournalClock(quiet, 20, 50, sizes.parallelRuns);

  const perStep = await measurePerStep(quiet, [
    [2000, sizes.pairs2000],
    [10_000, sizes.pairs10000],
  ]);
  // Three runs: a 10,000-step run is over in tens of milliseconds here, so one run may see only a get or two.
  const wait = await measureGetDuringRun(quiet, 10_000, 3);
  const waits = wait.allMs.flat();

  const result: TableRound = {
    round,
    loadavg: load,
    httpFloor: summarize([...f1, ...f2]).p50,
    postFloor: summarize(postSamples).p50,
    newObjectFloor: newObject,
    postWriteFloor,
    create: created.create,
    roundTripPolling: created.roundTrip,
    getsPerTrip: created.getsPerTrip,
    inline: { p50: inline, asTask: inlineCounted.asTask },
    get: summarize(getSamples).p50,
    pool: {
      first: order[0]!,
      create: pool.pool![0],
      createNoPool: pool.nopool![0],
      pool: pool.pool![1],
      noPool: pool.nopool![1],
    },
    warm,
    perStep2000Ms: perStep.find((row) => row.steps === 2000)!.perStepMs,
    perStep10000Ms: perStep.find((row) => row.steps === 10_000)!.perStepMs,
    getWait: {
      gets: waits.length,
      worstMs: Math.max(...waits),
      firstMs: Math.max(...wait.allMs.map((run) => run[0]!)),
      lastMs: Math.max(...wait.allMs.map((run) => run.at(-1)!)),
      p50Ms: median(waits),
    },
    syncedCommitMs: synced.insideMs,
    parallel: { runs: parallel.runs, stepsPerSecond: parallel.stepsPerSecond },
  };
  log(
    `round ${round + 1} (load ${load.map((l) => l.toFixed(2)).join(" ")}): F ${ms(result.httpFloor)}, create ` +
      `${ms(result.create)}, round trip ${ms(result.roundTripPolling)} (${result.getsPerTrip.toFixed(2)} gets; inline ${ms(inline)}), get ${ms(result.get)} / POST floor ` +
      `${ms(result.postFloor)}, new object ${ms(result.newObjectFloor)}, POST + commit ${ms(result.postWriteFloor)}; pool ${ms(result.pool.create)} / none ` +
      `${ms(result.pool.createNoPool)}; warm runner ${ms(warm.create)}, trip ${ms(warm.roundTrip)} (no index ${ms(warm.createNoIndex)}, ` +
      `${(warm.served * 100).toFixed(0)} % served) / paced F ${ms(warm.httpFloor)}; per step ${ms(result.perStep2000Ms)} / ${ms(result.perStep10000Ms)}; ` +
      `worst get ${ms(result.getWait.worstMs)} of ${result.getWait.gets}; 20×50 ` +
      `${result.parallel.stepsPerSecond.toFixed(0)} steps/s, synced commit ${ms(result.syncedCommitMs)}`,
  );
  return result;
}

export async function measureTable(server: BenchServer, sizes: TableSizes): Promise<TableRound[]> {
  // Warm-up: the first requests, objects and tasks of a fresh server (not kept).
  const mcp = benchClient(`${server.origin}/mcp`);
  await httpSamples(server.origin, "/floor/http", 50);
  await httpSamples(server.origin, "/floor/http-write", 20);
  for (let i = 0; i < 20; i++) await createAndPoll(mcp);
  const rounds: TableRound[] = [];
  for (let round = 0; round < sizes.rounds; round++) rounds.push(await measureTableRound(server, round, sizes));
  return rounds;
}
