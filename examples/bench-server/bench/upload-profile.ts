// `pnpm bench:upload-profile`: where a tus upload's CPU goes. Starts the bench server, then for one file of
// `BENCH_UPLOAD_MIB` (256) MiB in `PROFILE_CHUNK_MIB` (1) MiB PATCHes reads each workerd process's CPU over a raw put
// and a tus upload of the same bytes (the proxy process only forwards the bytes; the runtime process runs the
// Worker, the FileRunner and the local R2 and SQLite), then takes a V8 CPU profile through wrangler dev's inspector
// over one more tus upload and prints self time by function (top 40). Work outside JavaScript (SQLite, the R2
// simulation, the streams' native plumbing) shows as "(program)" and, for memory, "(garbage collector)".
// PROFILE_OUT=<file> also writes the .cpuprofile.
import { groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, port } from "./common.ts";
import { printHottest, profileDuring, selfTimes } from "./cpu-profile.ts";
import { deleteUpload, MIB, randomFile, rawPut, tusUpload } from "./files-upload.ts";
import { withServer } from "./server.ts";

const mib = Number(process.env.BENCH_UPLOAD_MIB ?? 256);
const chunkBytes = Math.round(Number(process.env.PROFILE_CHUNK_MIB ?? 1) * MIB);
const perGiB = (seconds: number) => ((seconds * 1024) / mib).toFixed(1);

await withServer(port, async (server) => {
  const origin = server.origin;
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  const cpuEach = () => workerd.map((member) => cpuSeconds(member.pid));
  const measure = async (name: string, work: () => Promise<unknown>) => {
    const before = cpuEach();
    const started = performance.now();
    await work();
    const ms = performance.now() - started;
    const spent = cpuEach().map((after, i) => after - before[i]!);
    console.log(
      `${name}: ${ms.toFixed(0)} ms; workerd CPU-s per GiB by process ${spent.map(perGiB).join(" + ")} = ` +
        `${perGiB(spent.reduce((a, b) => a + b, 0))}`,
    );
  };
  const warm = randomFile(16 * MIB);
  await deleteUpload((await tusUpload(origin, warm.bytes, warm.sha256, chunkBytes)).url);
  const file = randomFile(mib * MIB);
  await measure(`raw put of ${mib} MiB`, () => rawPut(origin, file.bytes));
  await measure(`tus upload of ${mib} MiB in ${chunkBytes / MIB} MiB PATCHes`, async () => {
    await deleteUpload((await tusUpload(origin, file.bytes, file.sha256, chunkBytes)).url);
  });
  const profile = await profileDuring(server.spec.inspectorPort, async () => {
    await deleteUpload((await tusUpload(origin, file.bytes, file.sha256, chunkBytes)).url);
  });
  const times = selfTimes(profile);
  console.log(`profiled tus upload: ${times.total} samples, ${times.total - times.idle} not idle`);
  printHottest(times);
});
