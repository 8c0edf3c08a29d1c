// `pnpm bench:files`: the files rows of `pnpm bench` alone (bench/files.ts: 3 rounds of raw R2 put, tus upload,
// raw R2 get and download of the same bytes, both floors interleaved with what they are the floor of), on a fresh
// `wrangler dev`, at BENCH_FILE_MIB (default 128 here: ~1–2 min) — so builds can be interleaved before/after.
// Beside the wall-clock MB/s, each transfer's CPU time in the server's workerd processes (/proc/<pid>/stat, utime +
// stime): on this shared 2-core machine the figure that moves least with the neighbours' load. Appends each run to
// results/bench-files-history.jsonl and prints the previous run's figures next to the new ones.
//   BENCH_PORT (default 8795), BENCH_FILE_MIB (default 128), BENCH_LABEL (names the build measured)
import { loadavg } from "node:os";
import { groupMembers } from "@durable-mcp/test-harness";
import { fileRowsTable, measureFiles, type FileRound } from "./files.ts";
import { History, libraryUncommittedChanges, runHeader, type RunHeader } from "./history.ts";
import { cpuSeconds, port } from "./common.ts";
import { withServer } from "./server.ts";
import { median } from "./stats.ts";

process.env.BENCH_FILE_MIB ??= "128";

interface Entry extends RunHeader {
  uncommitted: boolean;
  mib: number;
  uploadRatio: number;
  downloadRatio: number;
  uploadMBps: number;
  rawPutMBps: number;
  downloadMBps: number;
  rawGetMBps: number;
  /** Median server CPU ns per byte of each transfer. */
  cpuNsPerByte: { rawPut: number; upload: number; rawGet: number; download: number };
  hashNsPerByte: { resumable: number; native: number };
  rounds: FileRound[];
}

const loadBefore = loadavg();
const measurement = await withServer(port, async (server) => {
  // wrangler dev runs two workerd processes (a proxy and the Worker's runtime): count both.
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  return measureFiles(server.origin, (message) => console.error(message), cpu);
});

const bytes = measurement.sizeBytes;
const cpuPerByte = (pick: (cpu: NonNullable<FileRound["cpu"]>) => number) =>
  Math.round((median(measurement.rounds.map((round) => pick(round.cpu!))) * 1e9 * 100) / bytes) / 100;
const round2 = (value: number) => Math.round(value * 100) / 100;
const nsPerByte = (msPerMiB: number) => round2((msPerMiB * 1e6) / (1024 * 1024));
const entry: Entry = {
  ...runHeader(loadBefore, false),
  uncommitted: libraryUncommittedChanges(),
  mib: bytes / (1024 * 1024),
  uploadRatio: round2(measurement.uploadRatio),
  downloadRatio: round2(measurement.downloadRatio),
  uploadMBps: round2(measurement.uploadMBps),
  rawPutMBps: round2(measurement.rawPutMBps),
  downloadMBps: round2(measurement.downloadMBps),
  rawGetMBps: round2(measurement.rawGetMBps),
  cpuNsPerByte: {
    rawPut: cpuPerByte((cpu) => cpu.rawPut),
    upload: cpuPerByte((cpu) => cpu.upload),
    rawGet: cpuPerByte((cpu) => cpu.rawGet),
    download: cpuPerByte((cpu) => cpu.download),
  },
  hashNsPerByte: {
    resumable: nsPerByte(measurement.hashMsPerMiB.resumable),
    native: nsPerByte(measurement.hashMsPerMiB.native),
  },
  rounds: measurement.rounds,
};
const history = new History<Entry>("bench-files-history.jsonl");
const previous = history.previous();
history.append(entry);

const loads = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
console.log(
  `\nFiles (bench:files) ${entry.label ?? ""} ${entry.date} ${entry.commit ?? "?"}${entry.uncommitted ? "+" : ""}`,
);
console.log(`load ${loads(entry.loadBefore)} → ${loads(entry.loadAfter)}; ${entry.mib} MiB per transfer`);
console.log(fileRowsTable(measurement));
const summary = (e: Entry) =>
  `upload ${e.uploadRatio}× (${e.uploadMBps} vs ${e.rawPutMBps} MB/s), download ${e.downloadRatio}× ` +
  `(${e.downloadMBps} vs ${e.rawGetMBps} MB/s); server CPU ns/B: put ${e.cpuNsPerByte.rawPut}, upload ` +
  `${e.cpuNsPerByte.upload}, get ${e.cpuNsPerByte.rawGet}, download ${e.cpuNsPerByte.download}`;
console.log(`this run:     ${summary(entry)}`);
console.log(
  previous
    ? `previous run: ${summary(previous)} (${previous.date} ${previous.commit ?? "?"} ${previous.label ?? ""})`
    : "previous run: no previous run",
);
console.log(`appended to ${history.file}`);
