// `pnpm bench:steps-profile`: where a step's CPU goes. Starts the bench server, warms it up, then takes a V8 CPU
// profile of workerd through wrangler dev's inspector (port + 1000) while `PROFILE_TASKS` (3) tasks of
// `PROFILE_STEPS` (10,000) steps run one after another on /mcp-quiet, and prints self time by function (top 40),
// with the workerd processes' CPU time per step over the same window. Shares, not absolute times, are what compare
// across a loaded machine. PROFILE_OUT=<file> also writes the .cpuprofile (open it in Chrome DevTools).
import { writeFileSync } from "node:fs";
import { DevToolsSession, groupMembers } from "@durable-mcp/test-harness";
import { cpuSeconds, port } from "./common.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer } from "./server.ts";

const tasks = Number(process.env.PROFILE_TASKS ?? 3);
const steps = Number(process.env.PROFILE_STEPS ?? 10_000);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  /** Samples by source line (1-based) of this node's function. */
  positionTicks?: Array<{ line: number; ticks: number }>;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

await withServer(port, async (server) => {
  const client = benchClient(`${server.origin}/mcp-quiet`);
  const run = async (n: number) => {
    const taskId = (await client.startTask("bench_steps", { steps: n, payloadBytes: 0 })).taskId;
    resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
  };
  for (let i = 0; i < 3; i++) await run(2_000);
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const session = await DevToolsSession.open(server.spec.inspectorPort);
  try {
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 50 });
    await session.call("Profiler.start");
    const cpuBefore = cpu();
    const begin = performance.now();
    for (let i = 0; i < tasks; i++) await run(steps);
    const wallMs = performance.now() - begin;
    const cpuMs = (cpu() - cpuBefore) * 1000;
    const { profile } = await session.call<{ profile: Profile }>("Profiler.stop");
    if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map<string, number>();
    for (const id of profile.samples) {
      const frame = byId.get(id)!.callFrame;
      const file = frame.url.split("/").pop() ?? "";
      const key = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + 1);
    }
    const total = profile.samples.length;
    const idle = self.get("(idle) :0") ?? 0;
    console.log(
      `${tasks} × ${steps} steps: wall ${wallMs.toFixed(0)} ms (${((wallMs * 1000) / (tasks * steps)).toFixed(1)} µs/step), ` +
        `workerd CPU ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / (tasks * steps)).toFixed(1)} µs/step, both processes), ` +
        `${total} samples, ${total - idle} not idle`,
    );
    // The hottest lines of the hottest functions (PROFILE_LINES=n functions), from the nodes' positionTicks.
    const lines = new Map<string, Map<number, number>>();
    for (const node of profile.nodes) {
      const frame = node.callFrame;
      const key = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}`;
      const byLine = lines.get(key) ?? new Map<number, number>();
      for (const { line, ticks } of node.positionTicks ?? []) byLine.set(line, (byLine.get(line) ?? 0) + ticks);
      lines.set(key, byLine);
    }
    const hottest = [...self.entries()].toSorted((a, b) => b[1] - a[1]);
    for (const [key] of hottest.slice(0, Number(process.env.PROFILE_LINES ?? 0))) {
      const byLine = [...(lines.get(key) ?? new Map<number, number>()).entries()].toSorted((a, b) => b[1] - a[1]);
      console.log(
        `${key}: ${byLine
          .slice(0, 8)
          .map(([line, ticks]) => `line ${line} ×${ticks}`)
          .join(", ")}`,
      );
    }
    for (const [key, count] of hottest.slice(0, 40)) {
      console.log(
        `${((count / (total - idle)) * 100).toFixed(1).padStart(5)} %  ${count.toString().padStart(6)}  ${key}`,
      );
    }
  } finally {
    session.close();
  }
});
