// `pnpm bench:memory`: the memory rounds of the bench (bench/memory.ts) alone on a fresh server, to look into
// what grows: BENCH_MEMORY_PATH picks the endpoint (/mcp, the default; /mcp-quiet: no task event lines, no index;
// /floor/http-write: a control, new Floor objects with one row each and nothing of the library; /floor/log: four
// console.log lines per "task" and no object), BENCH_MEMORY_ROUNDS how many measured rounds (default 4, to see
// whether RSS levels off), BENCH_MEMORY_WARMUP=0 drops the warm-up round before them, BENCH_MEMORY_DEVTOOLS=1 holds
// one DevTools connection open throughout (a diagnosis of wrangler's proxy, bench/memory.ts), BENCH_MEMORY_SNAPSHOT=1
// takes a heap snapshot of the isolate after each round and prints what grew from measured round 1 to the last,
// BENCH_MEMORY_RATE tasks started per second (default 20; 0 unpaced, see bench/memory.ts). Appends to
// results/bench-memory-history.jsonl.
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the tasks), BENCH_LABEL (names the build in the history)
import { loadavg } from "node:os";
import { port, scale } from "./common.ts";
import { describePrevious, History, runHeader, type RunHeader } from "./history.ts";
import type { HeapKind } from "@durable-mcp/test-harness";
import {
  DEFAULT_ENDPOINT,
  DEFAULT_TASKS_PER_SECOND,
  measureMemory,
  mib,
  type MemoryEndpoint,
  type MemoryFigures,
} from "./memory.ts";
import { withServer } from "./server.ts";
import { table } from "./stats.ts";

const endpoints: Record<string, MemoryEndpoint> = {
  "/mcp": DEFAULT_ENDPOINT,
  "/mcp-quiet": { path: "/mcp-quiet", runnerClass: "QuietTaskRunner" },
  // The control: the same rounds of new Floor objects that each create a table and commit one row, no library.
  "/floor/http-write": { path: "/floor/http-write", runnerClass: "Floor", kind: "floor" },
  // The other control: four log lines per "task", no object.
  "/floor/log": { path: "/floor/log?n=4", runnerClass: "Floor", kind: "log" },
};
const endpoint = endpoints[process.env.BENCH_MEMORY_PATH ?? "/mcp"];
if (!endpoint) throw new Error(`BENCH_MEMORY_PATH must be one of ${Object.keys(endpoints).join(", ")}`);
const rounds = Number(process.env.BENCH_MEMORY_ROUNDS ?? 4);
const warmUp = process.env.BENCH_MEMORY_WARMUP !== "0";
const holdDevTools = process.env.BENCH_MEMORY_DEVTOOLS === "1";
const snapshots = process.env.BENCH_MEMORY_SNAPSHOT === "1";
const tasksPerSecond = Number(process.env.BENCH_MEMORY_RATE ?? DEFAULT_TASKS_PER_SECOND);

const loadBefore = loadavg();
const memory = await withServer(port, (server) =>
  measureMemory(server, { endpoint, rounds, warmUp, holdDevTools, snapshots, tasksPerSecond }),
);
type Entry = RunHeader & { path: string; holdDevTools: boolean; memory: MemoryFigures };
const history = new History<Entry>("bench-memory-history.jsonl");
const previous = history.previous();
// The heap summaries are printed below, not kept (thousands of kinds per round).
const kept = { ...memory, rounds: memory.rounds.map((round) => ({ ...round, heapKinds: undefined })) };
const entry: Entry = { ...runHeader(loadBefore, scale < 1), path: endpoint.path, holdDevTools, memory: kept };
history.append(entry);
const mb = (kib: number) => `${((kib * 1024) / 1e6).toFixed(1)} MB`;
const heap = (bytes: number | null) => (bytes === null ? "—" : `${(bytes / 2 ** 20).toFixed(1)}`);
console.log(
  `\nMemory rounds on ${endpoint.path} (bench:memory), ${tasksPerSecond > 0 ? `${tasksPerSecond} tasks started per second` : "unpaced"}; ` +
    `${describePrevious(previous)}\n`,
);
console.log(
  "RSS of the runtime workerd (the Worker and its objects) and of wrangler's proxy workerd, after every task object\n" +
    "was evicted and then after a forced GC of the isolate and a settle; growth is over the round before, after GC.\n",
);
const previousSettled = (i: number) => (i === 0 ? memory.before : memory.rounds[i - 1]!.settled);
console.log(
  table([
    [
      "round",
      "tasks",
      "peak (both)",
      "runtime peak",
      "runtime evicted",
      "runtime after GC",
      "growth",
      "proxy after GC",
      "growth",
      "proxy fds",
      "V8 heap used/total MiB",
      "evicted after",
    ],
    [
      "before",
      "",
      "",
      "",
      "",
      mib(memory.before.runtimeKiB),
      "",
      mib(memory.before.proxyKiB),
      "",
      String(memory.before.proxyFds),
      `${heap(memory.before.heapUsedBytes)}/${heap(memory.before.heapTotalBytes)}`,
      "",
    ],
    ...memory.rounds.map((r, i) => [
      r.round === 0 ? "warm-up" : String(r.round),
      String(r.tasks),
      mib(r.rssPeakKiB),
      mib(r.runtimePeakKiB),
      mib(r.evicted.runtimeKiB),
      mib(r.settled.runtimeKiB),
      mb(r.settled.runtimeKiB - previousSettled(i).runtimeKiB),
      mib(r.settled.proxyKiB),
      mb(r.settled.proxyKiB - previousSettled(i).proxyKiB),
      String(r.settled.proxyFds),
      `${heap(r.settled.heapUsedBytes)}/${heap(r.settled.heapTotalBytes)}`,
      `${r.evictedAfterS.toFixed(0)} s${r.residentLeft > 0 ? ` (${r.residentLeft} left)` : ""}`,
    ]),
  ]),
);
console.log(
  `\ntarget (runtime RSS, measured round 1 → 2, after GC): ${mb(memory.growthBytes / 1024)} (≤ 20 MB: ` +
    `${memory.growthBytes <= 20e6 ? "met" : "not met"}); proxy ${mb(memory.proxyGrowthBytes / 1024)}, both ${mb(memory.sumGrowthBytes / 1024)}`,
);
if (previous?.memory.before)
  console.log(
    `previous run (${previous.path}): runtime after GC ${previous.memory.rounds.map((r) => mib(r.settled.runtimeKiB)).join(" → ")}`,
  );
const total = (kinds: HeapKind[]) => kinds.reduce((sum, kind) => sum + kind.selfBytes, 0);
if (snapshots) {
  // What the isolate's heap gained from measured round 1 to the last round, by kind, largest first.
  const first = memory.rounds.find((r) => r.round === 1)!.heapKinds!;
  const last = memory.rounds.at(-1)!;
  const before = new Map(first.map((kind) => [kind.kind, kind]));
  const grown = last
    .heapKinds!.map((kind) => ({
      kind: kind.kind,
      count: kind.count - (before.get(kind.kind)?.count ?? 0),
      bytes: kind.selfBytes - (before.get(kind.kind)?.selfBytes ?? 0),
    }))
    .filter((kind) => kind.bytes > 0 || kind.count > 0)
    .toSorted((a, b) => b.bytes - a.bytes)
    .slice(0, 15);
  console.log(
    `\nHeap snapshot after measured round 1: ${(total(first) / 2 ** 20).toFixed(2)} MiB in ${first.reduce((n, k) => n + k.count, 0)} objects; ` +
      `after round ${last.round}: ${(total(last.heapKinds!) / 2 ** 20).toFixed(2)} MiB in ${last.heapKinds!.reduce((n, k) => n + k.count, 0)}. Grown most:\n`,
  );
  console.log(
    table([["kind", "count", "bytes"], ...grown.map((k) => [k.kind.slice(0, 60), `+${k.count}`, `+${k.bytes}`])]),
  );
}
console.log(`\n[bench:memory] appended to ${history.file}`);
