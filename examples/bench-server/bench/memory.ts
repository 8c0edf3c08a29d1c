// The memory target of issue 15: successive rounds of 1,000 finished tasks, each followed by the eviction of every
// task object, and workerd's resident memory after each; the growth from one round to the next must stay within
// 20 MB. workerd evicts an idle object on its own (about 10 s after its last request here, docs/reliability.md);
// wrangler dev has no way to evict one from outside, so the bench waits until workerd holds no task database open
// (test-harness `residentObjects`, as the reliability lab's load suite counts them). Then, so that a reading is of
// what the runtime holds and not of garbage V8 has not collected yet: RSS read once as evicted, a forced full
// garbage collection of the isolate over wrangler's inspector port (`HeapProfiler.collectGarbage`), the V8 heap read
// beside it, a settle, and RSS read again. RSS is read per workerd process: wrangler dev runs two, the runtime (the
// Worker and its objects; what the target is about) and wrangler's proxy (which receives every console.log line of
// the Worker through the inspector), see `workerdRssByRole`.
// The first round is a warm-up and not compared (JIT, SQLite's and the allocator's first use, the first inspector
// connection are one-time costs, not growth): the issue's "first round to the second" are measured rounds 1 and 2,
// the run's rounds 2 and 3.
//   BENCH_MEMORY=0   skip it (it adds about four minutes: three paced rounds of about 50 s, each with its eviction)
import {
  DevToolsSession,
  heapSummary,
  residentObjects,
  sleep,
  workerdRssByRole,
  type HeapKind,
} from "@durable-mcp/test-harness";
import { log, now, times } from "./common.ts";
import { benchClient, resultOf } from "./mcp.ts";
import type { BenchServer } from "./server.ts";

/** The TaskRunner class behind /mcp in wrangler.jsonc: its objects' databases are what is counted. */
const RUNNER_CLASS = "TaskRunner";
/** Every task class of the bench server: the earlier parts of the run leave objects of each to be evicted first. */
const ALL_RUNNER_CLASSES = [RUNNER_CLASS, "QuietTaskRunner", "StepEventsTaskRunner"];
const EVICTION_TIMEOUT_MS = 180_000;
const IN_FLIGHT = 50;
/**
 * Tasks started per second in a round. workerd evicts an object about 10 s after its last request, so the objects
 * resident at a round's peak are about its start rate × 10 s, and workerd's allocator keeps the pages of that peak
 * after the evictions: unpaced, a round that ran faster than every round before it (a moment of less load on a
 * shared machine) lifted RSS by 80–145 MB while a slower one added 3–5 MB. A fixed rate gives every round the same
 * peak, so what is compared is what the rounds leave behind.
 */
export const DEFAULT_TASKS_PER_SECOND = 20;
/** After the evictions, for workerd to finish closing what they released. */
const EVICTED_SETTLE_MS = 2000;
/** After the forced garbage collection, for the freed pages to reach the allocator and the OS. */
const GC_SETTLE_MS = 5000;

export interface MemoryReading {
  /** VmRSS of the runtime workerd (the Worker and its Durable Objects). */
  runtimeKiB: number;
  /** VmRSS of wrangler's proxy workerd (routing and the inspector relay, console lines included). */
  proxyKiB: number;
  /** Open file descriptors of each (sockets among them). */
  runtimeFds: number;
  proxyFds: number;
  /** The isolate's V8 heap after the forced collection, bytes (null when not read). */
  heapUsedBytes: number | null;
  heapTotalBytes: number | null;
}

export interface MemoryRound {
  /** 0: the warm-up round (not compared); 1, 2, …: the measured rounds. */
  round: number;
  tasks: number;
  /** Client wall time to bring every task of the round to completed. */
  runMs: number;
  /** Both workerd processes, summed, during the round. */
  rssPeakKiB: number;
  /** The runtime workerd alone during the round (its allocator keeps what it took at the peak). */
  runtimePeakKiB: number;
  /** Seconds from the round's last completion until no task object was resident. */
  evictedAfterS: number;
  /** Task objects still resident when the wait gave up (0 when all were evicted). */
  residentLeft: number;
  /** RSS once every object was evicted, before the forced collection. */
  evicted: MemoryReading;
  /** After the forced collection and its settle: the figure the target compares. */
  settled: MemoryReading;
  /** The isolate's heap by kind after the round (`snapshots` only; not kept in the history). */
  heapKinds?: HeapKind[];
}

export interface MemoryFigures {
  /** The start rate of every round (0: unpaced). */
  tasksPerSecond: number;
  before: MemoryReading;
  /** Every round, the warm-up first (round 0) when there was one. */
  rounds: MemoryRound[];
  /** Runtime RSS (settled) after measured round 2 − after measured round 1, bytes: the target's figure. */
  growthBytes: number;
  /** The same for the proxy workerd, and for the two summed (the figure the bench reported before). */
  proxyGrowthBytes: number;
  sumGrowthBytes: number;
}

/** Which endpoint the rounds run on, and the TaskRunner class behind it (whose open databases are counted). */
export interface MemoryEndpoint {
  path: string;
  runnerClass: string;
  /**
   * Controls without the library: "floor", each "task" is one `GET /floor/http-write` (a new Floor object and its
   * first row); "log", one `GET /floor/log?n=4` (four console.log lines, about what a task writes at the default
   * event level, and no object).
   */
  kind?: "tasks" | "floor" | "log";
}

/** /mcp: the library as shipped (task event lines at the default level, the task index). */
export const DEFAULT_ENDPOINT: MemoryEndpoint = { path: "/mcp", runnerClass: RUNNER_CLASS };

export interface MemoryOptions {
  endpoint?: MemoryEndpoint;
  /** Measured rounds, at least 2 (default 2). */
  rounds?: number;
  /** A warm-up round first, not compared (default true). */
  warmUp?: boolean;
  /**
   * Keep one DevTools connection open through all rounds (default false: one per reading). A diagnosis: wrangler's
   * InspectorProxyWorker keeps every message of the runtime's inspector (each console.log line among them) in a
   * buffer until a DevTools client is connected, and then hands them to it.
   */
  holdDevTools?: boolean;
  /**
   * After each round's readings, a heap snapshot of the isolate, summarised by kind (`heapSummary`): to find what
   * a round leaves in the heap. A diagnosis (default false): the snapshot itself costs the runtime memory.
   */
  snapshots?: boolean;
  /** Tasks started per second (`DEFAULT_TASKS_PER_SECOND`); 0: as fast as the server takes them. */
  tasksPerSecond?: number;
}

export async function measureMemory(server: BenchServer, options: MemoryOptions = {}): Promise<MemoryFigures> {
  const {
    endpoint = DEFAULT_ENDPOINT,
    rounds = 2,
    warmUp = true,
    holdDevTools = false,
    snapshots = false,
    tasksPerSecond = DEFAULT_TASKS_PER_SECOND,
  } = options;
  if (rounds < 2) throw new Error("memory: at least two measured rounds");
  const pgid = server.pgid;
  if (pgid === null) throw new Error("memory: the bench server is not running");
  const client = benchClient(`${server.origin}${endpoint.path}`);
  const byRole = () => workerdRssByRole(pgid, server.stateDir);
  let runtimePeakKiB = 0;
  const rssSum = () => {
    const { runtimeKiB, proxyKiB } = byRole();
    runtimePeakKiB = Math.max(runtimePeakKiB, runtimeKiB);
    return runtimeKiB + proxyKiB;
  };
  const resident = () => residentObjects(pgid, endpoint.runnerClass);
  const tasks = times(1000);
  const nudge = () => fetch(`${server.origin}/floor/noop`).then((response) => response.text());
  const held = holdDevTools ? await DevToolsSession.open(server.spec.inspectorPort) : null;

  const reading = async (): Promise<{ evicted: MemoryReading; settled: MemoryReading }> => {
    await sleep(EVICTED_SETTLE_MS);
    const evicted = { ...byRole(), heapUsedBytes: null, heapTotalBytes: null };
    // V8 collects in a task of the isolate, which workerd runs when a request next enters it: the nudge is one.
    const session = held ?? (await DevToolsSession.open(server.spec.inspectorPort));
    const heap = await session.collectGarbage(nudge).finally(() => {
      if (session !== held) session.close();
    });
    await sleep(GC_SETTLE_MS);
    const settled = { ...byRole(), heapUsedBytes: heap.usedSize, heapTotalBytes: heap.totalSize };
    return { evicted, settled };
  };

  const round = async (index: number): Promise<MemoryRound> => {
    runtimePeakKiB = 0;
    let rssPeakKiB = rssSum();
    const begin = now();
    for (let started = 0; started < tasks; started += IN_FLIGHT) {
      const batch = Math.min(IN_FLIGHT, tasks - started);
      // Paced: this batch starts no earlier than its place in the round at the set rate.
      const due = tasksPerSecond > 0 ? begin + (started / tasksPerSecond) * 1000 : 0;
      if (now() < due) await sleep(due - now());
      if (endpoint.kind === "floor" || endpoint.kind === "log") {
        await Promise.all(
          Array.from({ length: batch }, async () => {
            const response = await fetch(`${server.origin}${endpoint.path}`);
            const text = await response.text();
            if (!response.ok || (endpoint.kind === "floor" && text !== "ok")) {
              throw new Error(`${endpoint.path} answered ${response.status} ${text}`);
            }
          }),
        );
      } else {
        const ids = await Promise.all(
          Array.from({ length: batch }, () =>
            client.startTask("bench_steps", { steps: 5, payloadBytes: 100 }).then((t) => t.taskId),
          ),
        );
        const finals = await client.listenTasks(ids);
        for (const { task } of finals.values()) resultOf(task);
      }
      rssPeakKiB = Math.max(rssPeakKiB, rssSum());
    }
    const runMs = now() - begin;
    const idleSince = now();
    while (resident() > 0 && now() - idleSince < EVICTION_TIMEOUT_MS) {
      rssPeakKiB = Math.max(rssPeakKiB, rssSum());
      await sleep(1000);
    }
    const evictedAfterS = (now() - idleSince) / 1000;
    const residentLeft = resident();
    const { evicted, settled } = await reading();
    const result: MemoryRound = {
      round: index,
      tasks,
      runMs,
      rssPeakKiB,
      runtimePeakKiB,
      evictedAfterS,
      residentLeft,
      evicted,
      settled,
    };
    if (snapshots) {
      const session = held ?? (await DevToolsSession.open(server.spec.inspectorPort));
      try {
        result.heapKinds = heapSummary(await session.takeHeapSnapshot(nudge));
      } finally {
        if (session !== held) session.close();
      }
    }
    log(
      `memory: ${index === 0 ? "warm-up round" : `round ${index}`}: ${tasks} tasks in ${(runMs / 1000).toFixed(1)} s, ` +
        `all evicted after ${evictedAfterS.toFixed(0)} s (${residentLeft} left); peak ${mib(rssPeakKiB)} (both), ` +
        `${mib(runtimePeakKiB)} (runtime); ` +
        `runtime ${mib(evicted.runtimeKiB)} → ${mib(settled.runtimeKiB)} after GC, proxy ${mib(settled.proxyKiB)} ` +
        `(${settled.proxyFds} fds), ` +
        `V8 heap ${heapMiB(settled)}`,
    );
    return result;
  };

  // Start from a runtime with no task object resident, so that the first round's evictions are its own.
  const residentAll = () => ALL_RUNNER_CLASSES.reduce((sum, name) => sum + residentObjects(pgid, name), 0);
  const quietSince = now();
  while (residentAll() > 0 && now() - quietSince < EVICTION_TIMEOUT_MS) await sleep(1000);
  const before = (await reading()).settled;
  log(
    `memory: before: runtime ${mib(before.runtimeKiB)}, proxy ${mib(before.proxyKiB)}, V8 heap ${heapMiB(before)}; ` +
      `${warmUp ? "a warm-up round and " : ""}${rounds} rounds of ${tasks} finished tasks on ${endpoint.path}, ` +
      `${tasksPerSecond > 0 ? `${tasksPerSecond} started per second` : "unpaced"}` +
      (holdDevTools ? ", one DevTools connection held throughout" : ""),
  );
  const done: MemoryRound[] = [];
  const first = warmUp ? 0 : 1;
  try {
    for (let i = first; i <= rounds; i++) done.push(await round(i));
  } finally {
    held?.close();
  }
  // The target compares measured round 1 with measured round 2 (issue 15); later rounds show whether RSS levels off.
  const one = done.find((r) => r.round === 1)!.settled;
  const two = done.find((r) => r.round === 2)!.settled;
  return {
    tasksPerSecond,
    before,
    rounds: done,
    growthBytes: (two.runtimeKiB - one.runtimeKiB) * 1024,
    proxyGrowthBytes: (two.proxyKiB - one.proxyKiB) * 1024,
    sumGrowthBytes: (two.runtimeKiB + two.proxyKiB - one.runtimeKiB - one.proxyKiB) * 1024,
  };
}

export const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
const heapMiB = (r: MemoryReading) =>
  r.heapUsedBytes === null
    ? "not read"
    : `${(r.heapUsedBytes / 2 ** 20).toFixed(1)}/${((r.heapTotalBytes ?? 0) / 2 ** 20).toFixed(1)} MiB (used/total)`;
