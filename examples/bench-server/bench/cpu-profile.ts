// A V8 CPU profile of workerd taken through wrangler dev's inspector, and its samples tallied by function (self
// time), for the profiling benches (bench:steps-profile, bench:create-profile). PROFILE_OUT=<file> also writes the
// .cpuprofile (open it in Chrome DevTools).
import { writeFileSync } from "node:fs";
import { DevToolsSession } from "@durable-mcp/test-harness";

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  /** Samples by source line (1-based) of this node's function. */
  positionTicks?: Array<{ line: number; ticks: number }>;
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `name file:line` of a node's function: the key self time is tallied by. */
export function frameKey(node: ProfileNode): string {
  const frame = node.callFrame;
  return `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}`;
}

/** Profiles workerd (sampling every 50 µs) while `work` runs. */
export async function profileDuring(inspectorPort: number, work: () => Promise<void>): Promise<Profile> {
  const session = await DevToolsSession.open(inspectorPort);
  try {
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 50 });
    await session.call("Profiler.start");
    await work();
    const { profile } = await session.call<{ profile: Profile }>("Profiler.stop");
    if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
    return profile;
  } finally {
    session.close();
  }
}

/** Samples per function (self time), hottest first, with the total and the idle samples. */
export function selfTimes(profile: Profile): { hottest: Array<[string, number]>; total: number; idle: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  for (const id of profile.samples) {
    const key = frameKey(byId.get(id)!);
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  return {
    hottest: [...self.entries()].toSorted((a, b) => b[1] - a[1]),
    total: profile.samples.length,
    idle: self.get("(idle) :0") ?? 0,
  };
}

/** The `count` hottest functions as a share of the samples that were not idle. */
export function printHottest(times: ReturnType<typeof selfTimes>, count = 40): void {
  for (const [key, samples] of times.hottest.slice(0, count)) {
    console.log(
      `${((samples / (times.total - times.idle)) * 100).toFixed(1).padStart(5)} %  ${samples.toString().padStart(6)}  ${key}`,
    );
  }
}
