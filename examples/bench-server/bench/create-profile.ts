// `pnpm bench:create-profile`: where a warm create's CPU goes. Starts the bench server, then, paced like bench:table's
// warm block (60 ms after each request), reads the workerd processes' CPU per request for F (GET /floor/http), the
// least a create can be (a tools/call to /floor/http-post-write: one parse, one committed row in a warm object) and
// creates on /mcp-counted that a prepared runner serves (counted), then takes a V8 CPU profile through wrangler dev's
// inspector over `PROFILE_CREATES` (300) such creates and prints self time by function (top 40). Shares, not absolute
// times, compare across a loaded machine. PROFILE_OUT=<file> also writes the .cpuprofile.
import { groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, log, port } from "./common.ts";
import { printHottest, profileDuring, selfTimes } from "./cpu-profile.ts";
import { postFloorClient } from "./floor.ts";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";

const creates = Number(process.env.PROFILE_CREATES ?? 300);
const pause = () => new Promise((resolve) => setTimeout(resolve, 60));

await withServer(port, async (server) => {
  const origin = server.origin;
  const client = benchClient(`${origin}/mcp-counted`);
  const create = async () => {
    await client.startTask("bench_steps", { steps: 1, payloadBytes: 0 });
    await pause();
  };
  const least = postFloorClient(origin, "/floor/http-post-write", "tools/call");
  const params = { name: "bench_steps", arguments: { steps: 1, payloadBytes: 0 }, _meta: client.envelope() };
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const perRequest = async (n: number, one: () => Promise<unknown>) => {
    const before = cpu();
    for (let i = 0; i < n; i++) await one();
    return ((cpu() - before) * 1000) / n;
  };
  for (let i = 0; i < 60; i++) await create();
  const counts = async (reset: boolean) =>
    (await (await fetch(`${origin}/bench/counts${reset ? "?reset=1" : ""}`)).json()) as {
      preparedCreates: number;
      calls: Record<string, number>;
    };
  for (let round = 0; round < 3; round++) {
    const f = await perRequest(100, async () => {
      await (await fetch(`${origin}/floor/http`)).text();
      await pause();
    });
    const l = await perRequest(100, async () => {
      await least(params);
      await pause();
    });
    await counts(true);
    const c = await perRequest(100, create);
    const served = await counts(true);
    log(
      `round ${round + 1}: workerd CPU per request: F ${f.toFixed(2)} ms, least create ${l.toFixed(2)} ms, ` +
        `warm create ${c.toFixed(2)} ms (${served.preparedCreates} of ${served.calls.create} served by a prepared runner; ` +
        `CPU after the reply included: the task's run and the refill)`,
    );
  }
  const profile = await profileDuring(server.spec.inspectorPort, async () => {
    for (let i = 0; i < creates; i++) await create();
  });
  const times = selfTimes(profile);
  console.log(`${creates} warm creates: ${times.total} samples, ${times.total - times.idle} not idle`);
  printHottest(times);
});
