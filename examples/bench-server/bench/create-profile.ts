// `pnpm bench:create-profile`: where a warm create's CPU goes. Starts the bench server, then, paced like bench:table's
// warm block (60 ms after each request), reads the workerd processes' CPU per request for F (GET /floor/http), the
// least a create can be (a tools/call to /floor/http-post-write: one parse, one committed row in a warm object) and
// creates on /mcp-counted that a prepared runner serves (counted), then takes a V8 CPU profile through wrangler dev's
// inspector over `PROFILE_CREATES` (300) such creates and prints self time by function (top 40). Shares, not absolute
// times, compare across a loaded machine. PROFILE_OUT=<file> also writes the .cpuprofile.
import { writeFileSync } from "node:fs";
import { DevToolsSession, groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, log, port } from "./common.ts";
import { postFloorClient } from "./floor.ts";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";

const creates = Number(process.env.PROFILE_CREATES ?? 300);
const pause = () => new Promise((resolve) => setTimeout(resolve, 60));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

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
  const session = await DevToolsSession.open(server.spec.inspectorPort);
  try {
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 50 });
    await session.call("Profiler.start");
    for (let i = 0; i < creates; i++) await create();
    const { profile } = await session.call<{ profile: Profile }>("Profiler.stop");
    if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map<string, number>();
    for (const id of profile.samples) {
      const frame = byId.get(id)!.callFrame;
      const key = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + 1);
    }
    const total = profile.samples.length;
    const idle = self.get("(idle) :0") ?? 0;
    console.log(`${creates} warm creates: ${total} samples, ${total - idle} not idle`);
    for (const [key, count] of [...self.entries()].toSorted((a, b) => b[1] - a[1]).slice(0, 40)) {
      console.log(
        `${((count / (total - idle)) * 100).toFixed(1).padStart(5)} %  ${count.toString().padStart(6)}  ${key}`,
      );
    }
  } finally {
    session.close();
  }
});
