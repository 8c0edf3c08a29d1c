// CPU per byte of the upload's resumable SHA-256 (packages/durable-mcp-server/src/file-runner/sha256-state.ts) in Node,
// beside Node's native digest, on the same bytes: the quick loop for working on the hash itself. The figure that
// counts is the Worker's (`GET /floor/sha256`, the hash row of `pnpm bench`); Node 22's V8 is older than workerd's,
// near enough for relative figures. Prints one JSON line: medians of `rounds` × `mib` MiB, in ns per byte of this
// thread's CPU time (`process.cpuUsage`, so time the scheduler gave to other processes on a shared machine is not
// counted) and of wall-clock time.
//   node --conditions=durable-mcp-source bench/sha256.ts [module] [mib=64] [rounds=5]
//   module: a copy of sha256-state.ts to time instead of the library's (e.g. an older commit's, for a before/after)
import { createHash, randomFillSync } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "./stats.ts";

const MIB = 1024 * 1024;
const [modulePath, mibArg, roundsArg] = process.argv.slice(2);
const mib = Number(mibArg ?? 64);
const rounds = Number(roundsArg ?? 5);
const source = modulePath
  ? pathToFileURL(resolve(modulePath)).href
  : new URL("../../../packages/durable-mcp-server/src/file-runner/sha256-state.ts", import.meta.url).href;
const { Sha256 } = (await import(
  source
)) as typeof import("../../../packages/durable-mcp-server/src/file-runner/sha256-state.ts");

// 1 MiB pieces, as an upload's parts arrive (body chunks are smaller; the 64-byte tail of each is the slow path).
const chunk = randomFillSync(new Uint8Array(MIB));
const nsPerByte = (ms: number) => (ms * 1e6) / (mib * MIB);

/** CPU (user + system) and wall-clock ns per byte of `work`. */
function time(work: () => void): { cpu: number; wall: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  work();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { cpu: nsPerByte((used.user + used.system) / 1000), wall: nsPerByte(wall) };
}

// Both once, and checked against each other, before anything is timed (warms the JIT too).
const check = new Sha256();
const reference = createHash("sha256");
for (let i = 0; i < 8; i++) {
  check.update(chunk.subarray(i, MIB - i));
  reference.update(chunk.subarray(i, MIB - i));
}
if (Buffer.from(check.digest()).toString("hex") !== reference.digest("hex")) throw new Error("digests differ");

const ours: Array<{ cpu: number; wall: number }> = [];
const native: Array<{ cpu: number; wall: number }> = [];
for (let round = 0; round < rounds; round++) {
  ours.push(
    time(() => {
      const hash = new Sha256();
      for (let i = 0; i < mib; i++) hash.update(chunk);
      hash.digest();
    }),
  );
  native.push(
    time(() => {
      const digest = createHash("sha256");
      for (let i = 0; i < mib; i++) digest.update(chunk);
      digest.digest();
    }),
  );
}
const round2 = (values: number[]) => values.map((value) => Math.round(value * 100) / 100);
console.log(
  JSON.stringify({
    module: modulePath ?? "library",
    node: process.version,
    v8: process.versions.v8,
    mib,
    cpu_ns_per_byte: { ours: median(ours.map((run) => run.cpu)), native: median(native.map((run) => run.cpu)) },
    wall_ns_per_byte: { ours: median(ours.map((run) => run.wall)), native: median(native.map((run) => run.wall)) },
    cpu_rounds: { ours: round2(ours.map((run) => run.cpu)), native: round2(native.map((run) => run.cpu)) },
  }),
);
