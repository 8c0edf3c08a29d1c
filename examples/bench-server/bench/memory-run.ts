// `pnpm bench:memory`: the memory rounds of the bench (bench/memory.ts) alone on a fresh server, to look into
// what grows: BENCH_MEMORY_PATH picks the endpoint (/mcp, the default; /mcp-quiet: no task event lines, no index;
// /floor/http-write: a control, new Floor objects with one row each and nothing of the library; /floor/log: four
// console.log lines per "task" and no object),
// BENCH_MEMORY_ROUNDS how many rounds (default 3). Appends to results/bench-memory-history.jsonl.
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the tasks), BENCH_LABEL (names the build in the history)
import { loadavg } from "node:os";
import { port, scale } from "./common.ts";
import { describePrevious, History, runHeader, type RunHeader } from "./history.ts";
import { DEFAULT_ENDPOINT, measureMemory, mib, type MemoryEndpoint, type MemoryFigures } from "./memory.ts";
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
const rounds = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);

const loadBefore = loadavg();
const memory = await withServer(port, (server) => measureMemory(server, endpoint, rounds));
type Entry = RunHeader & { path: string; memory: MemoryFigures };
const history = new History<Entry>("bench-memory-history.jsonl");
const previous = history.previous();
const entry: Entry = { ...runHeader(loadBefore, scale < 1), path: endpoint.path, memory };
history.append(entry);
const mb = (kib: number) => `${((kib * 1024) / 1e6).toFixed(1)} MB`;
console.log(`\nMemory rounds on ${endpoint.path} (bench:memory); ${describePrevious(previous)}\n`);
console.log(
  table([
    ["round", "tasks", "RSS peak", "RSS after eviction", "growth over the round before", "evicted after"],
    ["before", "", "", mib(memory.rssBeforeKiB), "", ""],
    ...memory.rounds.map((r, i) => [
      String(i + 1),
      String(r.tasks),
      mib(r.rssPeakKiB),
      mib(r.rssAfterKiB),
      mb(r.rssAfterKiB - (i === 0 ? memory.rssBeforeKiB : memory.rounds[i - 1]!.rssAfterKiB)),
      `${r.evictedAfterS.toFixed(0)} s${r.residentLeft > 0 ? ` (${r.residentLeft} left)` : ""}`,
    ]),
  ]),
);
if (previous)
  console.log(
    `\nprevious run (${previous.path}): ${previous.memory.rounds.map((r) => mib(r.rssAfterKiB)).join(" → ")}`,
  );
console.log(`\n[bench:memory] appended to ${history.file}`);
