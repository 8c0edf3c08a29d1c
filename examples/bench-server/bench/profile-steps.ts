// `pnpm bench:steps-profile`: where a step's CPU goes. Starts the bench server, warms it up, then takes a V8 CPU
// profile of workerd through wrangler dev's inspector (port + 1000) while `PROFILE_TASKS` (3) tasks of
// `PROFILE_STEPS` (10,000) steps run one after another on /mcp-quiet, and prints self time by function (top 40),
// with the workerd processes' CPU time per step over the same window. Shares, not absolute times, are what compare
// across a loaded machine. PROFILE_OUT=<file> also writes the .cpuprofile (open it in Chrome DevTools).
import { groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, port } from "./common.ts";
import { frameKey, printHottest, profileDuring, selfTimes } from "./cpu-profile.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer } from "./server.ts";

const tasks = Number(process.env.PROFILE_TASKS ?? 3);
const steps = Number(process.env.PROFILE_STEPS ?? 10_000);

await withServer(port, async (server) => {
  const client = benchClient(`${server.origin}/mcp-quiet`);
  const run = async (n: number) => {
    const taskId = (await client.startTask("bench_steps", { steps: n, payloadBytes: 0 })).taskId;
    resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
  };
  for (let i = 0; i < 3; i++) await run(2_000);
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const cpuBefore = cpu();
  const begin = performance.now();
  const profile = await profileDuring(server.spec.inspectorPort, async () => {
    for (let i = 0; i < tasks; i++) await run(steps);
  });
  const wallMs = performance.now() - begin;
  const cpuMs = (cpu() - cpuBefore) * 1000;
  const times = selfTimes(profile);
  console.log(
    `${tasks} × ${steps} steps: wall ${wallMs.toFixed(0)} ms (${((wallMs * 1000) / (tasks * steps)).toFixed(1)} µs/step), ` +
      `workerd CPU ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / (tasks * steps)).toFixed(1)} µs/step, both processes), ` +
      `${times.total} samples, ${times.total - times.idle} not idle`,
  );
  // The hottest lines of the hottest functions (PROFILE_LINES=n functions), from the nodes' positionTicks.
  const lines = new Map<string, Map<number, number>>();
  for (const node of profile.nodes) {
    const key = frameKey(node);
    const byLine = lines.get(key) ?? new Map<number, number>();
    for (const { line, ticks } of node.positionTicks ?? []) byLine.set(line, (byLine.get(line) ?? 0) + ticks);
    lines.set(key, byLine);
  }
  for (const [key] of times.hottest.slice(0, Number(process.env.PROFILE_LINES ?? 0))) {
    const byLine = [...(lines.get(key) ?? new Map<number, number>()).entries()].toSorted((a, b) => b[1] - a[1]);
    console.log(
      `${key}: ${byLine
        .slice(0, 8)
        .map(([line, ticks]) => `line ${line} ×${ticks}`)
        .join(", ")}`,
    );
  }
  printHottest(times);
});
