// `pnpm bench:get-wait`: the worst tasks/get wait during a 10,000-step run on a server that has already served
// many tasks, as the full bench measures it (its step rows come after the wire rows' thousand-odd tasks), without
// the six minutes of the full bench. First `GET_WAIT_WARM` (1,500) one-step tasks, `GET_WAIT_WARM_PARALLEL` (4) at a
// time, half on /mcp and half on /mcp-quiet (new objects, as the wire rows make), then the get-wait measurement of
// bench/steps.ts (5 runs). GET_WAIT_WARM=0 measures a fresh server, as `bench:steps` does.
// GET_WAIT_PROFILE=1 also takes a V8 CPU profile of workerd during the get-wait runs and prints the longest
// stretches the isolate spent in one function without yielding to anything else (a garbage collection, say).
import { loadavg } from "node:os";
import { DevToolsSession } from "@durable-mcp/test-harness";
import { port } from "./common.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer } from "./server.ts";
import { ms } from "./stats.ts";
import { measureGetDuringRun } from "./steps.ts";

const warm = Number(process.env.GET_WAIT_WARM ?? 1500);
const parallel = Number(process.env.GET_WAIT_WARM_PARALLEL ?? 4);
const runs = Number(process.env.GET_WAIT_RUNS ?? 5);
const profile = process.env.GET_WAIT_PROFILE === "1";
/** Seconds to wait between the warm-up and the measurement (e.g. until workerd has evicted the warm-up's objects). */
const pauseS = Number(process.env.GET_WAIT_PAUSE_S ?? 0);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

const loadBefore = loadavg();
await withServer(port, async (server) => {
  const clients = [benchClient(`${server.origin}/mcp`), benchClient(`${server.origin}/mcp-quiet`)];
  const warmStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < warm) {
        const client = clients[next++ % 2]!;
        const taskId = (await client.startTask("bench_steps", { steps: 1, payloadBytes: 0 })).taskId;
        resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
      }
    }),
  );
  console.log(`[get-wait] ${warm} one-step tasks first: ${((performance.now() - warmStart) / 1000).toFixed(1)} s`);
  if (pauseS > 0) await new Promise((resolve) => setTimeout(resolve, pauseS * 1000));
  const session = profile ? await DevToolsSession.open(server.spec.inspectorPort) : null;
  let profileStartedAt = 0;
  if (session) {
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 100 });
    await session.call("Profiler.start");
    profileStartedAt = performance.now();
  }
  // Each tasks/get's send and answer, to line the slowest up with the profile.
  const gets: Array<{ begin: number; end: number }> = [];
  const quiet = clients[1]!;
  const getTask = quiet.getTask.bind(quiet);
  quiet.getTask = async (...args: Parameters<typeof getTask>) => {
    const begin = performance.now();
    try {
      return await getTask(...args);
    } finally {
      gets.push({ begin, end: performance.now() });
    }
  };
  const result = await measureGetDuringRun(quiet, 10_000, runs);
  console.log(
    `[get-wait] load ${loadBefore.map((l) => l.toFixed(2)).join(" ")} → ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${runs} runs of 10,000 steps: worst wait between steps ${ms(result.worstBetweenMs)}, ` +
      `worst of all ${ms(result.worstMs)}, p50 ${ms(result.gets.p50)}, ${result.sawWorking} gets saw it working`,
  );
  if (session) {
    const { profile: cpu } = await session.call<{
      profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    }>("Profiler.stop");
    session.close();
    const byId = new Map(cpu.nodes.map((node) => [node.id, node]));
    // Consecutive samples in one function: how long the isolate stayed there, and from when (ms since the start).
    const stretches: Array<{ what: string; ms: number; at: number }> = [];
    let current = "";
    let length = 0;
    let at = 0;
    let clock = 0;
    for (let i = 0; i < cpu.samples.length; i++) {
      const frame = byId.get(cpu.samples[i]!)!.callFrame;
      const what = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}`;
      const delta = (cpu.timeDeltas[i + 1] ?? 0) / 1000;
      clock += (cpu.timeDeltas[i] ?? 0) / 1000;
      if (what === current) length += delta;
      else {
        if (current) stretches.push({ what: current, ms: length, at });
        current = what;
        length = delta;
        at = clock;
      }
    }
    // The slowest gets, and what the isolate did meanwhile (non-idle stretches over 2 ms that overlap them).
    for (const get of gets.toSorted((a, b) => b.end - b.begin - (a.end - a.begin)).slice(0, 4)) {
      const from = get.begin - profileStartedAt;
      const to = get.end - profileStartedAt;
      const during = stretches
        .filter((s) => s.at < to && s.at + s.ms > from && s.ms >= 2 && !s.what.startsWith("(idle)"))
        .map((s) => `${s.what} ${ms(s.ms)} @${(s.at - from).toFixed(0)}`);
      console.log(`[get-wait] a get of ${ms(get.end - get.begin)} at ${from.toFixed(0)} ms: ${during.join("; ")}`);
    }
    const gc = stretches.filter((s) => s.what.startsWith("(garbage collector)"));
    console.log(
      `[get-wait] GC: ${gc.length} stretches, ${ms(gc.reduce((sum, s) => sum + s.ms, 0))} in all; longest stretches:`,
    );
    for (const s of stretches.toSorted((a, b) => b.ms - a.ms).slice(0, 12)) {
      console.log(`  ${ms(s.ms).padStart(9)}  ${s.what}`);
    }
  }
});
