// CPU per byte of the upload's resumable SHA-256 inside workerd: a fresh `wrangler dev` of the bench server, then
// `rounds` × `GET /floor/sha256?mib=64` (the route behind the hash row of `pnpm bench`). Beside the route's own
// figures (performance.now(), which under wrangler dev is wall-clock time: it counts the time the scheduler gives
// to other processes), the workerd processes' CPU time over the request from /proc (utime + stime, 10 ms ticks):
// on this shared 2-core machine that is the figure that does not move with the neighbours' load. The request hashes
// with ours and then with the native digest; their sum is what /proc sees, the split is the route's.
// With BENCH_FILES=1 it then runs the files rows of `pnpm bench` (`measureFiles`, bench/files.ts) on the same
// server, so a before/after of the hash can show its effect on the upload (see docs/performance.md).
//   BENCH_PORT=… [BENCH_FILES=1] node --conditions=durable-mcp-source bench/sha256-worker.ts [rounds=3]
import { loadavg } from "node:os";
import { groupMembers } from "@durable-mcp/test-harness";
import { measureFiles } from "./files.ts";
import { cpuSeconds, port } from "./common.ts";
import { withServer } from "./server.ts";
import { median } from "./stats.ts";

const MIB = 1024 * 1024;
const rounds = Number(process.argv[2] ?? 3);

const { runs, files } = await withServer(port, async (server) => {
  // wrangler dev runs two workerd processes (a proxy and the Worker's runtime): count both.
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const workerdCpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const out: Array<{ ours: number; native: number; cpuBoth: number }> = [];
  for (let i = 0; i < rounds; i++) {
    const before = workerdCpu();
    const response = await fetch(`${server.origin}/floor/sha256?mib=64`);
    const run = (await response.json()) as { mib: number; resumableMs: number; nativeMs: number };
    const cpu = workerdCpu() - before;
    const nsPerByte = (ms: number) => (ms * 1e6) / (run.mib * MIB);
    out.push({ ours: nsPerByte(run.resumableMs), native: nsPerByte(run.nativeMs), cpuBoth: nsPerByte(cpu * 1000) });
  }
  const measured = process.env.BENCH_FILES === "1" ? await measureFiles(server.origin, (m) => console.error(m)) : null;
  return { runs: out, files: measured };
});
const round2 = (value: number) => Math.round(value * 100) / 100;
console.log(
  JSON.stringify({
    load: loadavg().map(round2),
    wall_ns_per_byte: {
      ours: round2(median(runs.map((r) => r.ours))),
      native: round2(median(runs.map((r) => r.native))),
    },
    // Ours alone in CPU time: the request's CPU less the native digest's share (its wall time, an upper bound).
    cpu_ns_per_byte: {
      both: round2(median(runs.map((r) => r.cpuBoth))),
      ours: round2(median(runs.map((r) => r.cpuBoth - r.native))),
    },
    rounds: runs.map((r) => ({ ours: round2(r.ours), native: round2(r.native), cpu_both: round2(r.cpuBoth) })),
    files: files && {
      upload_ratio: round2(files.uploadRatio),
      upload_round_ratios: files.rounds.map((r) => round2(r.rawPutMs / r.uploadMs)),
      download_ratio: round2(files.downloadRatio),
      download_round_ratios: files.rounds.map((r) => round2(r.rawGetMs / r.downloadMs)),
      upload_MBps: round2(files.uploadMBps),
      raw_put_MBps: round2(files.rawPutMBps),
      hash_row_ns_per_byte: {
        ours: round2((files.hashMsPerMiB.resumable * 1e6) / MIB),
        native: round2((files.hashMsPerMiB.native * 1e6) / MIB),
      },
    },
  }),
);
