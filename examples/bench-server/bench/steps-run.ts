// `pnpm bench:steps`: the step engine's rows of the bench (bench/steps.ts) with the two floors measured in the same
// run, and nothing else — about a minute, so that it can be repeated and interleaved with other builds. Prints the
// rows next to the previous run's and appends this run to results/bench-steps-history.jsonl (bench/history.ts).
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the pairs), BENCH_LABEL (names the build in the history)
import { loadavg } from "node:os";
import { groupMembers } from "@durable-mcp/test-harness";
import { port, scale } from "./common.ts";
import { History, runHeader, type RunHeader } from "./history.ts";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";
import { summarize } from "./stats.ts";
import { machine, runSource, writeSummary } from "./summary.ts";
import { cpuMsOf, measureStepRows, stepRowsTable, type StepRowsWithFloors } from "./steps.ts";

async function httpP50(origin: string, path: string, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const begin = performance.now();
    const text = await (await fetch(`${origin}${path}`)).text();
    if (text !== "ok") throw new Error(`${path} answered ${text}`);
    samples.push(performance.now() - begin);
  }
  return summarize(samples).p50;
}

const source = runSource("bench:steps");
const loadBefore = loadavg();
const measured = await withServer(port, async (server) => {
  await httpP50(server.origin, "/floor/http", 50);
  const httpFloorMs = await httpP50(server.origin, "/floor/http", Math.round(400 * scale));
  const newObjectFloorMs = await httpP50(server.origin, "/floor/http-write", Math.round(150 * scale));
  // wrangler dev runs two workerd processes (its proxy and the runtime): their CPU time, load-stable, beside wall time.
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  const cpuMs = workerd.length > 0 ? cpuMsOf(workerd.map((member) => member.pid)) : undefined;
  const rows = await measureStepRows(benchClient(`${server.origin}/mcp-quiet`), scale, cpuMs);
  return { httpFloorMs, newObjectFloorMs, ...rows };
});

type Entry = RunHeader & StepRowsWithFloors;
const history = new History<Entry>("bench-steps-history.jsonl");
const previous = history.previous();
const entry: Entry = { ...runHeader(loadBefore, scale < 1), ...measured };
history.append(entry);

console.log(
  `\nStep engine (bench:steps), ${entry.label ?? ""} ${entry.date}, ${entry.commit ?? "?"}, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")}\n`,
);
const printed = stepRowsTable(entry, previous);
console.log(printed);
// The dated summary the docs cite (results/ is not in git).
const summary = writeSummary({
  section: "steps",
  quick: entry.quick,
  source,
  machine: machine(),
  loadBefore,
  loadAfter: entry.loadAfter,
  markdown: `## Step engine rows\n\n\`\`\`\n${stepRowsTable(entry)}\n\`\`\`\n`,
  data: measured,
});
console.log(`\n[bench:steps] appended to ${history.file}; summary ${summary.markdown}`);
