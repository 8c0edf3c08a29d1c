// The memory target of issue 15: two successive rounds of 1,000 finished tasks, each followed by the eviction of
// every task object, and workerd's resident memory (VmRSS of the workerd processes of the bench server's group)
// after each; the growth from the first round to the second must stay within 20 MB. workerd evicts an idle object
// on its own (about 10 s after its last request here, docs/reliability.md); wrangler dev has no way to evict one
// from outside, so the bench waits until workerd holds no task database open (test-harness `residentObjects`, as
// the reliability lab's load suite counts them) and then reads the RSS.
//   BENCH_MEMORY=0   skip it (it adds about a minute)
import { residentObjects, sleep, workerdRssKiB } from "@durable-mcp/test-harness";
import { log, now, times } from "./common.ts";
import { benchClient, resultOf } from "./mcp.ts";
import type { BenchServer } from "./server.ts";

/** The TaskRunner class behind /mcp in wrangler.jsonc: its objects' databases are what is counted. */
const RUNNER_CLASS = "TaskRunner";
/** Every task class of the bench server: the earlier parts of the run leave objects of each to be evicted first. */
const ALL_RUNNER_CLASSES = [RUNNER_CLASS, "QuietTaskRunner", "StepEventsTaskRunner"];
const EVICTION_TIMEOUT_MS = 180_000;
const IN_FLIGHT = 50;

export interface MemoryRound {
  tasks: number;
  /** Client wall time to bring every task of the round to completed. */
  runMs: number;
  rssPeakKiB: number;
  /** Seconds from the round's last completion until no task object was resident. */
  evictedAfterS: number;
  /** Task objects still resident when the wait gave up (0 when all were evicted). */
  residentLeft: number;
  rssAfterKiB: number;
}

export interface MemoryFigures {
  rssBeforeKiB: number;
  rounds: MemoryRound[];
  /** RSS after round 2 − RSS after round 1, in bytes. */
  growthBytes: number;
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

export async function measureMemory(
  server: BenchServer,
  endpoint: MemoryEndpoint = DEFAULT_ENDPOINT,
  rounds = 2,
): Promise<MemoryFigures> {
  const pgid = server.pgid;
  if (pgid === null) throw new Error("memory: the bench server is not running");
  const client = benchClient(`${server.origin}${endpoint.path}`);
  const rss = () => workerdRssKiB(pgid);
  const resident = () => residentObjects(pgid, endpoint.runnerClass);
  const tasks = times(1000);

  const round = async (): Promise<MemoryRound> => {
    let rssPeakKiB = rss();
    const begin = now();
    for (let started = 0; started < tasks; started += IN_FLIGHT) {
      const batch = Math.min(IN_FLIGHT, tasks - started);
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
      rssPeakKiB = Math.max(rssPeakKiB, rss());
    }
    const runMs = now() - begin;
    const idleSince = now();
    while (resident() > 0 && now() - idleSince < EVICTION_TIMEOUT_MS) {
      rssPeakKiB = Math.max(rssPeakKiB, rss());
      await sleep(1000);
    }
    const evictedAfterS = (now() - idleSince) / 1000;
    // A moment for workerd to finish closing what the evictions released.
    await sleep(2000);
    const result = { tasks, runMs, rssPeakKiB, evictedAfterS, residentLeft: resident(), rssAfterKiB: rss() };
    log(
      `memory: ${tasks} tasks in ${(runMs / 1000).toFixed(1)} s, all evicted after ${evictedAfterS.toFixed(0)} s ` +
        `(${result.residentLeft} left); workerd RSS peak ${mib(rssPeakKiB)}, after ${mib(result.rssAfterKiB)}`,
    );
    return result;
  };

  // Start from a runtime with no task object resident, so that the first round's evictions are its own.
  const residentAll = () => ALL_RUNNER_CLASSES.reduce((sum, name) => sum + residentObjects(pgid, name), 0);
  const quietSince = now();
  while (residentAll() > 0 && now() - quietSince < EVICTION_TIMEOUT_MS) await sleep(1000);
  const rssBeforeKiB = rss();
  log(
    `memory: workerd RSS before ${mib(rssBeforeKiB)}; ${rounds} rounds of ${tasks} finished tasks on ${endpoint.path}`,
  );
  const done: MemoryRound[] = [];
  for (let i = 0; i < rounds; i++) done.push(await round());
  // The target compares the first round with the second (issue 15); later rounds are information.
  return { rssBeforeKiB, rounds: done, growthBytes: (done[1]!.rssAfterKiB - done[0]!.rssAfterKiB) * 1024 };
}

export const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
