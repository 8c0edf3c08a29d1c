// `pnpm bench:uploads`: the upload row alone (bench/files-upload.ts) on a fresh `wrangler dev`: tus-js-client
// against a raw put of the same bytes through the same Worker, and against chunked puts and a multipart upload of
// the same chunks (what chunking itself costs), client wall time, interleaved, 3 rounds at 1, 5 and 50 MiB chunks of
// 1 GiB, with the server's CPU per transfer. Prints the table and a Markdown block (commit, command,
// load) for a dated summary under docs/bench-results/, and appends the run to results/bench-uploads-history.jsonl.
//   BENCH_PORT (8795), BENCH_UPLOAD_MIB (1024; 256 with BENCH_QUICK=1), BENCH_UPLOAD_CHUNKS ("1,5,50"),
//   BENCH_UPLOAD_ROUNDS (3), BENCH_LABEL (names the build measured)
import { loadavg } from "node:os";
import { groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, port } from "./common.ts";
import { fileRowsTable } from "./files.ts";
import { measureUploads, MIB, UPLOAD_FLOOR_NOTE, uploadSettings, type UploadPair } from "./files-upload.ts";
import { History, libraryUncommittedChanges, runHeader, type RunHeader } from "./history.ts";
import { withServer } from "./server.ts";

interface Entry extends RunHeader {
  uncommitted: boolean;
  mib: number;
  pairs: UploadPair[];
}

const settings = uploadSettings();
const loadBefore = loadavg();
const loadDuring: number[] = [];
const measurement = await withServer(port, async (server) => {
  // wrangler dev runs two workerd processes (a proxy and the Worker's runtime): count both.
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  return measureUploads(
    server.origin,
    settings,
    (message) => {
      loadDuring.push(loadavg()[0]!);
      console.error(`${message} (load ${loadavg()[0]!.toFixed(2)})`);
    },
    cpu,
  );
});

const entry: Entry = {
  ...runHeader(loadBefore, process.env.BENCH_QUICK === "1"),
  uncommitted: libraryUncommittedChanges(),
  mib: settings.sizeBytes / MIB,
  pairs: measurement.pairs,
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
console.log("\nMarkdown:\n");
console.log(
  "| chunk | round | order | raw put ms | tus ms | chunked puts ms | multipart ms | put ÷ tus | chunked ÷ tus | " +
    "server CPU s: put | tus | chunked | multipart |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
const fixed = (value: number | null, digits: number) => (value === null ? "—" : value.toFixed(digits));
for (const p of measurement.pairs) {
  console.log(
    `| ${p.chunkMiB} MiB | ${p.round} | ${p.order.join(" → ")} | ${fixed(p.rawPutMs, 0)} | ${fixed(p.uploadMs, 0)} | ` +
      `${fixed(p.chunkedMs, 0)} | ${fixed(p.multipartMs, 0)} | ${(p.rawPutMs / p.uploadMs).toFixed(2)} | ` +
      `${(p.chunkedMs / p.uploadMs).toFixed(2)} | ${fixed(p.rawPutCpu, 2)} | ${fixed(p.uploadCpu, 2)} | ` +
      `${fixed(p.chunkedCpu, 2)} | ${fixed(p.multipartCpu, 2)} |`,
  );
}
console.log(`appended to ${history.file}`);
