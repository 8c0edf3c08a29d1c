// `pnpm bench`: starts examples/bench-server under `wrangler dev` (local workerd, a fresh --persist-to dir, port
// BENCH_PORT or 8795) and measures durable-mcp-server over the wire, beside the platform floor measured in the
// same runtime. Prints tables, ends with the targets table of issue 15 next to the previous run's figures, writes
// results/bench.json and appends the run to results/bench-history.jsonl. It reports figures; it gates nothing.
//   BENCH_QUICK=1                 a fifth of the iterations, to try the driver out
//   BENCH_LOCAL_OBSERVABILITY=1   keep wrangler dev's local tracing on (see docs/performance.md)
//   BENCH_MEMORY=0                skip the memory rounds (a warm-up and 2 × 1,000 paced tasks and their eviction, ~4 min)
//   BENCH_FILES=0                 skip the files rows (3 rounds of a 256 MiB upload/download and their raw floors)
//   BENCH_FILE_MIB=…              the files rows' size in MiB (256)
//   BENCH_LABEL=…                 names this run in the history (e.g. "before" / "after" when interleaving builds)
// The parts: floor.ts (the platform), wire.ts (the library over the wire), steps.ts (the step engine's rows), files.ts
// (uploads and downloads), memory.ts (workerd's RSS over rounds of tasks), tables.ts and targets.ts (what is
// printed), history.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { log, now, port, scale } from "./common.ts";
import { measureFloor } from "./floor.ts";
import {
  describePrevious,
  History,
  libraryUncommittedChanges,
  resultsDir,
  runHeader,
  type RunHeader,
} from "./history.ts";
import { benchClient } from "./mcp.ts";
import { measureMemory, mib } from "./memory.ts";
import { withServer, workspaceRoot } from "./server.ts";
import { fileRowsTable, measureFiles } from "./files.ts";
import { measureStepRows, stepRowsTable } from "./steps.ts";
import { machine, runSource, writeSummary } from "./summary.ts";
import { report } from "./tables.ts";
import { DOWNLOAD_METRIC, targetRows, targetsTable, UPLOAD_METRIC, type TargetRow } from "./targets.ts";
import { measureDefaults, measureRuntime, measureStepEvents } from "./wire.ts";

function version(pkg: string): string | null {
  try {
    const path = join(workspaceRoot, "node_modules", pkg, "package.json");
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

const began = now();
const source = runSource("bench");
const loadBefore = loadavg();
const header = runHeader(loadBefore, scale < 1);
const env = {
  ...header,
  node: process.version,
  wrangler: version("wrangler"),
  localObservability: process.env.BENCH_LOCAL_OBSERVABILITY === "1",
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? null,
  libraryUncommittedChanges: libraryUncommittedChanges(),
};
const payloads = [0, 1024, 10_240, 102_400];
const withMemory = process.env.BENCH_MEMORY !== "0";
log(
  `bench-server on 127.0.0.1:${port}; ${env.cpus} CPUs, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")}` +
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
  // Files (bench/files.ts): upload vs a raw R2 put and download vs a raw R2 get, their floors measured here.
  const files = process.env.BENCH_FILES === "0" ? null : await measureFiles(server.origin, log);
  const [upload, download] = files?.rows ?? [];
  const fileRows: TargetRow[] =
    upload && download
      ? [
          { ...upload, metric: UPLOAD_METRIC },
          { ...download, metric: DOWNLOAD_METRIC },
        ]
      : [];
  // Last: it waits for workerd to evict every task object, twice.
  const memory = withMemory ? await measureMemory(server) : null;
  return { floor, wire, defaults, stepEvents, engine, files, fileRows, memory };
});

const { floor, wire, defaults, stepEvents, engine, memory } = measured;
report(floor, wire, defaults, stepEvents);
console.log(
  "\nStep engine on /mcp-quiet (issue 15: ≤ 10 µs per step at 2,000 steps, flat to 10,000; reads between steps)\n",
);
console.log(stepRowsTable(engine));
if (measured.files) {
  console.log("\nFiles (issue 15; medians of 3 interleaved rounds, both floors measured in this run)\n");
  console.log(fileRowsTable(measured.files));
}

const perStepAt = (steps: number) => engine.perStep.find((row) => row.steps === steps)?.perStepMs ?? null;
const targets = targetRows({
  // The create rows' floors are measured in the same interleaved rounds as the figures they judge (bench/wire.ts).
  httpFloorMs: defaults.createRounds.median.httpFloor,
  newObjectFloorMs: defaults.createRounds.median.newObjectFloor,
  createRounds: defaults.createRounds.rounds,
  createMs: defaults.create.p50,
  roundTripPollingMs: defaults.oneStepRoundTripPolling.p50,
  inlineMs: defaults.oneStepInline.roundTrip.p50,
  getMs: defaults.getVsFloor.get.p50,
  getHttpFloorMs: defaults.getVsFloor.httpFloor.p50,
  getPostFloorMs: defaults.getVsFloor.postFloor.p50,
  getRounds: defaults.getVsFloor.rounds,
  perStepMs: { at2000: perStepAt(2000), at10000: perStepAt(10_000) },
  worstGetWaitMs: engine.getDuringRun.worstMs,
  serverClockStepsPerSecond: engine.parallel?.stepsPerSecond ?? null,
  memoryGrowthBytes: memory?.growthBytes ?? null,
  memoryTasks: memory?.rounds[0]!.tasks ?? 1000,
  memoryNote: memory
    ? `runtime after round 2: ${mib(memory.rounds.find((r) => r.round === 1)!.settled.runtimeKiB)}; ` +
      `wrangler's proxy grew ${(memory.proxyGrowthBytes / 1e6).toFixed(1)} MB` +
      (memory.rounds.some((r) => r.residentLeft > 0) ? " (NOT all evicted)" : "")
    : "skipped (BENCH_MEMORY=0)",
  extra: measured.fileRows,
});

type Entry = RunHeader & { targets: TargetRow[]; httpFloorMs: number; newObjectFloorMs: number };
const history = new History<Entry>("bench-history.jsonl");
const previous = history.previous();
const seconds = (now() - began) / 1000;
const entry: Entry = {
  ...runHeader(loadBefore, scale < 1),
  targets,
  httpFloorMs: floor.http.p50,
  newObjectFloorMs: floor.httpNewObjectFirstRow.p50,
};
history.append(entry);

console.log(
  `\nTargets of issue 15, this run (${entry.commit ?? "?"}, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")}` +
    ` → ${entry.loadAfter.map((l) => l.toFixed(2)).join(" ")}${entry.quick ? ", BENCH_QUICK" : ""}); ${describePrevious(previous)}\n`,
);
console.log(targetsTable(targets, previous?.targets ?? null));

const file = join(resultsDir, "bench.json");
const environment = { ...env, loadAfter: entry.loadAfter, seconds };
writeFileSync(file, `${JSON.stringify({ environment, ...measured, targets }, null, 2)}\n`);
// The dated summary the docs cite (results/ is not in git): the targets table, and every figure in its .json.
const cells = [
  ["target", "measured", "floor", "target", "ratio", "met"],
  ...targets.map((row) => [row.metric, row.measured, row.floor, row.target, row.ratio, yesNo(row.met)]),
];
const summary = writeSummary({
  section: "full",
  quick: entry.quick,
  source,
  machine: machine(),
  loadBefore,
  loadAfter: entry.loadAfter,
  markdown: [
    "## Targets, this run",
    "",
    [cells[0]!, cells[0]!.map(() => "---"), ...cells.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n"),
  ].join("\n"),
  data: { environment, ...measured, targets },
});
console.log(
  `\n[bench] wrote ${file}, appended to ${history.file}, summary ${summary.markdown} (${seconds.toFixed(0)} s in all)`,
);

function yesNo(met: boolean | null): string {
  return met === null ? "not measured" : met ? "yes" : "**no**";
}
