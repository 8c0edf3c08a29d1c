// `pnpm bench:uploads`: the upload row alone (bench/files-upload.ts) on a fresh `wrangler dev`: tus-js-client
// against a raw put of the same bytes through the same Worker, and against chunked puts and a multipart upload of
// the same chunks (what chunking itself costs), client wall time, interleaved, 3 rounds at 1, 5 and 50 MiB chunks of
// 1 GiB, with the server's CPU per transfer. Prints the table and a Markdown block (commit, command,
// load) for a dated summary under docs/bench-results/, and appends the run to results/bench-uploads-history.jsonl.
//   BENCH_PORT (8795), BENCH_UPLOAD_MIB (1024; 256 with BENCH_QUICK=1), BENCH_UPLOAD_CHUNKS ("1,5,50"),
//   BENCH_UPLOAD_ROUNDS (3; 0 for the heap peaks only), BENCH_UPLOAD_HEAP (1; 0 skips the heap peaks: one more upload
//   per chunk size with the isolate's V8 heap and ArrayBuffers sampled), BENCH_LABEL (names the build measured)
import { loadavg } from "node:os";
import { groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, port } from "./common.ts";
import { fileRowsTable } from "./files.ts";
import {
  deleteUpload,
  measureUploads,
  MIB,
  randomFile,
  tusUpload,
  UPLOAD_FLOOR_NOTE,
  uploadSettings,
  type UploadPair,
} from "./files-upload.ts";
import { heapPeakDuring, ISOLATE_LIMIT_BYTES, mb, type HeapPeak } from "./heap.ts";
import { History, libraryUncommittedChanges, runHeader, type RunHeader } from "./history.ts";
import { withServer } from "./server.ts";

interface UploadHeap extends Omit<HeapPeak<unknown>, "value"> {
  chunkMiB: number;
}

interface Entry extends RunHeader {
  uncommitted: boolean;
  mib: number;
  pairs: UploadPair[];
  heap: UploadHeap[];
}

const settings = uploadSettings();
const loadBefore = loadavg();
const loadDuring: number[] = [];
function log(message: string): void {
  loadDuring.push(loadavg()[0]!);
  console.error(`${message} (load ${loadavg()[0]!.toFixed(2)})`);
}

const measured = await withServer(port, async (server) => {
  // wrangler dev runs two workerd processes (a proxy and the Worker's runtime): count both.
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const measurement = await measureUploads(server.origin, settings, log, cpu);
  // Item 4: the isolate's peak V8 heap while one upload of the same size runs, once per chunk size (BENCH_UPLOAD_HEAP=0
  // skips it). Under wrangler dev the Worker and the FileRunner share the isolate, so the figure is both together.
  const heap: UploadHeap[] = [];
  if (process.env.BENCH_UPLOAD_HEAP !== "0") {
    const file = randomFile(settings.sizeBytes);
    for (const chunkMiB of settings.chunkMiBs) {
      const { value, ...peak } = await heapPeakDuring(server, () =>
        tusUpload(server.origin, file.bytes, file.sha256, Math.round(chunkMiB * MIB)),
      );
      await deleteUpload(value.url);
      heap.push({ chunkMiB, ...peak });
      log(
        `heap, ${chunkMiB} MiB chunks: V8 heap ${mb(peak.baselineUsedBytes)} after GC (ArrayBuffers ${peak.baselineBackingBytes === null ? "?" : mb(peak.baselineBackingBytes)}) → peak ${mb(peak.peakUsedBytes)} ` +
          `used, ${mb(peak.peakTotalBytes)} total, ArrayBuffers ${peak.peakBackingBytes === null ? "not reported" : mb(peak.peakBackingBytes)} (${peak.samples} samples, longest gap ${peak.longestGapMs.toFixed(0)} ms) → ` +
          `${mb(peak.afterUsedBytes)} after GC`,
      );
    }
  }
  return { measurement, heap };
});
const { measurement, heap } = measured;

const entry: Entry = {
  ...runHeader(loadBefore, process.env.BENCH_QUICK === "1"),
  uncommitted: libraryUncommittedChanges(),
  mib: settings.sizeBytes / MIB,
  pairs: measurement.pairs,
  heap,
};
const history = new History<Entry>("bench-uploads-history.jsonl");
history.append(entry);

const loads = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
const command =
  `BENCH_UPLOAD_MIB=${entry.mib} BENCH_UPLOAD_CHUNKS=${settings.chunkMiBs.join(",")} ` +
  `BENCH_UPLOAD_ROUNDS=${settings.rounds} pnpm --filter bench-server bench:uploads`;
console.log(
  `\nUploads (bench:uploads) ${entry.label ?? ""} ${entry.date} ${entry.commit ?? "?"}${entry.uncommitted ? "+" : ""}`,
);
console.log(`command: ${command}`);
console.log(
  `load ${loads(entry.loadBefore)} → ${loads(entry.loadAfter)} (1-min load during: ` +
    `${Math.min(...loadDuring).toFixed(2)}–${Math.max(...loadDuring).toFixed(2)})`,
);
console.log(fileRowsTable(measurement));
console.log(UPLOAD_FLOOR_NOTE);
for (const peak of heap) {
  console.log(
    `peak V8 heap of the isolate during one ${entry.mib} MiB upload in ${peak.chunkMiB} MiB PATCHes: ` +
      `${mb(peak.peakUsedBytes)} used, ${mb(peak.peakTotalBytes)} committed ` +
      `(${Math.round((peak.peakTotalBytes / ISOLATE_LIMIT_BYTES) * 100)} % of 128 MB), ArrayBuffers outside the heap ` +
      `${peak.peakBackingBytes === null ? "not reported" : mb(peak.peakBackingBytes)}; ${mb(peak.baselineUsedBytes)} ` +
      `after GC before, ${mb(peak.afterUsedBytes)} after; ${peak.samples} samples, longest gap ${peak.longestGapMs.toFixed(0)} ms`,
  );
}
console.log("\nMarkdown:\n");
console.log(
  "| chunk | round | order | raw put ms | tus ms | chunked puts ms | multipart ms | routed ms | put ÷ tus | chunked ÷ tus | " +
    "server CPU s: put | tus | chunked | multipart | routed |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
const fixed = (value: number | null, digits: number) => (value === null ? "—" : value.toFixed(digits));
for (const p of measurement.pairs) {
  console.log(
    `| ${p.chunkMiB} MiB | ${p.round} | ${p.order.join(" → ")} | ${fixed(p.rawPutMs, 0)} | ${fixed(p.uploadMs, 0)} | ` +
      `${fixed(p.chunkedMs, 0)} | ${fixed(p.multipartMs, 0)} | ${fixed(p.routedMs, 0)} | ${(p.rawPutMs / p.uploadMs).toFixed(2)} | ` +
      `${(p.chunkedMs / p.uploadMs).toFixed(2)} | ${fixed(p.rawPutCpu, 2)} | ${fixed(p.uploadCpu, 2)} | ` +
      `${fixed(p.chunkedCpu, 2)} | ${fixed(p.multipartCpu, 2)} | ${fixed(p.routedCpu, 2)} |`,
  );
}
console.log(`appended to ${history.file}`);
